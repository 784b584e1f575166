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

PKGS        := libunwind-ptrace libdw libelf
PKG_CFLAGS  := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

CFLAGS      ?= -O2 -g
CFLAGS      += -Wall -Wextra -std=gnu11 -Iinclude -iquote arch/$(ARCH) $(PKG_CFLAGS) \
               -DHEAPTRACE_DEPTH=$(DEPTH) -DHEAPTRACE_VERSION=\"$(VERSION)\" -MMD -MP
LDLIBS      := $(PKG_LIBS) -lstdc++

BUILD       := build
SRCS        := $(wildcard src/*.c) $(wildcard arch/$(ARCH)/*.c)
OBJS        := $(patsubst %.c,$(BUILD)/%.o,$(SRCS))

# Pure modules the unit tests link (no ptrace, no libunwind/libdw).
PURE        := src/table.c src/report.c src/hooks.c src/maps.c src/util.c src/log.c
UNIT_ARCHES := $(wildcard arch/*/arch.c)
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
UNIT_BINS   := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRCS))

# Target programs the end-to-end tests trace: built at -O0 and -O2.
TARGET_CFLAGS := -g -fno-inline -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread
TARGET_DIRS := $(sort $(dir $(wildcard tests/targets/*/main.c)))
TARGET_ONE  := $(wildcard tests/targets/*.c) $(wildcard tests/targets/*.cc)

.PHONY: all clean install deps demo check unit e2e targets bench

all: heaptrace

heaptrace: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# Installs the build dependencies when pkg-config cannot find them (Debian/Ubuntu, apt-get).
deps:
	@sh tests/deps.sh

$(BUILD)/unit/%: tests/unit/%.c $(PURE) $(UNIT_ARCHES) tests/unit/unittest.h
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O1 -Iinclude -Itests/unit -o $@ $< $(PURE) $(UNIT_ARCHES)

# Symbol lookup needs libelf/libdw and a fixture library to read.
$(BUILD)/unit/fixture_alloc.so: tests/unit/fixture_alloc.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O1 -fno-builtin -o $@ $<

$(BUILD)/unit/test_symbols: tests/unit/test_symbols.c src/symbols.c $(PURE) $(BUILD)/unit/fixture_alloc.so
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -std=gnu11 -g -O0 -Iinclude -Itests/unit $(PKG_CFLAGS) \
		-DFIXTURE=\"$(abspath $(BUILD)/unit/fixture_alloc.so)\" -o $@ $< src/symbols.c $(PURE) $(LDLIBS) -ldl

unit: $(UNIT_BINS)

targets:
	@$(MAKE) --no-print-directory -f tests/targets/Makefile BUILD=$(BUILD)/targets

# Unit tests, then end-to-end tests; the runner ends with "N passed, M failed".
check: deps
	@$(MAKE) --no-print-directory all unit targets
	$(PYTHON) tests/run.py --build $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -f tests/targets/Makefile BUILD=$(BUILD)/targets $(BUILD)/targets/demo
	./heaptrace $(BUILD)/targets/demo

bench: deps
	@$(MAKE) --no-print-directory all
	$(PYTHON) tests/bench/bench.py --build $(BUILD)

install: heaptrace
	install -D -m 755 heaptrace $(DESTDIR)$(PREFIX)/bin/heaptrace
	install -D -m 644 man/heaptrace.1 $(DESTDIR)$(PREFIX)/share/man/man1/heaptrace.1

clean:
	rm -rf $(BUILD) heaptrace

-include $(OBJS:.o=.d)
