build-dev/src/detach.o: src/detach.c include/breakpoint.h include/arch.h \
 include/maps.h include/calls.h include/breakpoint.h include/process.h \
 include/guard.h include/hooks.h include/retlog.h include/table.h \
 include/cpu.h include/detach.h include/dispatch.h include/guard.h \
 include/events.h include/log.h include/process.h include/remote.h \
 include/session.h include/tracer.h include/report.h include/stubs.h
include/breakpoint.h:
include/arch.h:
include/maps.h:
include/calls.h:
include/breakpoint.h:
include/process.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
include/cpu.h:
include/detach.h:
include/dispatch.h:
include/guard.h:
include/events.h:
include/log.h:
include/process.h:
include/remote.h:
include/session.h:
include/tracer.h:
include/report.h:
include/stubs.h:
