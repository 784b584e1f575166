build-dev/src/process.o: src/process.c include/process.h include/arch.h \
 include/breakpoint.h include/maps.h include/guard.h include/hooks.h \
 include/retlog.h include/table.h include/stubs.h include/unwind.h \
 include/util.h
include/process.h:
include/arch.h:
include/breakpoint.h:
include/maps.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
include/stubs.h:
include/unwind.h:
include/util.h:
