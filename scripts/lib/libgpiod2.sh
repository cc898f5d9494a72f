#!/usr/bin/env bash
# Puts libgpiod 2.x (the v2 API of Debian/Raspberry Pi OS trixie) into a private prefix on a bookworm
# machine, from bookworm-backports, without touching the system's libgpiod 1.6, so both API paths of
# the GPIO shim can be built and tested. Prints the prefix. Usage: scripts/lib/libgpiod2.sh DIRECTORY
set -euo pipefail
prefix=$(realpath -m "$1")
if [[ -f $prefix/usr/lib/pkgconfig-lightorgan/libgpiod.pc ]]; then echo "$prefix"; exit 0; fi
mkdir -p "$prefix/apt/lists/partial" "$prefix/apt/archives/partial" "$prefix/debs"
# The mirror this machine already uses for bookworm, from its own apt sources.
sources=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null || true)
uri=$(grep -E '^(URIs:|deb )' <<<"$sources" | grep -vi security | head -n 1 |
    sed -E 's/^URIs: *//; s/^deb +(\[[^]]*\] +)?//; s/ .*//')
echo "deb $uri bookworm-backports main" >"$prefix/apt/sources.list"
apt_options=(-o "Dir::Etc::SourceList=$prefix/apt/sources.list" -o "Dir::Etc::SourceParts=-"
    -o "Dir::State::Lists=$prefix/apt/lists" -o "Dir::Cache::Archives=$prefix/apt/archives" -o "APT::Get::List-Cleanup=0")
apt-get "${apt_options[@]}" update -qq >&2
(cd "$prefix/debs" && apt-get "${apt_options[@]}" download libgpiod-dev/bookworm-backports libgpiod3/bookworm-backports >&2)
for deb in "$prefix"/debs/*.deb; do dpkg -x "$deb" "$prefix"; done
# A .pc file that points at the prefix, not at /usr (where the system's v1 headers are).
libdir=$(dirname "$(find "$prefix/usr/lib" -name 'libgpiod.so' | head -n 1)")
mkdir -p "$prefix/usr/lib/pkgconfig-lightorgan"
cat >"$prefix/usr/lib/pkgconfig-lightorgan/libgpiod.pc" <<PC
Name: libgpiod
Description: libgpiod 2.x from bookworm-backports, private copy
Version: $(find "$prefix/debs" -name 'libgpiod-dev_*' | sed -E 's/.*libgpiod-dev_([^_]*)_.*/\1/')
Cflags: -I$prefix/usr/include
Libs: -L$libdir -lgpiod
PC
echo "$prefix"
