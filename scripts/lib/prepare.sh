# Sourced by scripts/demo and scripts/test: finds Swift and installs the Debian packages that are missing.
# Works on Debian bookworm/trixie and Raspberry Pi OS; needs root or sudo only when something is missing.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

say() { printf '%s\n' "lightorgan: $*" >&2; }

# Packages that Swift needs to build and link on Debian (swift.org's list for Debian 12, minus the
# ones only the REPL uses), libasound2-dev for ALSA capture, libgpiod-dev for GPIO output, libavahi-client-dev for
# DNS-SD discovery through the Avahi daemon, libyaml-dev for the settings file and libmosquitto-dev for MQTT
# (Home Assistant).
build_packages=(binutils git libasound2-dev libavahi-client-dev libgpiod-dev libmosquitto-dev libyaml-dev libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libsqlite3-0
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

# Every release build links the Swift runtime and Foundation into the executable: the binary then runs
# on a Pi without a Swift toolchain, starts with fewer relocations and calls the runtime directly.
# (One set of flags for the demo and the benchmarks: switching flags rebuilds everything.)
release=(-c release --static-swift-stdlib)
# The tests' one build (scripts/test): optimized as a release, with the tests and every executable, testable
# (internal declarations reachable by @testable import). Swift Testing has no static runtime, so this one links
# the Swift runtime from the toolchain; the packages (scripts/build-pi) are the builds that ship.
tested=(-c release -Xswiftc -enable-testing)

# The music benchmark's tools: sox cuts bands and decodes, aubio's onset detector is the independent
# reference, numpy does the figures (a numpy from pip serves as well as Debian's).
install_music_tools() {
    install_missing sox libsox-fmt-all aubio-tools python3
    python3 -c 'import numpy' 2>/dev/null || install_missing python3-numpy
}

install_missing "${build_packages[@]}"
find_swift

# The system tests' venv (also the benchmarks'): Debian's python3 with its site packages (python3-ola,
# numpy), the pinned PyPI packages of Tests/System/requirements.txt and, without their declared dependencies,
# those of requirements-no-deps.txt; one venv per version of those files, made under a lock so that two runs
# at once never build it twice. Prints its folder.
test_venv() {
    local requirements=$repo_root/Tests/System/requirements.txt
    local without_dependencies=$repo_root/Tests/System/requirements-no-deps.txt
    local cache=${XDG_CACHE_HOME:-$HOME/.cache}/lightorgan
    local venv
    venv=$cache/venv-tests-$(cat "$requirements" "$without_dependencies" | sha256sum | cut -c1-12)
    mkdir -p "$cache"
    (
        flock 9
        if [[ ! -x $venv/bin/pytest ]]; then
            install_missing python3 python3-venv
            say "making the test venv $venv"
            rm -rf "$venv"
            /usr/bin/python3 -m venv --system-site-packages "$venv"
            "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
            "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$without_dependencies"
        fi
    ) 9>"$cache/venv-tests.lock" >&2
    echo "$venv"
}
