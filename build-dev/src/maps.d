build-dev/src/maps.o: src/maps.c include/maps.h include/util.h
include/maps.h:
include/util.h:
