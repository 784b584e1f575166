#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install what is missing, with apt-get (Debian 12, Ubuntu), as root or through sudo:
#
#   sh tests/deps.sh           what heaptrace needs to build and run (make deps, make demo)
#   sh tests/deps.sh --tests   that, and the test suite's tools (make check, .ci/run)
#
# Plain sh, so that it runs on a machine with nothing installed, make included.
set -e
need=""

# The build: a C compiler with the C library's headers, g++'s libstdc++ (-lstdc++, for
# demangling), make, pkg-config, and the libraries of the Makefile's PKGS.
command -v gcc >/dev/null 2>&1 || need="$need gcc"
command -v g++ >/dev/null 2>&1 || need="$need g++"
[ -e /usr/include/stdio.h ] || need="$need libc6-dev"
command -v make >/dev/null 2>&1 || need="$need make"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
have() { # pkg-config knows every module named
	command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$@" 2>/dev/null
}
have libunwind-ptrace || need="$need libunwind-dev"
have libdw libelf || need="$need libdw-dev libelf-dev"
have libzstd || need="$need libzstd-dev"
# --live's terminal view (ncursesw)
have ncursesw || need="$need libncurses-dev"
# --format=pprof: libprotobuf-c encodes profile.proto from code protoc-c generates, zlib gzips
have libprotobuf-c || need="$need libprotobuf-c-dev"
command -v protoc-c >/dev/null 2>&1 || need="$need protobuf-c-compiler"
have zlib || need="$need zlib1g-dev"
# report --debuginfod (src/symbols/dbgserver.c)
have libdebuginfod || need="$need libdebuginfod-dev"

if [ "$1" = --tests ]; then
	command -v python3 >/dev/null 2>&1 || need="$need python3"
	command -v file >/dev/null 2>&1 || need="$need file"
	command -v strace >/dev/null 2>&1 || need="$need strace"
	# x86_64: Capstone, the oracle of the entry check's decoder in test_entrycheck (heaptrace
	# does not link it), over static archives that keep their AVX-512 assembly's symbols, and
	# libc's debug files
	if [ "$(uname -m)" = x86_64 ]; then
		have capstone || need="$need libcapstone-dev"
		have libcrypto || need="$need libssl-dev"
		[ -e /usr/include/gcrypt.h ] || need="$need libgcrypt20-dev"
	fi
	dpkg -s libc6-dbg >/dev/null 2>&1 || need="$need libc6-dbg"
	# the core-file tests dump a waiting process with gcore
	command -v gcore >/dev/null 2>&1 || need="$need gdb"
	# targets built against other allocators (tests/targets/Makefile, tests/e2e/test_musl.py)
	command -v musl-gcc >/dev/null 2>&1 || need="$need musl-tools"
	[ -e /usr/include/jemalloc/jemalloc.h ] || need="$need libjemalloc-dev"
	[ -e /usr/include/gperftools/tcmalloc.h ] || need="$need libgoogle-perftools-dev"
	[ -e /usr/include/mimalloc.h ] || need="$need libmimalloc-dev"
	# broken logs made with zstd; valgrind's massif and sqlite3 as programs to compare with
	command -v zstd >/dev/null 2>&1 || need="$need zstd"
	command -v valgrind >/dev/null 2>&1 || need="$need valgrind"
	command -v sqlite3 >/dev/null 2>&1 || need="$need sqlite3"
	command -v heaptrack_print >/dev/null 2>&1 || need="$need heaptrack"
	# heaptrack_gui must open report --format=heaptrack (tests/e2e/test_heaptrack_gui.py):
	# offscreen, and on Xvfb, whose screenshot (xwd, netpbm) of its Summary is read by OCR
	command -v heaptrack_gui >/dev/null 2>&1 || need="$need heaptrack-gui"
	command -v Xvfb >/dev/null 2>&1 || need="$need xvfb"
	command -v xwd >/dev/null 2>&1 || need="$need x11-apps"
	command -v pamcut >/dev/null 2>&1 || need="$need netpbm"
	command -v tesseract >/dev/null 2>&1 || need="$need tesseract-ocr tesseract-ocr-eng"
	# the --format=html pages, and speedscope opening --format=pprof, are checked in headless
	# chromium, driven by playwright-core (npm; tests/html/ pins both); node's JavaScript frames
	# are named from its perf map (tests/e2e/test_jit.py). A node from elsewhere brings its own
	# npm: Debian's only where there is none.
	command -v chromium >/dev/null 2>&1 || need="$need chromium"
	command -v node >/dev/null 2>&1 || need="$need nodejs"
	command -v npm >/dev/null 2>&1 || need="$need npm"
	# the terminal --live's tests drive (tests/e2e/test_live.py)
	command -v tmux >/dev/null 2>&1 || need="$need tmux"
	# Debian's own interpreter, the second one test_pymalloc and test_pyframes trace (libpython
	# linked in statically, link-time optimised, stripped; pyenv's is the other)
	[ -x /usr/bin/python3.11 ] || need="$need python3.11"
	# the pprof test builds Google's pprof from Debian's Go sources, offline (GOPATH mode);
	# the --serve tests fetch heaptrace's endpoint with Go's own "go tool pprof"
	command -v go >/dev/null 2>&1 || need="$need golang-go"
	# the --serve tests start Prometheus to scrape heaptrace's /metrics (tests/e2e/test_serve.py)
	command -v prometheus >/dev/null 2>&1 || need="$need prometheus"
	gocode=/usr/share/gocode/src/github.com
	[ -d $gocode/google/pprof ] || need="$need golang-github-google-pprof-dev"
	[ -d $gocode/chzyer/readline ] || need="$need golang-github-chzyer-readline-dev"
	[ -d $gocode/ianlancetaylor/demangle ] || need="$need golang-github-ianlancetaylor-demangle-dev"
fi

[ -z "$need" ] && exit 0
echo "heaptrace: installing:$need"
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $need
