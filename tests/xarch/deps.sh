#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Host tools for make check-cross, when missing (Debian): cross compilers, qemu-system, cpio, and
# the foreign architectures in dpkg so that apt-get download can fetch the guests' packages.
# Nothing of a foreign architecture is installed: tests/xarch/xarch.py downloads those .debs into
# build/xarch/<arch>/ and unpacks them there.
set -e
need=""
for t in aarch64-linux-gnu arm-linux-gnueabihf mips64el-linux-gnuabi64; do
	command -v $t-gcc >/dev/null 2>&1 || need="$need gcc-$t"
	command -v $t-g++ >/dev/null 2>&1 || need="$need g++-$t"
done
command -v qemu-system-aarch64 >/dev/null 2>&1 || need="$need qemu-system-arm"
command -v qemu-system-mips64el >/dev/null 2>&1 || need="$need qemu-system-mips"
command -v cpio >/dev/null 2>&1 || need="$need cpio"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v readelf >/dev/null 2>&1 || need="$need binutils"
have=$(dpkg --print-foreign-architectures)
add=""
update=""
for a in arm64 armhf mips64el; do
	echo "$have" | grep -qx $a || add="$add $a"
	# added but never fetched: apt knows no package of that architecture yet
	apt-cache show busybox-static:$a >/dev/null 2>&1 || update=yes
done
[ -z "$need$add$update" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
for a in $add; do
	echo "heaptrace: dpkg --add-architecture $a"
	$SUDO dpkg --add-architecture $a
done
$SUDO apt-get update -qq || true
if [ -n "$need" ]; then
	echo "heaptrace: installing cross-test tools:$need"
	$SUDO apt-get install -y -qq --no-install-recommends $need
fi
