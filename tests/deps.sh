#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install what heaptrace needs to build and test, when it is missing (Debian/Ubuntu).
set -e
need=""
pkg-config --exists libunwind-ptrace 2>/dev/null || need="$need libunwind-dev"
# x86_64: Capstone, the oracle of the entry check's decoder in test_entrycheck (heaptrace does
# not link it), over static archives that keep their AVX-512 assembly's symbols
if [ "$(uname -m)" = x86_64 ]; then
	pkg-config --exists capstone 2>/dev/null || need="$need libcapstone-dev"
	pkg-config --exists libcrypto 2>/dev/null || need="$need libssl-dev"
	[ -e /usr/include/gcrypt.h ] || need="$need libgcrypt20-dev"
fi
pkg-config --exists libdw libelf 2>/dev/null || need="$need libdw-dev libelf-dev"
pkg-config --exists libzstd 2>/dev/null || need="$need libzstd-dev"
# --format=pprof: libprotobuf-c encodes profile.proto from code protoc-c generates, zlib gzips
pkg-config --exists libprotobuf-c 2>/dev/null || need="$need libprotobuf-c-dev"
command -v protoc-c >/dev/null 2>&1 || need="$need protobuf-c-compiler"
pkg-config --exists zlib 2>/dev/null || need="$need zlib1g-dev"
# report --debuginfod (src/dbgserver.c)
pkg-config --exists libdebuginfod 2>/dev/null || need="$need libdebuginfod-dev"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v gcc >/dev/null 2>&1 || need="$need gcc"
command -v g++ >/dev/null 2>&1 || need="$need g++"
command -v make >/dev/null 2>&1 || need="$need make"
command -v python3 >/dev/null 2>&1 || need="$need python3"
# the core-file tests dump a waiting process with gcore
command -v gcore >/dev/null 2>&1 || need="$need gdb"
# targets built against other allocators (tests/targets/Makefile, tests/e2e/test_musl.py, ...)
command -v musl-gcc >/dev/null 2>&1 || need="$need musl-tools"
[ -e /usr/include/jemalloc/jemalloc.h ] || need="$need libjemalloc-dev"
[ -e /usr/include/gperftools/tcmalloc.h ] || need="$need libgoogle-perftools-dev"
[ -e /usr/include/mimalloc.h ] || need="$need libmimalloc-dev"
command -v zstd >/dev/null 2>&1 || need="$need zstd"
command -v heaptrack_print >/dev/null 2>&1 || need="$need heaptrack"
# heaptrack_gui must open report --format=heaptrack (tests/e2e/test_heaptrack_gui.py): offscreen,
# and on Xvfb, whose screenshot (xwd, netpbm) of its Summary is read by OCR (tesseract)
command -v heaptrack_gui >/dev/null 2>&1 || need="$need heaptrack-gui"
command -v Xvfb >/dev/null 2>&1 || need="$need xvfb"
command -v xwd >/dev/null 2>&1 || need="$need x11-apps"
command -v pamcut >/dev/null 2>&1 || need="$need netpbm"
command -v tesseract >/dev/null 2>&1 || need="$need tesseract-ocr tesseract-ocr-eng"
# the --format=html pages, and speedscope opening --format=pprof, are checked in headless
# chromium, driven by playwright-core (npm; tests/html/ pins both)
command -v chromium >/dev/null 2>&1 || need="$need chromium"
command -v node >/dev/null 2>&1 || need="$need nodejs"
command -v npm >/dev/null 2>&1 || need="$need npm"
# --live's terminal view (ncursesw), and the terminal its tests drive (tests/e2e/test_live.py)
pkg-config --exists ncursesw 2>/dev/null || need="$need libncurses-dev"
command -v tmux >/dev/null 2>&1 || need="$need tmux"
# the pprof test builds Google's pprof from Debian's Go sources, offline (GOPATH mode)
command -v go >/dev/null 2>&1 || need="$need golang-go"
[ -d /usr/share/gocode/src/github.com/google/pprof ] || need="$need golang-github-google-pprof-dev"
[ -d /usr/share/gocode/src/github.com/chzyer/readline ] || need="$need golang-github-chzyer-readline-dev"
[ -d /usr/share/gocode/src/github.com/ianlancetaylor/demangle ] ||
	need="$need golang-github-ianlancetaylor-demangle-dev"
[ -z "$need" ] && exit 0
echo "heaptrace: installing build dependencies:$need"
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $need
