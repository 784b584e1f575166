build-dev/src/breakpoint.o: src/breakpoint.c include/breakpoint.h \
 include/arch.h include/maps.h include/log.h include/remote.h \
 include/retlog.h include/util.h
include/breakpoint.h:
include/arch.h:
include/maps.h:
include/log.h:
include/remote.h:
include/retlog.h:
include/util.h:
