build-dev/src/guard.o: src/guard.c include/arch.h include/breakpoint.h \
 include/arch.h include/maps.h include/guard.h arch/x86_64/guard_arch.h \
 include/inject.h include/seccomp.h include/log.h include/process.h \
 include/breakpoint.h include/guard.h include/hooks.h include/retlog.h \
 include/table.h include/remote.h include/util.h
include/arch.h:
include/breakpoint.h:
include/arch.h:
include/maps.h:
include/guard.h:
arch/x86_64/guard_arch.h:
include/inject.h:
include/seccomp.h:
include/log.h:
include/process.h:
include/breakpoint.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
include/remote.h:
include/util.h:
