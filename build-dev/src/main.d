build-dev/src/main.o: src/main.c include/arch.h include/events.h \
 include/log.h include/symbols.h include/hooks.h include/maps.h \
 include/report.h include/table.h include/stubs.h include/breakpoint.h \
 include/arch.h include/tracer.h include/util.h
include/arch.h:
include/events.h:
include/log.h:
include/symbols.h:
include/hooks.h:
include/maps.h:
include/report.h:
include/table.h:
include/stubs.h:
include/breakpoint.h:
include/arch.h:
include/tracer.h:
include/util.h:
