build-dev/src/log.o: src/log.c include/log.h
include/log.h:
