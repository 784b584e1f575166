build-dev/src/cpu.o: src/cpu.c include/cpu.h include/log.h \
 include/process.h include/arch.h include/breakpoint.h include/maps.h \
 include/guard.h include/hooks.h include/retlog.h include/table.h
include/cpu.h:
include/log.h:
include/process.h:
include/arch.h:
include/breakpoint.h:
include/maps.h:
include/guard.h:
include/hooks.h:
include/retlog.h:
include/table.h:
