build-dev/src/util.o: src/util.c include/util.h
include/util.h:
