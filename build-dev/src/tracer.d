build-dev/src/tracer.o: src/tracer.c include/arch.h include/attach.h \
 include/calls.h include/breakpoint.h include/arch.h include/maps.h \
 include/process.h include/guard.h include/hooks.h include/retlog.h \
 include/table.h include/cpu.h include/detach.h include/dispatch.h \
 include/events.h include/hooks.h include/launch.h include/log.h \
 include/process.h include/report.h include/session.h include/tracer.h \
 include/report.h include/stubs.h include/symbols.h include/tracer.h \
 include/util.h
include/arch.h:
include/attach.h:
include/calls.h:
include/breakpoint.h:
include/arch.h:
include/maps.h:
include/process.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
include/cpu.h:
include/detach.h:
include/dispatch.h:
include/events.h:
include/hooks.h:
include/launch.h:
include/log.h:
include/process.h:
include/report.h:
include/session.h:
include/tracer.h:
include/report.h:
include/stubs.h:
include/symbols.h:
include/tracer.h:
include/util.h:
