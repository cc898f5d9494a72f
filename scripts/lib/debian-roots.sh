# Sourced by scripts/build-pi and Tests/System/support/debian_roots.py: Debian roots of our own, made once
# with mmdebstrap and cached outside the checkout (a fresh clone on the same machine reuses them; a new
# machine makes them):
#   sid-amd64-build    a Debian sid amd64 chroot with swiftlang 6.2 (only sid has Swift >= 6.2), lld and clang:
#                      where lightorgan is compiled, natively for amd64 and cross for aarch64
#   sid-arm64-sysroot  sid's arm64 libraries, headers and static Swift runtime, unpacked without emulation
#                      (--variant=extract): what the cross build links against; also the Pi's kernel and busybox
#   bookworm-arm64, trixie-arm64   plain Debian arm64 roots (run through qemu-user) where the package is
#                      installed with apt, as on Raspberry Pi OS bookworm and trixie
#   bookworm-amd64     the same for a laptop (native); bookworm-armhf (--variant=essential): a 32-bit Raspberry
#                      Pi OS's userland, which install.sh must refuse (ensure_root SUITE ARCH [VARIANT])
# This machine's own apt suite is never touched.
set -euo pipefail

cache_root=${LIGHTORGAN_CACHE:-$HOME/.cache/lightorgan}
debian_mirror=${LIGHTORGAN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
build_chroot=$cache_root/sid-amd64-build
arm64_sysroot=$cache_root/sid-arm64-sysroot
# sid's Release file is past its Valid-Until date on this kind of machine: apt must not refuse it.
sid_apt_options=(--aptopt='Acquire::Check-Valid-Until "false"')

build_chroot_packages=swiftlang,lld,clang,git,pkg-config,ca-certificates,libc6-dev,libgpiod-dev,libasound2-dev,libavahi-client-dev,libyaml-dev,libmosquitto-dev
arm64_sysroot_packages=swiftlang,libc6-dev,libstdc++-16-dev,libgcc-16-dev,libgpiod-dev,libasound2-dev,libavahi-client-dev,libyaml-dev,libmosquitto-dev,libmosquitto1,libpicohttpparser1,libssl-dev,libssl3t64,linux-image-arm64,busybox-static

# make_root DIRECTORY MMDEBSTRAP-ARGUMENTS...: makes the root once. It is built beside its final place and
# moved there only when complete, so an interrupted run never leaves a half-made root that looks finished;
# the arguments are recorded, and a root made with other arguments is made again.
make_root() {
    local directory=$1
    shift
    local recipe="$*"
    mkdir -p "$cache_root"
    # Two runs on one machine (scripts/build-pi and the system tests) take turns on each root.
    exec {lock}>"$directory.lock"
    flock "$lock"
    if [[ -f $directory/.lightorgan-recipe && $(cat "$directory/.lightorgan-recipe") == "$recipe" ]]; then
        exec {lock}>&-
        return 0
    fi
    install_missing mmdebstrap
    say "making $(basename "$directory") with mmdebstrap (once; a few minutes)"
    rm -rf "$directory" "$directory.partial"
    local started=$SECONDS
    mmdebstrap --quiet "$@" "$directory.partial" "$debian_mirror" >&2
    echo "$recipe" >"$directory.partial/.lightorgan-recipe"
    mv "$directory.partial" "$directory"
    say "made $(basename "$directory") in $((SECONDS - started)) s ($(du -sh "$directory" | cut -f1))"
    exec {lock}>&-
}

ensure_build_chroot() {
    make_root "$build_chroot" --variant=minbase --architectures=amd64 "${sid_apt_options[@]}" \
        --include="$build_chroot_packages" sid
    # Swift packages resolve from this machine's local copies: the same git insteadOf rules inside.
    git config --system --get-regexp '^url\..*\.insteadof$' 2>/dev/null | while read -r key value; do
        git config --file "$build_chroot/etc/gitconfig" --replace-all "$key" "$value" "^$(sed 's/[.[\*^$]/\\&/g' <<<"$value")\$"
    done
    git config --file "$build_chroot/etc/gitconfig" safe.directory '*'
    link_libgpiod_statically "$build_chroot" x86_64-linux-gnu
}

ensure_arm64_sysroot() {
    make_root "$arm64_sysroot" --variant=extract --architectures=arm64 "${sid_apt_options[@]}" \
        --include="$arm64_sysroot_packages" sid
    # The extract variant makes no merged-/usr links: lld looks for the loader at /lib/ld-linux-aarch64.so.1.
    local directory
    for directory in bin sbin lib; do
        [[ -e $arm64_sysroot/$directory ]] || ln -s "usr/$directory" "$arm64_sysroot/$directory"
    done
    # swiftc -static-stdlib looks for the static runtime in usr/lib/swift_static; Debian puts it in libexec.
    [[ -e $arm64_sysroot/usr/lib/swift_static ]] || ln -s ../libexec/swift/lib/swift_static "$arm64_sysroot/usr/lib/swift_static"
    link_libgpiod_statically "$arm64_sysroot" aarch64-linux-gnu
    # The extract variant runs no ldconfig: a library whose package ships no link named by its SONAME
    # (libpicohttpparser1, which sid's libmosquitto1 loads) would not load when the binary runs under qemu-user
    # for its manual pages.
    local library soname
    for library in "$arm64_sysroot"/usr/lib/aarch64-linux-gnu/lib*.so.*.*; do
        [[ -L $library ]] && continue
        soname=$(readelf -d "$library" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
        [[ -n $soname && ! -e ${library%/*}/$soname ]] && ln -s "${library##*/}" "${library%/*}/$soname"
    done
    return 0
}

# link_libgpiod_statically ROOT TRIPLET: a libgpiod.pc (in ROOT/usr/lib/lightorgan-pkgconfig) whose library
# folder holds only libgpiod.a, so the linker cannot pick libgpiod.so. One binary then serves bookworm
# (libgpiod 1.6, whose v1 API Debian's arm64 kernel no longer offers: CONFIG_GPIO_CDEV_V1 is off) and
# trixie (libgpiod 2.x) alike. Its paths are under ${prefix}, which SwiftPM moves into PKG_CONFIG_SYSROOT_DIR
# (it leaves literal paths alone).
link_libgpiod_statically() {
    local root=$1 triplet=$2 mine=$BASHPID
    # Written beside their place and moved there: scripts/build-pi and the tests' fetch may make them at once (two
    # cp into one new file: "cannot create regular file: File exists"). ($mine: in the redirection of `cat`,
    # $BASHPID would be that of the process that runs cat.)
    mkdir -p "$root/usr/lib/lightorgan-static-gpiod" "$root/usr/lib/lightorgan-pkgconfig"
    cp "$root/usr/lib/$triplet/libgpiod.a" "$root/usr/lib/lightorgan-static-gpiod/libgpiod.a.$mine"
    mv "$root/usr/lib/lightorgan-static-gpiod/libgpiod.a.$mine" "$root/usr/lib/lightorgan-static-gpiod/libgpiod.a"
    cat >"$root/usr/lib/lightorgan-pkgconfig/libgpiod.pc.$mine" <<PC
prefix=/usr
includedir=\${prefix}/include
libdir=\${prefix}/lib/lightorgan-static-gpiod

Name: libgpiod
Description: libgpiod 2.x, linked statically into lightorgan (LGPL-2.1-or-later)
Version: $(libgpiod_version "$root")
Cflags: -I\${includedir}
Libs: -L\${libdir} -lgpiod
PC
    mv "$root/usr/lib/lightorgan-pkgconfig/libgpiod.pc.$mine" "$root/usr/lib/lightorgan-pkgconfig/libgpiod.pc"
}

# libgpiod_version ROOT: the Debian version of libgpiod-dev unpacked in ROOT (for Built-Using). An extract
# root has no dpkg database; the package's changelog names its version in its first line.
libgpiod_version() {
    zcat "$1/usr/share/doc/libgpiod-dev/changelog.Debian.gz" | head -n 1 | sed -E 's/^[^(]*\(([^)]*)\).*/\1/'
}

# in_build_chroot [--bind HOST-DIR CHROOT-DIR]... -- COMMAND...: runs COMMAND in the build chroot, in a
# private mount namespace (the mounts vanish when it ends, even when it fails). /proc, /dev, the local
# Swift package copies and the arm64 sysroot (at /sysroot) are always there.
in_build_chroot() {
    local binds=(--bind /opt/swift-packages /opt/swift-packages --bind "$arm64_sysroot" /sysroot)
    while [[ $1 == --bind ]]; do
        binds+=("$1" "$2" "$3")
        shift 3
    done
    [[ $1 == -- ]] && shift
    local mounts="mount -t proc proc '$build_chroot/proc'; mount --rbind /dev '$build_chroot/dev';"
    while ((${#binds[@]})); do
        mkdir -p "$build_chroot${binds[2]}"
        mounts+=" mount --bind '${binds[1]}' '$build_chroot${binds[2]}';"
        binds=("${binds[@]:3}")
    done
    unshare --mount --propagation private -- bash -c "set -e; $mounts exec chroot '$build_chroot' /usr/bin/env -i \
        HOME=/root PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \"\$@\"" in-chroot "$@"
}

# qemu-user for arm64 programs (maintainer scripts in the arm64 roots): binfmt_misc mounted and enabled.
ensure_arm64_binfmt() {
    ensure_binfmt aarch64
}

# ensure_binfmt QEMU-ARCH (aarch64, arm): qemu-user for that CPU's programs, binfmt_misc mounted and enabled.
ensure_binfmt() {
    install_missing qemu-user-static binfmt-support
    [[ -e /proc/sys/fs/binfmt_misc/status ]] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    [[ -e /proc/sys/fs/binfmt_misc/qemu-$1 ]] || update-binfmts --enable "qemu-$1"
    [[ $(head -n 1 "/proc/sys/fs/binfmt_misc/qemu-$1") == enabled ]]
}

# ensure_arm64_root SUITE: a plain Debian arm64 root of SUITE (bookworm or trixie), made through qemu-user.
ensure_arm64_root() {
    local suite=$1
    ensure_arm64_binfmt
    install_missing arch-test  # mmdebstrap's check that this machine can run arm64 programs
    make_root "$cache_root/$suite-arm64" --variant=minbase --architectures=arm64 "$suite"
}

# ensure_root SUITE ARCH [VARIANT]: a plain Debian root of SUITE for ARCH (amd64 natively; arm64 and armhf
# through qemu-user) with mmdebstrap's VARIANT (default minbase), at $cache_root/SUITE-ARCH; prints its path.
# (ensure_arm64_root SUITE makes the same root as ensure_root SUITE arm64.)
ensure_root() {
    local suite=$1 arch=$2 variant=${3:-minbase}
    case $arch in
        amd64) ;;
        arm64) ensure_binfmt aarch64 ;;
        armhf | armel) ensure_binfmt arm ;;
        *) say "unknown architecture $arch (amd64, arm64, armhf)"; return 1 ;;
    esac
    [[ $arch == amd64 ]] || install_missing arch-test  # mmdebstrap's check that this machine runs ARCH's programs
    make_root "$cache_root/$suite-$arch" --variant="$variant" --architectures="$arch" "$suite"
    echo "$cache_root/$suite-$arch"
}
