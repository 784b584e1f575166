build-dev/src/image.o: src/image.c include/guard.h include/image.h \
 include/process.h include/arch.h include/breakpoint.h include/maps.h \
 include/guard.h include/hooks.h include/retlog.h include/table.h \
 include/inject.h include/seccomp.h include/log.h include/remote.h \
 include/session.h include/tracer.h include/report.h include/stubs.h \
 include/symbols.h include/unwind.h include/util.h
include/guard.h:
include/image.h:
include/process.h:
include/arch.h:
include/breakpoint.h:
include/maps.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
include/inject.h:
include/seccomp.h:
include/log.h:
include/remote.h:
include/session.h:
include/tracer.h:
include/report.h:
include/stubs.h:
include/symbols.h:
include/unwind.h:
include/util.h:
