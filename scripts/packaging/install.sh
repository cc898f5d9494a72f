#!/bin/sh
# Installs lightorgan from its apt repository on Raspberry Pi OS or Debian (bookworm or trixie, 64-bit:
# arm64 or amd64), so that `apt upgrade` brings every later version:
#     curl -fsSL @REPO_URL@/install.sh | sudo sh
# It puts the repository's key in /usr/share/keyrings/, a deb822 source with Signed-By in
# /etc/apt/sources.list.d/lightorgan.sources, runs apt-get update and installs the package, whose service
# lightorgan-receiver starts at once. Running it again changes nothing. LIGHTORGAN_REPO=URL installs from
# another copy of the repository (a mirror, a test).
set -eu

repo=${LIGHTORGAN_REPO:-@REPO_URL@}
repo=${repo%/}
keyring=/usr/share/keyrings/lightorgan-archive-keyring.gpg
sources=/etc/apt/sources.list.d/lightorgan.sources

say() { printf 'lightorgan install: %s\n' "$*"; }
fail() { printf 'lightorgan install: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run me as root: curl -fsSL $repo/install.sh | sudo sh"
case $repo in
    @*) fail "this install.sh names no repository: set LIGHTORGAN_REPO=URL (the folder that holds dists/ and pool/)" ;;
esac

# The machine: a 64-bit Debian userland on a CPU that runs it.
arch=$(dpkg --print-architecture 2>/dev/null) || fail "dpkg is missing: this installs on Debian and Raspberry Pi OS only"
model=$(tr -d '\0' 2>/dev/null </proc/device-tree/model || true)  # (2> first: it hides the missing file too)
cpu=$(uname -m)
case $arch in
    arm64 | amd64) ;;
    armhf | armel)
        case $cpu in
            armv6*)
                fail "${model:-this board} has an ARMv6 CPU (Pi 1, Pi Zero, Pi Zero W): not supported. lightorgan is written in Swift, which has no 32-bit ARM build; it runs on every Pi from the Pi 3 and the Pi Zero 2 W on, with the 64-bit Raspberry Pi OS." ;;
            *)
                fail "this is a 32-bit ($arch) system${model:+ on a $model}. lightorgan needs the 64-bit Raspberry Pi OS (arm64): write it with Raspberry Pi Imager (Raspberry Pi OS (64-bit)), then run this again." ;;
        esac ;;
    *) fail "architecture $arch is not served: lightorgan's packages are for arm64 (Raspberry Pi 3, 4, 5, Zero 2 W) and amd64" ;;
esac

# The release: bookworm or trixie (Raspberry Pi OS's are Debian's).
codename=
# shellcheck source=/dev/null
[ -r /etc/os-release ] && codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
case $codename in
    bookworm | trixie) ;;
    *) fail "${codename:-this} release is not served: lightorgan's packages are for Debian and Raspberry Pi OS bookworm (12) and trixie (13)" ;;
esac

# fetch URL FILE: with curl or wget, else with apt's own downloader (every apt has it).
fetch() {
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 3 -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1"
    else
        /usr/lib/apt/apt-helper -q download-file "$1" "$2" >/dev/null
    fi
}

# install_if_changed FILE MODE: puts stdin at FILE unless FILE already holds exactly that; 0 when it changed.
install_if_changed() {
    new=$(mktemp)
    cat >"$new"
    if [ -f "$1" ] && cmp -s "$new" "$1"; then
        rm -f "$new"
        return 1
    fi
    install -D -m "$2" "$new" "$1"
    rm -f "$new"
}

changed=no
download=$(mktemp)
trap 'rm -f "$download"' EXIT
fetch "$repo/lightorgan-archive-keyring.gpg" "$download" || fail "cannot download $repo/lightorgan-archive-keyring.gpg: is the address right, and is the network up?"
if install_if_changed "$keyring" 0644 <"$download"; then
    say "installed the repository's key as $keyring"
    changed=yes
fi
if install_if_changed "$sources" 0644 <<SOURCES; then
Types: deb
URIs: $repo
Suites: stable
Components: main
Architectures: $arch
Signed-By: $keyring
SOURCES
    say "added the apt source $sources"
    changed=yes
fi

export DEBIAN_FRONTEND=noninteractive
if [ $changed = yes ] || ! dpkg-query -W -f='${Status}' lightorgan 2>/dev/null | grep -q "ok installed"; then
    say "apt-get update"
    apt-get -o DPkg::Lock::Timeout=300 update -qq || fail "apt-get update failed (see above): the repository or its signature was refused"
fi
if dpkg-query -W -f='${Status}' lightorgan 2>/dev/null | grep -q "ok installed"; then
    say "lightorgan $(dpkg-query -W -f='${Version}' lightorgan) is installed; apt upgrade brings newer versions"
else
    say "installing lightorgan"
    apt-get -o DPkg::Lock::Timeout=300 install -y -q lightorgan || fail "apt-get install lightorgan failed (see above)"
    say "installed lightorgan $(dpkg-query -W -f='${Version}' lightorgan); apt upgrade brings newer versions"
fi

# Where things are.
if [ -d /run/systemd/system ]; then
    say "service lightorgan-receiver: $(systemctl is-active lightorgan-receiver 2>/dev/null || true) (systemctl status lightorgan-receiver)"
    say "the page's link, with its key: journalctl -u lightorgan-receiver | grep page:"
else
    say "no systemd running here: start the receiver with: lightorgan receive --output gpio"
fi
say "settings: /etc/lightorgan/lightorgan.yaml, then: sudo systemctl restart lightorgan-receiver"
