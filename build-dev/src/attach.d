build-dev/src/attach.o: src/attach.c include/attach.h include/dispatch.h \
 include/process.h include/arch.h include/breakpoint.h include/maps.h \
 include/guard.h include/hooks.h include/retlog.h include/table.h \
 include/events.h include/image.h include/log.h include/process.h \
 include/session.h include/tracer.h include/report.h
include/attach.h:
include/dispatch.h:
include/process.h:
include/arch.h:
include/breakpoint.h:
include/maps.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
include/events.h:
include/image.h:
include/log.h:
include/process.h:
include/session.h:
include/tracer.h:
include/report.h:
