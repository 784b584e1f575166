build-dev/src/inject.o: src/inject.c include/arch.h include/inject.h \
 include/seccomp.h include/log.h include/process.h include/arch.h \
 include/breakpoint.h include/maps.h include/guard.h include/hooks.h \
 include/retlog.h include/table.h include/session.h include/tracer.h \
 include/report.h include/util.h
include/arch.h:
include/inject.h:
include/seccomp.h:
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
