# Sourced by scripts/demo and scripts/test: finds Swift and installs the Debian packages that are missing.
# Works on Debian bookworm/trixie and Raspberry Pi OS; needs root or sudo only when something is missing.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

say() { printf '%s\n' "lightorgan: $*" >&2; }

# Packages that Swift needs to build and link on Debian (swift.org's list for Debian 12, minus the
# ones only the REPL uses), libasound2-dev for ALSA capture, libavahi-client-dev for
# DNS-SD discovery through the Avahi daemon, libyaml-dev for the settings file, libmosquitto-dev for MQTT
# (Home Assistant) and libssl-dev for the page's TLS. libgpiod 2 comes from ensure_libgpiod (below).
build_packages=(binutils git libasound2-dev libavahi-client-dev libmosquitto-dev libssl-dev libyaml-dev libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libsqlite3-0
    libstdc++-12-dev libxml2-dev libncurses-dev libz3-dev pkg-config tzdata zlib1g-dev)

install_missing() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    say "installing ${missing[*]}"
    local sudo=()
    [[ $(id -u) == 0 ]] || sudo=(sudo)
    # Another apt (an unattended upgrade, a second script) may hold dpkg's lock: wait for it, up to 5 minutes.
    local wait_for_lock=(-o DPkg::Lock::Timeout=300)
    "${sudo[@]}" apt-get "${wait_for_lock[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get "${wait_for_lock[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# upgrade_if_behind PACKAGE…: upgrades each installed PACKAGE that apt (its lists refreshed) has a newer version of.
upgrade_if_behind() {
    local behind=() package installed candidate sudo=()
    [[ $(id -u) == 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 update -qq
    for package in "$@"; do
        installed=$(dpkg-query -W -f='${Version}' "$package" 2>/dev/null) || continue
        candidate=$(apt-cache policy "$package" | sed -n 's/^ *Candidate: //p')
        [[ -n $candidate && $candidate != "(none)" && $candidate != "$installed" ]] && behind+=("$package")
    done
    ((${#behind[@]})) || return 0
    say "upgrading ${behind[*]}"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -qq --only-upgrade \
        --no-install-recommends "${behind[@]}" >/dev/null
}

find_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        for candidate in /opt/swift/usr/bin "$HOME/.local/share/swiftly/bin" /usr/share/swift/usr/bin; do
            [[ -x $candidate/swift ]] && export PATH="$candidate:$PATH" && break
        done
    fi
    if ! command -v swift >/dev/null 2>&1; then
        say "Swift 6 is not installed. Install it with swiftly (https://www.swift.org/install/linux/),"
        say "for example: curl -O https://download.swift.org/swiftly/linux/swiftly-\$(uname -m).tar.gz && tar zxf swiftly-*.tar.gz && ./swiftly init"
        say "then open a new shell and run this command again."
        exit 1
    fi
    local version
    version=$(swift --version 2>&1 | grep -o 'Swift version [0-9]*' | grep -o '[0-9]*$' || echo 0)
    if ((version < 6)); then
        say "Swift $version found; lightorgan needs Swift 6.2 or newer (https://www.swift.org/install/linux/)"
        exit 1
    fi
}

# One build serves everything (the demo, the Swift tests, the system tests, the benchmarks and the amd64 package):
# optimized, without debug information (the shipped binary is stripped), linked by lld (the default gold link gives
# no RELRO segment). The tests reach internal declarations through `package` access, not `@testable import`, so
# nothing is built for testing. (Other flags would compile everything again: every script uses these.)
build_flags=(-c release -Xswiftc -gnone -Xcc -g0 -Xswiftc -use-ld=lld)

# shipped_lightorgan: builds lightorgan with build_flags, links it again as it ships and prints that file's path,
# .build/shipped/lightorgan: the Swift runtime linked in (it runs on a Pi or a laptop without a Swift toolchain, and
# starts with fewer relocations), stripped, read-only relocations after start-up (lintian: hardening-no-relro).
# SwiftPM's --static-swift-stdlib would compile every Swift module again (the flag is in each compile's command
# line), and the Swift tests cannot be linked with it (Swift Testing has no static runtime): so the executable's
# own link, as SwiftPM makes it, is made once more from the same objects, with the static runtime. Its
# FoundationEssentials needs two of the toolchain's static libraries that the dynamic one loads by itself.
shipped_lightorgan() {
    local bin link shipped=$repo_root/.build/shipped
    bin=$(swift build "${build_flags[@]}" --show-bin-path)
    swift build "${build_flags[@]}" --product lightorgan >&2
    if [[ ! -x $shipped/lightorgan || $bin/lightorgan -nt $shipped/lightorgan ]]; then
        rm -f "$bin/lightorgan"
        link=$(swift build "${build_flags[@]}" --product lightorgan -v 2>&1 |
            grep -F -- "-o $bin/lightorgan -module-name lightorgan " | tail -n 1)
        if [[ -z $link ]]; then
            say "could not find SwiftPM's link of lightorgan (swift build -v) to link it as it ships"
            return 1
        fi
        mkdir -p "$shipped"
        link=${link/"-o $bin/lightorgan "/"-o $shipped/lightorgan.partial "}
        link=${link/"-Xlinker '-rpath=\$ORIGIN'"/}
        eval "$link -static-stdlib -l_FoundationCollections -l_FoundationCShims -Xlinker --strip-all \
            -Xlinker -z -Xlinker relro" >&2
        mv "$shipped/lightorgan.partial" "$shipped/lightorgan"
    fi
    echo "$shipped/lightorgan"
}

# The music benchmark's tools: sox cuts bands and decodes, aubio's onset detector is the independent
# reference, numpy does the figures (a numpy from pip serves as well as Debian's).
install_music_tools() {
    install_missing sox libsox-fmt-all aubio-tools python3
    python3 -c 'import numpy' 2>/dev/null || install_missing python3-numpy
}

# ensure_libgpiod: libgpiod 2, linked statically into every build (the packages' too), whichever libgpiod this
# machine has: bookworm's libgpiod-dev is 1.6, whose v1 API Debian's arm64 kernel no longer offers. The machine's
# own libgpiod-dev where its apt has 2.x (trixie), else trixie's libgpiod-dev for this machine's architecture,
# downloaded with apt from lists of its own (this machine's apt sources are never touched). Its header and static
# library go to $cache/libgpiod with a libgpiod.pc whose library folder holds only libgpiod.a (the linker cannot
# pick a libgpiod.so), which PKG_CONFIG_PATH finds first. The folder's path never changes (the build's flags stay
# the same); a new version only compiles the GPIO shim again.
libgpiod_folder=${XDG_CACHE_HOME:-$HOME/.cache}/lightorgan/libgpiod
ensure_libgpiod() {
    local folder=$libgpiod_folder arch triplet
    arch=$(dpkg --print-architecture)
    case $arch in
        amd64) triplet=x86_64-linux-gnu ;;
        arm64) triplet=aarch64-linux-gnu ;;
        *) say "lightorgan builds on amd64 and arm64 (64-bit Raspberry Pi OS), not on $arch"; exit 1 ;;
    esac
    mkdir -p "$(dirname "$folder")"
    (
        flock 9
        [[ -f $folder/version && $(cat "$folder/arch") == "$arch" ]] && exit 0
        local work version candidate
        work=$(mktemp -d "$folder.XXXXXX")
        trap 'rm -rf "$work"' EXIT
        mkdir -p "$work/include" "$work/lib" "$work/pkgconfig"
        candidate=$(apt-cache policy libgpiod-dev 2>/dev/null | sed -n 's/^ *Candidate: //p')
        if [[ $candidate == 2* ]]; then
            install_missing libgpiod-dev
            cp /usr/include/gpiod.h "$work/include/"
            cp "/usr/lib/$triplet/libgpiod.a" "$work/lib/"
            version=$(dpkg-query -W -f='${Version}' libgpiod-dev)
        else
            say "fetching libgpiod 2 (trixie's libgpiod-dev for $arch; this machine's apt has ${candidate:-none})"
            local apt_dirs=(-o Dir::Etc::SourceList="$work/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
                -o Dir::State::Lists="$work/apt/lists" -o Dir::Cache="$work/apt/cache" -o APT::Sandbox::User="$(id -un)"
                -o Debug::NoLocking=true)
            mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/deb"
            echo "deb ${LIGHTORGAN_DEBIAN_MIRROR:-http://deb.debian.org/debian} trixie main" >"$work/apt/sources.list"
            apt-get -qq "${apt_dirs[@]}" update
            (cd "$work/deb" && apt-get -qq "${apt_dirs[@]}" download "libgpiod-dev:$arch")
            dpkg-deb -x "$work"/deb/libgpiod-dev_*.deb "$work/unpacked"
            cp "$work/unpacked/usr/include/gpiod.h" "$work/include/"
            cp "$work/unpacked/usr/lib/$triplet/libgpiod.a" "$work/lib/"
            version=$(dpkg-deb -f "$work"/deb/libgpiod-dev_*.deb Version)
        fi
        cat >"$work/pkgconfig/libgpiod.pc" <<PC
Name: libgpiod
Description: libgpiod 2.x, linked statically into lightorgan (LGPL-2.1-or-later)
Version: ${version%%-*}
Cflags: -I$folder/include
Libs: -L$folder/lib -lgpiod
PC
        echo "$version" >"$work/version"
        echo "$arch" >"$work/arch"
        rm -rf "$work/apt" "$work/deb" "$work/unpacked" "$folder"
        mv "$work" "$folder"
        chmod 755 "$folder"
    ) 9>"$folder.lock"
    export PKG_CONFIG_PATH=$folder/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
}

install_missing "${build_packages[@]}"
find_swift
ensure_libgpiod

# python_venv NAME REQUIREMENTS [NO-DEPS-REQUIREMENTS]: a venv of Debian's python3 with its site packages (python3-ola,
# numpy) and the pinned PyPI packages of REQUIREMENTS (and, without their declared dependencies, those of
# NO-DEPS-REQUIREMENTS); one venv per version of those files, made under a lock so that two runs at once never build
# it twice. Prints its folder.
python_venv() {
    local name=$1 requirements=$2 without_dependencies=${3:-}
    local cache=${XDG_CACHE_HOME:-$HOME/.cache}/lightorgan
    local venv
    venv=$cache/venv-$name-$(cat "$requirements" ${without_dependencies:+"$without_dependencies"} | sha256sum | cut -c1-12)
    mkdir -p "$cache"
    (
        flock 9
        if [[ ! -f $venv/.complete ]]; then
            install_missing python3 python3-venv
            say "making the $name venv $venv"
            rm -rf "$venv"
            /usr/bin/python3 -m venv --system-site-packages "$venv"
            "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
            if [[ -n $without_dependencies ]]; then
                "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$without_dependencies"
            fi
            touch "$venv/.complete"
        fi
    ) 9>"$cache/venv-$name.lock" >&2
    echo "$venv"
}

# The system tests' venv (also the benchmarks' but the beat benchmark's): Tests/System/requirements.txt and
# requirements-no-deps.txt.
test_venv() {
    python_venv tests "$repo_root/Tests/System/requirements.txt" "$repo_root/Tests/System/requirements-no-deps.txt"
}

# The beat benchmark's venv (scripts/beat-corpus, scripts/bench-beats): Tests/System/requirements-beats.txt.
beat_venv() {
    python_venv beats "$repo_root/Tests/System/requirements-beats.txt"
}
