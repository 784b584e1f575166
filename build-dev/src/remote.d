build-dev/src/remote.o: src/remote.c include/arch.h include/events.h \
 include/log.h include/remote.h
include/arch.h:
include/events.h:
include/log.h:
include/remote.h:
