# Sourced by scripts/build-pi (after prepare.sh and debian-roots.sh): the release lightorgan for each architecture,
# wrapped in a .deb. amd64 is this machine's own build (prepare.sh's `shipped_lightorgan`: the very binary scripts/test's
# tests run); arm64 is cross-compiled in the sid build chroot against the arm64 sysroot.
set -euo pipefail

# The oldest releases the package must run on: Raspberry Pi OS / Debian bookworm (glibc 2.36, GCC 12's
# libstdc++ with GLIBCXX_3.4.30). trixie has glibc 2.41.
oldest_glibc=2.36
oldest_glibcxx=3.4.30

# build_release ARCH (arm64 or amd64): prints the path of the built, stripped binary on this machine.
build_release() {
    case $1 in
        amd64) build_here ;;
        arm64) build_in_chroot arm64 ;;
        *) say "unknown architecture $1 (arm64 or amd64)"; return 1 ;;
    esac
}

# build_here: this machine's release build of lightorgan (amd64 only: the package's binary must need glibc 2.36
# at most, which a bookworm machine gives by itself); prints its path.
build_here() {
    if [[ $(dpkg --print-architecture) != amd64 ]]; then
        say "the amd64 package is built on an amd64 machine (this one is $(dpkg --print-architecture))"
        return 1
    fi
    shipped_lightorgan
}

# swift_version_for ARCH: the version of the Swift that builds ARCH's binary (the copyright file names it): this
# machine's for amd64, the sid chroot's for arm64.
swift_version_for() {
    local swift=(swift)
    [[ $1 == arm64 ]] && swift=(in_build_chroot -- swift)
    "${swift[@]}" --version 2>/dev/null | grep -oE 'Swift version [0-9.]+' | grep -oE '[0-9.]+$'
}

# build_in_chroot arm64: the cross-compiled binary, stripped; prints its path on this machine.
# The build folder lives in the cache (a fresh clone reuses the compiled dependencies), and the checkout is
# seen at /src inside the chroot whichever folder it is in here, so its paths stay the same between clones.
build_in_chroot() {
    local arch=$1 triplet swift_flags=() compiler_flags=() link_flags=() pkgconfig root
    case $arch in
        arm64)
            triplet=aarch64-linux-gnu root=/sysroot
            swift_flags=(--triple aarch64-unknown-linux-gnu --sdk /sysroot --toolset /build/toolset-aarch64.json)
            compiler_flags=(--target=aarch64-linux-gnu --sysroot=/sysroot)
            link_flags=(-Xlinker -z -Xlinker pack-relative-relocs)
            ;;
        *) say "the sid chroot cross-compiles for arm64 only, not $arch"; return 1 ;;
    esac
    # Read-only relocations after start-up (lintian: hardening-no-relro).
    link_flags+=(-Xlinker -z -Xlinker relro)
    # No debug information (SwiftPM's release builds make DWARF for every module, C ones too), as the binary is
    # stripped: a build from nothing takes 761 CPU seconds instead of 833.
    swift_flags+=(-Xswiftc -gnone -Xcc -g0)
    pkgconfig=$root/usr/lib/lightorgan-pkgconfig:$root/usr/lib/$triplet/pkgconfig:$root/usr/share/pkgconfig
    mkdir -p "$cache_root/build/$arch"
    # swiftc needs the sysroot both as its SDK (or: "missing required module 'SwiftGlibc'") and, for the static
    # runtime, as its resource folder (the lib/swift one makes the driver crash on static-stdlib-args.lnk);
    # lld by absolute path: the chroot's clang would otherwise look for an aarch64 ld.
    # Written whole and then moved into place: a build beside this one may read it at this moment. (The name is
    # set first: in a redirection of `cat`, $BASHPID would be that of the process that runs cat.)
    local written=$cache_root/build/toolset-aarch64.json.$BASHPID
    cat >"$written" <<'JSON'
{
  "schemaVersion": "1.0",
  "swiftCompiler": {"extraCLIOptions": ["-use-ld=lld", "-sdk", "/sysroot", "-resource-dir", "/sysroot/usr/libexec/swift/lib/swift_static"]},
  "linker": {"path": "/usr/bin/ld.lld"}
}
JSON
    mv "$written" "$cache_root/build/toolset-aarch64.json"
    local script
    # glibc_compat.o: sid's glibc headers bind symbols of glibc 2.38 and later; this object sends them to
    # their older versions, so the binary runs with bookworm's glibc 2.36 (see scripts/packaging/glibc_compat.c).
    script="set -e; cd /src
        export PKG_CONFIG_PATH=$pkgconfig PKG_CONFIG_LIBDIR=$pkgconfig ${root:+PKG_CONFIG_SYSROOT_DIR=$root}
        bin=\$(swift build -c release --static-swift-stdlib ${swift_flags[*]} --scratch-path /build/$arch --show-bin-path)
        clang ${compiler_flags[*]} -std=c11 -O2 -fPIC -Wall -Werror -c scripts/packaging/glibc_compat.c -o /build/$arch/glibc_compat.o
        # SwiftPM does not see the object given to the linker: the executable is linked anew each time (seconds).
        rm -f \$bin/lightorgan
        # Smaller: no dynamic symbol table of every Swift symbol (nothing loads symbols from the executable) and,
        # for the Pi, relative relocations packed (DT_RELR needs glibc 2.36, Raspberry Pi OS bookworm's; a laptop's
        # Ubuntu 22.04 has 2.35): 2.5 MB less binary, 0.8 MB less .deb.
        swift build -c release --static-swift-stdlib ${swift_flags[*]} --scratch-path /build/$arch --product lightorgan \
            -Xlinker /build/$arch/glibc_compat.o -Xlinker --strip-all -Xlinker --no-export-dynamic ${link_flags[*]} >&2
        echo \$bin/lightorgan"
    local inside
    inside=$(in_build_chroot --bind "$repo_root" /src --bind "$cache_root/build" /build -- bash -c "$script")
    echo "$cache_root/build${inside#/build}"
}

# highest_symbol_version BINARY PREFIX: the highest PREFIX_x.y.z version BINARY asks of its libraries.
highest_symbol_version() {
    readelf -V --wide "$1" | grep -oE "Name: $2_[0-9.]+" | sed "s/Name: $2_//" | sort -V | tail -n 1
}

# check_lean BINARY: fails when Foundation's internationalisation (ICU's data, 30 MB in the binary, 11 MB in the
# package) was linked in: one use of String(format:), Process, Thread, FileHandle or localizedDescription does
# it (use String(cFormat:), ChildProcess, DedicatedThread, StandardError, SystemErrorText from LightOrganCore).
check_lean() {
    if grep -q "icudt[0-9]*l-" "$1"; then
        say "the binary holds ICU's data (Foundation's internationalisation, +11 MB): find the new use with"
        say "  nm -u .build/debug/*.build/*.o | swift demangle | grep ' Foundation\.' (the module Foundation, not FoundationEssentials)"
        return 1
    fi
}

# check_runs_on_oldest BINARY: fails, naming the symbols, when BINARY needs a newer glibc or libstdc++ than
# bookworm's.
check_runs_on_oldest() {
    local binary=$1 glibc glibcxx
    glibc=$(highest_symbol_version "$binary" GLIBC)
    glibcxx=$(highest_symbol_version "$binary" GLIBCXX)
    say "$(basename "$(dirname "$(dirname "$binary")")"): needs GLIBC_$glibc, GLIBCXX_${glibcxx:-none} (bookworm has $oldest_glibc, $oldest_glibcxx)"
    if [[ $(printf '%s\n' "$glibc" "$oldest_glibc" | sort -V | tail -n 1) != "$oldest_glibc" ]]; then
        say "the binary needs glibc $glibc, newer than bookworm's $oldest_glibc; these symbols (add them to scripts/packaging/glibc_compat.c):"
        readelf --dyn-syms --wide "$binary" | grep -E "@GLIBC_[0-9.]+" | awk '{print $8}' |
            awk -F'@' -v old="$oldest_glibc" '{ split($2, v, "_"); print v[2], $1 }' | sort -V | awk -v old="$oldest_glibc" '
            { split($1, a, "."); split(old, b, "."); if (a[1] * 1000 + a[2] > b[1] * 1000 + b[2]) print "  " $2 " (GLIBC_" $1 ")" }' >&2
        return 1
    fi
    if [[ -n $glibcxx && $(printf '%s\n' "$glibcxx" "$oldest_glibcxx" | sort -V | tail -n 1) != "$oldest_glibcxx" ]]; then
        say "the binary needs GLIBCXX_$glibcxx, newer than bookworm's $oldest_glibcxx"
        return 1
    fi
}

# debian_depends BINARY: the Depends line for the shared libraries BINARY loads, by their Debian package
# names (trixie's libasound2t64 provides libasound2). An unknown library stops the build, so the line stays true.
debian_depends() {
    local binary=$1 depends=() library glibc
    glibc=$(highest_symbol_version "$binary" GLIBC)
    for library in $(readelf -d "$binary" | grep -oE 'Shared library: \[[^]]+\]' | sed -E 's/.*\[(.*)\]/\1/'); do
        case $library in
            libc.so.6 | libm.so.6 | ld-linux-*.so.* | libpthread.so.0 | libdl.so.2 | librt.so.1 | libutil.so.1)
                depends+=("libc6 (>= $glibc)") ;;
            libstdc++.so.6) depends+=("libstdc++6 (>= 12)") ;;
            libgcc_s.so.1) depends+=("libgcc-s1 (>= 3.0)") ;;
            libasound.so.2) depends+=("libasound2 (>= 1.2.8)") ;;
            libavahi-client.so.3) depends+=("libavahi-client3 (>= 0.8)") ;;
            libavahi-common.so.3) depends+=("libavahi-common3 (>= 0.8)") ;;
            libyaml-0.so.2) depends+=("libyaml-0-2 (>= 0.2.2)") ;;
            libmosquitto.so.1) depends+=("libmosquitto1 (>= 2.0)") ;;
            # The page's TLS: OpenSSL 3.0's functions only (trixie's libssl3t64 provides libssl3).
            libssl.so.3 | libcrypto.so.3) depends+=("libssl3 (>= 3.0.0)") ;;
            libgpiod.so.*) say "libgpiod must be linked statically, but the binary loads $library"; return 1 ;;
            *) say "no Debian package known for $library: add it to debian_depends in scripts/lib/debian-package.sh"; return 1 ;;
        esac
    done
    # adduser: postinst makes the system user with it (not Essential on trixie); openssl: the receiver's
    # page makes its self-signed certificate with it on first start; init-system-helpers: the maintainer
    # scripts enable and start the service with its deb-systemd-helper and deb-systemd-invoke (as debhelper's).
    printf '%s\n' "${depends[@]}" adduser openssl "init-system-helpers (>= 1.54~)" | sort -u | paste -sd, | sed 's/,/, /g'
}

# release_version: the version lightorgan names itself (Sources/LightOrganCore/Support/LightOrganVersion.swift).
release_version() {
    sed -nE 's/.*static let current = "([^"]+)".*/\1/p' "$repo_root/Sources/LightOrganCore/Support/LightOrganVersion.swift"
}

# package_version: the release's version where the checkout's commit is tagged vVERSION, else
# VERSION+gitDATE.TIME.COMMIT (newer commits sort higher, and below the next release).
package_version() {
    local version
    version=$(release_version)
    if [[ $(git -C "$repo_root" tag --points-at HEAD) == *"v$version"* ]]; then
        echo "$version"
    else
        echo "$version+git$(TZ=UTC git -C "$repo_root" log -1 --date=format-local:%Y%m%d.%H%M%S --format=%cd).$(git -C "$repo_root" rev-parse --short=7 HEAD)"
    fi
}

# generate_manual_tool: the path of generate-manual, built (debug) from the checkout of swift-argument-parser that
# this machine's build resolved, in the cache, under a lock (two packages may be made at once).
generate_manual_tool() {
    local source=$repo_root/.build/checkouts/swift-argument-parser folder=$cache_root/generate-manual version
    [[ -d $source ]] || swift package --package-path "$repo_root" resolve >&2
    version=$(git -C "$source" describe --tags --always)
    mkdir -p "$folder"
    (
        flock 9
        if [[ $(cat "$folder/bin/.version" 2>/dev/null) != "$version" ]]; then
            rm -rf "$folder/bin" "$folder/source"
            cp -a "$source" "$folder/source"
            swift build -c debug --package-path "$folder/source" --scratch-path "$folder/scratch" \
                --product generate-manual >&2
            mkdir -p "$folder/bin"
            cp "$(swift build -c debug --package-path "$folder/source" --scratch-path "$folder/scratch" \
                --show-bin-path)/generate-manual" "$folder/bin/"
            echo "$version" >"$folder/bin/.version"
        fi
    ) 9>"$folder.lock" || return 1
    echo "$folder/bin/generate-manual"
}

# command_docs BINARY ARCH FOLDER: what BINARY says of its commands, in FOLDER: a manual page per command
# (FOLDER/man/lightorgan.1, lightorgan.receive.1, …), made by swift-argument-parser's own generator
# (generate-manual, the tool behind its generate-manual plugin) from BINARY's --experimental-dump-help, and
# the bash, zsh and fish completions (FOLDER/completions/SHELL) from its --generate-completion-script. The
# binary itself is asked, so the pages are those of what is packaged: an arm64 one through qemu-user with
# the arm64 sysroot's libraries. generate-manual is built on this machine, once for each version of
# swift-argument-parser that this machine's build resolved (the plugin would build a second, debug, lightorgan), as
# a debug build: it reads one small file, and its build takes 25 CPU seconds where a release one takes 44.
command_docs() {
    local binary=$1 arch=$2 folder=$3 run=() shell date page
    if [[ $arch == arm64 ]]; then
        ensure_arm64_binfmt
        run=(env QEMU_LD_PREFIX="$arm64_sysroot")
    fi
    mkdir -p "$folder/man" "$folder/completions"
    # Checked here: a command substitution (make_deb's caller) does not stop on errors. An arm64 binary that
    # cannot load its libraries from the sysroot would leave the package without manual pages.
    if ! "${run[@]}" "$binary" --experimental-dump-help >"$folder/dump-help.json"; then
        say "cannot run $binary ($arch) for its manual pages and completions"
        return 1
    fi
    for shell in bash zsh fish; do
        "${run[@]}" "$binary" --generate-completion-script "$shell" >"$folder/completions/$shell"
    done
    # generate-manual runs the tool it is given with --experimental-dump-help: here a script that prints
    # the binary's answer. The pages' date is the commit's, so a rebuild makes the same pages.
    printf '#!/bin/sh\nexec cat "%s"\n' "$folder/dump-help.json" >"$folder/dump-help"
    chmod 755 "$folder/dump-help"
    date=$(git -C "$repo_root" log -1 --format=%cs)
    local tool
    tool=$(generate_manual_tool) || return 1
    "$tool" "$folder/dump-help" --multi-page --date "$date" --section 1 \
        --authors 'lightorgan maintainers<maintainers@users.noreply.github.com>' --output-directory "$folder/man"
    # What Debian's man-db and lintian ask of a page that generate-manual leaves out: a NAME that names the
    # page as its file does (lightorgan.receive; its "lightorgan receive" makes lexgrog fail, and apropos
    # with it), the command as typed in the SYNOPSIS, and no empty line (groff warns): a paragraph (.Pp).
    local name
    for page in "$folder"/man/*.1; do
        name=$(basename "$page" .1)
        sed -i -E "/^\.Sh NAME\$/,/^\.Sh /{s/^\.Nm \".*\"\$/.Nm $name/}
            /^\.Sh SYNOPSIS\$/,/^\.Sh /{s/^\.Nm\$/.Nm \"${name//./ }\"/}
            s/^\$/.Pp/" "$page"
    done
}

# debian_changelog VERSION: the package's changelog (Debian's format; the package is native, so lintian
# looks for it as changelog.gz): one entry for VERSION, dated at the commit it is built from.
debian_changelog() {
    local version=$1 commit
    commit=$(git -C "$repo_root" rev-parse --short=12 HEAD)
    cat <<CHANGELOG
lightorgan ($version) unstable; urgency=medium

  * lightorgan $(release_version), built by scripts/build-pi from commit $commit of the
    lightorgan repository.

 -- lightorgan maintainers <maintainers@users.noreply.github.com>  $(git -C "$repo_root" log -1 --format=%cD)
CHANGELOG
}

# make_deb BINARY ARCH OUTPUT-FOLDER: prints the path of the .deb made.
make_deb() {
    local binary=$1 arch=$2 output=$3 version staging depends docs page
    version=$(package_version)
    # A command substitution does not stop on errors (no inherit_errexit): an unknown library stops it here.
    depends=$(debian_depends "$binary") || return 1
    staging=$(mktemp -d)
    chmod 755 "$staging"   # the package's ./ (mktemp makes it 0700)
    docs=$(mktemp -d)
    command_docs "$binary" "$arch" "$docs" || return 1
    install -D -m 755 "$binary" "$staging/usr/bin/lightorgan"
    # The service as scripts/install-pi installs it, with the packaged binary's path.
    install -d "$staging/usr/lib/systemd/system"
    sed 's|/usr/local/bin/lightorgan|/usr/bin/lightorgan|; s|^# Installed by scripts/install-pi as .*|# Installed by the lightorgan Debian package (scripts/build-pi).|' \
        "$repo_root/scripts/lightorgan-receiver.service" >"$staging/usr/lib/systemd/system/lightorgan-receiver.service"
    # /dev/gpiochip* for the gpio group (Raspberry Pi OS has such a rule; plain Debian does not).
    install -D -m 644 "$repo_root/scripts/packaging/deb/60-lightorgan-gpio.rules" "$staging/usr/lib/udev/rules.d/60-lightorgan-gpio.rules"
    # On a Pi the receiver drives GPIO: the example settings with output gpio, kept across upgrades (conffile).
    install -d "$staging/etc/lightorgan"
    sed 's/^  output: terminal /  output: gpio     /' "$repo_root/scripts/lightorgan.example.yaml" >"$staging/etc/lightorgan/lightorgan.yaml"
    install -d "$staging/usr/share/doc/lightorgan"
    sed "s/@LIBGPIOD_VERSION@/$gpiod_version/g; s/@SWIFT_VERSION@/$swift_version/g" "$repo_root/scripts/packaging/deb/copyright" \
        >"$staging/usr/share/doc/lightorgan/copyright"
    debian_changelog "$version" | gzip -9n >"$staging/usr/share/doc/lightorgan/changelog.gz"
    # A manual page per command (man lightorgan, man lightorgan.receive, …), and the completions where
    # bash-completion, zsh and fish look for a package's own.
    install -d "$staging/usr/share/man/man1"
    for page in "$docs"/man/*.1; do
        gzip -9n <"$page" >"$staging/usr/share/man/man1/$(basename "$page").gz"
    done
    # (bash-completion sources the file: no #! line)
    sed '1{/^#!/d}' "$docs/completions/bash" >"$docs/completions/bash.sourced"
    install -D -m 644 "$docs/completions/bash.sourced" "$staging/usr/share/bash-completion/completions/lightorgan"
    install -D -m 644 "$docs/completions/zsh" "$staging/usr/share/zsh/vendor-completions/_lightorgan"
    install -D -m 644 "$docs/completions/fish" "$staging/usr/share/fish/vendor_completions.d/lightorgan.fish"
    rm -rf "$docs"
    install -d "$staging/DEBIAN"
    install -m 755 "$repo_root"/scripts/packaging/deb/{postinst,prerm,postrm} "$staging/DEBIAN/"
    echo /etc/lightorgan/lightorgan.yaml >"$staging/DEBIAN/conffiles"
    (cd "$staging" && find etc usr -type f ! -path etc/lightorgan/lightorgan.yaml -print0 | sort -z | xargs -0 md5sum) \
        >"$staging/DEBIAN/md5sums"
    cat >"$staging/DEBIAN/control" <<CONTROL
Package: lightorgan
Version: $version
Architecture: $arch
Maintainer: lightorgan maintainers <maintainers@users.noreply.github.com>
Installed-Size: $(du -sk --exclude=DEBIAN "$staging" | cut -f1)
Depends: $depends
Recommends: avahi-daemon
Suggests: pulseaudio-utils, libpulse0, shairport-sync, snapclient, bluez, bluez-alsa-utils, libasound2-plugin-bluez
Built-Using: libgpiod (= $gpiod_version)
Section: sound
Priority: optional
Description: light organ: audio becomes [bass, mid, treble] lamps over the network
 The receiver (lightorgan receive, the lightorgan-receiver service) drives
 LEDs on a Raspberry Pi's GPIO lines 5, 6 and 13 through the kernel's GPIO
 character device, from frames a sender on the local network streams on TCP
 port 8181; the sender (lightorgan send) analyses what a machine plays
 (through PipeWire or PulseAudio: pactl from pulseaudio-utils, and libpulse0).
 The receiver can hear music itself too: as an AirPlay speaker (with
 shairport-sync), from a pipe (Spotify Connect through raspotify) or a
 microphone, playing the sound and lighting the lamps as it is heard.
 The Swift runtime and libgpiod are linked in: no Swift toolchain is needed.
CONTROL
    mkdir -p "$output"
    local deb=$output/lightorgan_${version}_$arch.deb
    rm -f "$output"/lightorgan_*_"$arch".deb
    dpkg-deb --root-owner-group -Zxz --build "$staging" "$deb" >/dev/null
    rm -rf "$staging"
    echo "$deb"
}
