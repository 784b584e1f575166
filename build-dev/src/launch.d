build-dev/src/launch.o: src/launch.c include/cpu.h include/events.h \
 include/launch.h include/log.h include/process.h include/arch.h \
 include/breakpoint.h include/maps.h include/guard.h include/hooks.h \
 include/retlog.h include/table.h include/session.h include/tracer.h \
 include/report.h include/util.h
include/cpu.h:
include/events.h:
include/launch.h:
include/log.h:
include/process.h:
include/arch.h:
include/breakpoint.h:
include/maps.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
include/session.h:
include/tracer.h:
include/report.h:
include/util.h:
