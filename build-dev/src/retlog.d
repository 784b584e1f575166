build-dev/src/retlog.o: src/retlog.c include/log.h include/retlog.h
include/log.h:
include/retlog.h:
