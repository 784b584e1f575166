build-dev/src/table.o: src/table.c include/table.h include/util.h
include/table.h:
include/util.h:
