build-dev/src/events.o: src/events.c include/events.h include/util.h
include/events.h:
include/util.h:
