# SPDX-License-Identifier: GPL-2.0-only
# heaptrace: heap allocation tracer built on ptrace.

VERSION     := 0.1.0
ARCH        ?= $(shell uname -m | sed -e 's/^armv.*/arm/' -e 's/^mips64.*/mips64/')
CROSS_COMPILE ?=
CC          := $(CROSS_COMPILE)gcc
PKG_CONFIG  ?= pkg-config
DEPTH       ?= 8
PREFIX      ?= /usr/local
DESTDIR     ?=
PYTHON      ?= python3

# Cross builds: make ARCH=aarch64 CROSS_COMPILE=aarch64-linux-gnu- SYSROOT=/path/to/sysroot
# (the target's libraries and headers, e.g. Debian packages unpacked with dpkg-deb -x); pkg-config
# then looks only in the sysroot. STATIC=1 links one self-contained executable. OUT names the
# executable (default ./heaptrace); with BUILD a cross build stays out of the native tree.
SYSROOT     ?=
STATIC      ?=
# SANITIZE=1 builds the tool and the unit tests with ASan and UBSan (not the traced targets)
# into build-san/, the tool as build-san/heaptrace, so the normal build is left alone.
SANITIZE    ?=
# WERROR=1 makes every warning of heaptrace's and the unit tests' compiles an error (CI).
WERROR      ?=
# The entry modes make check runs the end-to-end tests in (tests/run.py --modes).
MODES       ?= stubs,breakpoint
# make check K="test_a. test_b.": only the tests whose names contain one of these (tests/run.py -k)
K           ?=
ifneq ($(SANITIZE),)
BUILD       := build-san
OUT         ?= $(BUILD)/heaptrace
SAN_FLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer
# halt_on_error makes UB fail the tests. LeakSanitizer stays on: its stop-the-world at exit
# (it ptraces heaptrace's own threads) works in every test, tracees or not.
SAN_ENV     := UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
else
BUILD       := build
OUT         ?= heaptrace
endif
ARCHES      ?= aarch64 arm mips64
# make fuzz: seconds of the whole fuzz pass, and its seed (default: from the clock)
FUZZ_SECONDS ?= 120
FUZZ_SEED   ?=
ifneq ($(SYSROOT),)
TRIPLET     := $(shell $(CC) -dumpmachine)
PKG_ENV     := PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) \
               PKG_CONFIG_LIBDIR=$(SYSROOT)/usr/lib/$(TRIPLET)/pkgconfig:$\
$(SYSROOT)/usr/share/pkgconfig
SYSROOT_FLAGS := --sysroot=$(SYSROOT)
endif

PKGS        := libunwind-ptrace libdw libelf libzstd
# Capstone is the test oracle of the x86-64 decoder of the entry stubs' safety check
# (arch/x86_64/decoder.c): only tests/unit/test_entrycheck.c links it. heaptrace does not (it
# cost 9.5 ms of relocations at every start).
ifeq ($(ARCH),x86_64)
ifneq ($(shell $(PKG_ENV) $(PKG_CONFIG) --exists capstone && echo yes),)
CAPSTONE_DEF := -DHAVE_CAPSTONE $(shell $(PKG_ENV) $(PKG_CONFIG) --cflags capstone)
CAPSTONE_LIBS := $(shell $(PKG_ENV) $(PKG_CONFIG) --libs capstone)
endif
endif
# ncursesw draws --live's terminal view (src/ui/live.c). Optional: without it (and in STATIC builds,
# whose sysroots need not have it) --live writes plain text frames only.
ifeq ($(STATIC),)
ifneq ($(shell $(PKG_ENV) $(PKG_CONFIG) --exists ncursesw && echo yes),)
PKGS        += ncursesw
NCURSES_DEF := -DHAVE_NCURSES
endif
endif
# --format=pprof (src/output/pprof.c): profile.proto encoded by libprotobuf-c, from the code protoc-c
# makes out of third_party/pprof/profile.proto, and gzipped by zlib; without them (a cross
# sysroot without libprotobuf-c) heaptrace says it was built without pprof output.
PROTOC_C    ?= protoc-c
ifneq ($(shell $(PKG_ENV) $(PKG_CONFIG) --exists libprotobuf-c zlib && command -v $(PROTOC_C)),)
PKGS        += libprotobuf-c zlib
PPROF_DEF   := -DHAVE_PPROF -I$(BUILD)/gen
PPROF_OBJS  := $(BUILD)/gen/profile.pb-c.o
endif
# libdebuginfod for report --debuginfod (src/symbols/dbgserver.c): its header at build time, the library
# opened with dlopen only when --debuginfod is given (linked in, it and libcurl's 30 shared objects
# were loaded at every start); not in static builds (it needs libcurl).
ifeq ($(STATIC),)
ifneq ($(shell $(PKG_ENV) $(PKG_CONFIG) --exists libdebuginfod && echo yes),)
DEBUGINFOD_DEF := -DHAVE_DEBUGINFOD $(shell $(PKG_ENV) $(PKG_CONFIG) --cflags libdebuginfod 2>/dev/null)
endif
endif
PKG_CFLAGS  := $(shell $(PKG_ENV) $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    := $(shell $(PKG_ENV) $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
ifneq ($(STATIC),)
# The .pc files do not name everything a static link needs (libunwind's arch library).
# --eh-frame-hdr: gcc leaves PT_GNU_EH_FRAME out of -static links, and libunwind needs it.
UNW_ARCH    := $(patsubst mips64,mips,$(ARCH))
PKG_LIBS    := $(shell $(PKG_ENV) $(PKG_CONFIG) --libs-only-L $(PKGS) 2>/dev/null) \
               -Wl,--start-group -lunwind-ptrace -lunwind-generic -lunwind-$(UNW_ARCH) -lunwind \
               -ldw -lelf -Wl,--end-group \
               $(if $(PPROF_DEF),-lprotobuf-c) -lzstd -lz -llzma \
               -lbz2 -lpthread -ldl
HT_LDFLAGS  += -static -Wl,--eh-frame-hdr
endif
HT_LDFLAGS  += $(SYSROOT_FLAGS) $(SAN_FLAGS)

# CFLAGS and LDFLAGS are the user's (make CFLAGS=-O0 keeps everything below); HT_CFLAGS and
# HT_LDFLAGS are what the build needs and come first.
CFLAGS      ?= -O2 -g
HT_CFLAGS   := -Wall -Wextra -std=gnu11 -Isrc -I. -iquote arch/$(ARCH) $(PKG_CFLAGS) \
               -DHEAPTRACE_DEPTH=$(DEPTH) -DHEAPTRACE_VERSION=\"$(VERSION)\" -MMD -MP $(DEBUGINFOD_DEF) \
               $(NCURSES_DEF) $(PPROF_DEF) \
               $(SYSROOT_FLAGS) $(SAN_FLAGS)
ifneq ($(WERROR),)
HT_CFLAGS   += -Werror
endif
LDLIBS      := $(PKG_LIBS) -lstdc++ -pthread

SRCS        := $(wildcard src/*/*.c) $(wildcard arch/$(ARCH)/*.c)
OBJS        := $(patsubst %.c,$(BUILD)/%.o,$(SRCS)) $(BUILD)/htmlpage.o $(PPROF_OBJS)

# --format=html's page (src/output/html.c): html/'s files and the vendored library, compiled in as
# byte arrays html_<file name>[] (NUL-terminated), so heaptrace builds with no npm and the
# page needs nothing at run time. Plain const data: no relocations, static builds included.
HTML_PARTS  := html/page.html html/page.css html/page.js html/vendor/lib.min.js \
	       html/vendor/d3-flame-graph.css

# Rebuild when the flags change (make DEPTH=30 after a plain make): they are kept in a file
# the objects depend on, rewritten only when different.
FLAGS_NOW   := $(CC) $(HT_CFLAGS) $(CFLAGS) | $(HT_LDFLAGS) $(LDFLAGS) $(LDLIBS)
FLAGS_FILE  := $(BUILD)/flags
ifneq ($(FLAGS_NOW),$(file < $(FLAGS_FILE)))
$(shell mkdir -p $(BUILD))
$(file > $(FLAGS_FILE),$(FLAGS_NOW))
endif
$(OBJS): $(FLAGS_FILE)
.DEFAULT_GOAL := all

# Pure modules the unit tests link (no ptrace, no libunwind/libdw).
PURE        := src/util/util.c src/util/log.c src/util/maps.c src/heap/table.c src/heap/blockset.c src/heap/hooks.c \
	       src/heap/timeline.c src/heap/custom.c src/target/retlog.c src/target/wakers.c \
	       src/unwind/frames.c src/unwind/pylayout.c src/unwind/pytss.c src/unwind/pymemo.c \
	       src/inventory/inventory.c src/inventory/invglibc.c src/inventory/invmusl.c \
	       src/patch/seccomp.c src/patch/copysize.c src/output/report.c src/output/reportjson.c src/output/blockview.c \
	       src/output/labels.c src/symbols/wrappers.c src/symbols/perfmap.c src/serve/http.c \
	       src/serve/listen.c src/serve/metrics.c
UNIT_ARCHES := $(wildcard arch/*/arch.c) arch/x86_64/decoder.c arch/arm/thumb.c
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
UNIT_BINS   := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRCS))
UNIT_DEPS   := $(wildcard src/*/*.h arch/*.h arch/*/*.h) tests/unit/unittest.h $(FLAGS_FILE)

# Target programs the end-to-end tests trace: built at -O0 and -O2.
TARGET_CFLAGS := -g -fno-inline -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread
TARGET_DIRS := $(sort $(dir $(wildcard tests/targets/*/main.c)))
TARGET_ONE  := $(wildcard tests/targets/*.c) $(wildcard tests/targets/*.cc)

.PHONY: all clean install deps deps-tests demo check unit e2e targets bench check-cross bench-cross html-vendor fuzz

all: $(OUT)

$(OUT): $(OBJS) $(BUILD)/guard.checked
	$(CC) $(HT_LDFLAGS) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

# The guard's code is copied into traced processes (src/patch/guardcode.c): its section must not
# need a relocation, or the copy would point back into heaptrace.
# So must the entry stubs' code (arch/<arch>/stubcode.c, where the arch has it).
STUB_OBJS   := $(patsubst %.c,$(BUILD)/%.o,$(wildcard arch/$(ARCH)/stubcode.c))
$(BUILD)/guard.checked: $(BUILD)/src/patch/guardcode.o $(STUB_OBJS)
	@if $(CROSS_COMPILE)readelf -rW $< | grep -q "'\.rela\?ht_guard'"; then \
		echo "$<: the ht_guard section has relocations" >&2; exit 1; fi
	@for o in $(STUB_OBJS); do if $(CROSS_COMPILE)readelf -rW $$o | \
		grep -q "'\.rela\?ht_stub'"; then \
		echo "$$o: the ht_stub section has relocations" >&2; exit 1; fi; done
	@touch $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HT_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h: third_party/pprof/profile.proto
	@mkdir -p $(BUILD)/gen
	$(PROTOC_C) --c_out=$(BUILD)/gen --proto_path=third_party/pprof $<

$(BUILD)/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c $(FLAGS_FILE)
	$(CC) $(HT_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/src/output/pprof.o: $(if $(PPROF_DEF),$(BUILD)/gen/profile.pb-c.h)

$(BUILD)/htmlpage.c: $(HTML_PARTS)
	@mkdir -p $(dir $@)
	@{ echo '/* generated by the Makefile from $(HTML_PARTS) */'; \
	  for f in $(HTML_PARTS); do \
		echo "extern const char html_$$(basename $$f | tr -c 'a-zA-Z0-9\n' _)[];"; \
		echo "const char html_$$(basename $$f | tr -c 'a-zA-Z0-9\n' _)[] = {"; \
		od -An -v -tx1 $$f | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0 };'; \
	  done; } > $@.tmp && mv $@.tmp $@

$(BUILD)/htmlpage.o: $(BUILD)/htmlpage.c
	$(CC) $(HT_CFLAGS) $(CFLAGS) -c -o $@ $<

# Rebuilds html/vendor/ from the npm registry at the versions html/package-lock.json pins.
html-vendor:
	sh html/vendor.sh

# Installs what the build needs when it is missing (Debian/Ubuntu, apt-get); the test suite's
# tools come with deps-tests, which make check runs.
deps:
	@sh tests/deps.sh

deps-tests:
	@sh tests/deps.sh --tests

$(BUILD)/unit/%: tests/unit/%.c $(PURE) $(UNIT_ARCHES) $(UNIT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O1 $(SAN_FLAGS) -Isrc -I. -Itests/unit -o $@ $< $(PURE) \
		$(UNIT_ARCHES)

# Symbol lookup needs libelf/libdw and a fixture library to read.
$(BUILD)/unit/fixture_alloc.so: tests/unit/fixture_alloc.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O1 -fno-builtin -o $@ $<

$(BUILD)/unit/test_symbols: tests/unit/test_symbols.c src/symbols/symbols.c src/symbols/inlines.c $(PURE) $(UNIT_DEPS) \
		$(BUILD)/unit/fixture_alloc.so
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O0 $(SAN_FLAGS) -Isrc -I. -Itests/unit $(PKG_CFLAGS) \
		-DFIXTURE=\"$(abspath $(BUILD)/unit/fixture_alloc.so)\" -o $@ $< src/symbols/symbols.c src/symbols/inlines.c \
		$(PURE) $(LDLIBS) -ldl

# The .debug_frame interpreter decodes entries with libdw.
$(BUILD)/unit/test_cfirows: tests/unit/test_cfirows.c src/unwind/cfirows.c $(UNIT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O1 $(SAN_FLAGS) -Isrc -I. -Itests/unit $(PKG_CFLAGS) \
		-o $@ $< src/unwind/cfirows.c $(LDLIBS)

# A function's argument words from its DWARF: a fixture built with -g, and fixture_alloc.so
# (without) for a file that says nothing.
$(BUILD)/unit/fixture_params.so: tests/unit/fixture_params.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -g -O1 -o $@ $<

$(BUILD)/unit/test_params: tests/unit/test_params.c src/symbols/params.c src/symbols/symbols.c src/symbols/inlines.c \
		$(PURE) $(UNIT_DEPS) $(BUILD)/unit/fixture_params.so $(BUILD)/unit/fixture_alloc.so
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O0 $(SAN_FLAGS) -Isrc -I. -Itests/unit $(PKG_CFLAGS) \
		-DFIXTURE=\"$(abspath $(BUILD)/unit/fixture_params.so)\" \
		-DFIXTURE_NODEBUG=\"$(abspath $(BUILD)/unit/fixture_alloc.so)\" -o $@ $< \
		src/symbols/params.c src/symbols/symbols.c src/symbols/inlines.c $(PURE) $(LDLIBS) -ldl

$(BUILD)/unit/fixture_entry.so: tests/unit/fixture_entry.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O1 -o $@ $<

# gcc's AVX-512 code for the decoder's oracle (x86_64 only).
$(BUILD)/unit/fixture_avx512.so: tests/unit/fixture_avx512.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O3 -march=sapphirerapids -mprefer-vector-width=512 -o $@ $<

ifeq ($(ARCH),x86_64)
AVX512_FIXTURE := $(BUILD)/unit/fixture_avx512.so
endif

# The entry check's x86-64 decoder against Capstone, its oracle (x86_64 with it installed), over
# the functions of this machine's libraries.
$(BUILD)/unit/test_entrycheck: tests/unit/test_entrycheck.c src/patch/entrycheck.c src/symbols/symbols.c \
		src/symbols/inlines.c $(PURE) $(UNIT_ARCHES) \
		$(UNIT_DEPS) $(BUILD)/unit/fixture_entry.so $(AVX512_FIXTURE)
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O1 $(SAN_FLAGS) -Isrc -I. -Itests/unit $(PKG_CFLAGS) \
		$(CAPSTONE_DEF) -DFIXTURE=\"$(abspath $(BUILD)/unit/fixture_entry.so)\" \
		$(if $(AVX512_FIXTURE),-DFIXTURE_AVX512=\"$(abspath $(AVX512_FIXTURE))\") -o $@ $< \
		src/patch/entrycheck.c src/symbols/symbols.c src/symbols/inlines.c $(PURE) $(UNIT_ARCHES) $(LDLIBS) \
		$(CAPSTONE_LIBS) -ldl

# The entry stubs' code runs in the test itself (where the arch has it).
$(BUILD)/unit/test_stubs: tests/unit/test_stubs.c $(wildcard arch/$(ARCH)/stubcode.c) $(PURE) \
		$(UNIT_ARCHES) $(UNIT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O1 $(SAN_FLAGS) -Isrc -I. -Itests/unit -iquote arch/$(ARCH) \
		-o $@ $< $(wildcard arch/$(ARCH)/stubcode.c) $(PURE) $(UNIT_ARCHES) -pthread

# The ring's record parser, with the arch's record layout.
$(BUILD)/unit/test_ring: tests/unit/test_ring.c src/account/ringrec.c $(PURE) $(UNIT_ARCHES) \
		$(UNIT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O1 $(SAN_FLAGS) -Isrc -I. -Itests/unit -iquote arch/$(ARCH) \
		-o $@ $< src/account/ringrec.c $(PURE) $(UNIT_ARCHES)

# The accounting core (account/acct.c), driven without a process.
$(BUILD)/unit/test_calls: tests/unit/test_calls.c src/account/acct.c $(PURE) $(UNIT_ARCHES) \
		$(UNIT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O1 $(SAN_FLAGS) -Isrc -I. -Itests/unit -o $@ $< \
		src/account/acct.c $(PURE) $(UNIT_ARCHES)

# The 3.11 offsets of src/unwind/pylayout.c are checked against CPython's own headers where they
# are installed (pyenv's, or PY311_INCLUDE=DIR); without them that check is skipped.
PY311_INCLUDE ?= $(firstword $(wildcard /root/.pyenv/versions/3.11.*/include/python3.11 \
		  /usr/include/python3.11))
PY311_DEF := $(if $(wildcard $(PY311_INCLUDE)/internal/pycore_frame.h),-DHAVE_PY311 \
	     -isystem $(PY311_INCLUDE),)
$(BUILD)/unit/test_pylayout: tests/unit/test_pylayout.c tests/unit/pyoffsets.c $(PURE) \
		$(UNIT_ARCHES) $(UNIT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O1 $(SAN_FLAGS) -Isrc -I. $(PY311_DEF) -c \
		-o $@-offsets.o tests/unit/pyoffsets.c
	$(CC) -Wall -Wextra -std=gnu11 -g -O1 $(SAN_FLAGS) -Isrc -I. -Itests/unit -o $@ $< \
		$@-offsets.o $(PURE) $(UNIT_ARCHES)

# WERROR=1: the unit tests' rules each name their own flags, but all compile with $(CC)
ifneq ($(WERROR),)
$(BUILD)/unit/%: CC += -Werror
endif

unit: $(UNIT_BINS)

targets:
	@$(MAKE) --no-print-directory -f tests/targets/Makefile BUILD=$(BUILD)/targets

# Unit tests, then end-to-end tests; the runner ends with "N passed, M failed".
check: deps-tests
	@$(MAKE) --no-print-directory all unit targets
	$(SAN_ENV) $(PYTHON) tests/run.py --build $(BUILD) --heaptrace $(OUT) --modes $(MODES) \
		$(foreach k,$(K),-k $(k))

demo: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -f tests/targets/Makefile BUILD=$(BUILD)/targets $(BUILD)/targets/demo
	./heaptrace $(BUILD)/targets/demo

# A bounded fuzz pass (tests/fuzz.py): mutated logs, cores and ELF files fed to heaptrace's
# readers, meant for the sanitizer build (make fuzz SANITIZE=1). Ends with "N passed, M failed".
fuzz:
	@$(MAKE) --no-print-directory all targets
	$(SAN_ENV) $(PYTHON) tests/fuzz.py --build $(BUILD) --heaptrace $(OUT) \
		--seconds $(FUZZ_SECONDS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

# Cross-builds heaptrace and the targets for each of ARCHES, boots each in qemu-system, traces the
# targets in the guest and checks the reports here (tests/xarch/xarch.py; everything it fetches
# and builds stays in build/xarch/). Ends with "N passed, M failed".
check-cross:
	@sh tests/xarch/deps.sh
	$(PYTHON) tests/xarch/xarch.py --arches "$(ARCHES)"

bench: deps-tests
	@$(MAKE) --no-print-directory all targets
	$(PYTHON) tests/bench/bench.py --build $(BUILD)
	$(PYTHON) tests/bench/serve_memory.py --build $(BUILD)

# The cost of a traced call in each architecture's guest of check-cross, against the same calls
# untraced and a bare ptrace stop there (tests/xarch/xarch.py --bench; prints, checks nothing).
bench-cross:
	@sh tests/xarch/deps.sh
	$(PYTHON) tests/xarch/xarch.py --arches "$(ARCHES)" --bench

install: $(OUT)
	install -D -m 755 $(OUT) $(DESTDIR)$(PREFIX)/bin/heaptrace
	install -D -m 644 man/heaptrace.1 $(DESTDIR)$(PREFIX)/share/man/man1/heaptrace.1

clean:
	rm -rf $(BUILD) $(OUT)

-include $(OBJS:.o=.d)
