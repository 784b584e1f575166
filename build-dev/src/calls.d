build-dev/src/calls.o: src/calls.c include/calls.h include/breakpoint.h \
 include/arch.h include/maps.h include/process.h include/guard.h \
 include/hooks.h include/retlog.h include/table.h include/guard.h \
 include/log.h include/remote.h include/stubs.h include/unwind.h \
 include/util.h
include/calls.h:
include/breakpoint.h:
include/arch.h:
include/maps.h:
include/process.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
include/guard.h:
include/log.h:
include/remote.h:
include/stubs.h:
include/unwind.h:
include/util.h:
