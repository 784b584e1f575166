build-dev/src/stubs.o: src/stubs.c include/calls.h include/breakpoint.h \
 include/arch.h include/maps.h include/process.h include/guard.h \
 include/hooks.h include/retlog.h include/table.h include/entrycheck.h \
 include/log.h include/maps.h include/process.h include/remote.h \
 arch/x86_64/stub_arch.h include/arch.h include/stubs.h include/symbols.h \
 include/report.h include/unwind.h include/util.h
include/calls.h:
include/breakpoint.h:
include/arch.h:
include/maps.h:
include/process.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
include/entrycheck.h:
include/log.h:
include/maps.h:
include/process.h:
include/remote.h:
arch/x86_64/stub_arch.h:
include/arch.h:
include/stubs.h:
include/symbols.h:
include/report.h:
include/unwind.h:
include/util.h:
