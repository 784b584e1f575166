build-dev/src/unwind.o: src/unwind.c include/log.h include/maps.h \
 include/remote.h include/unwind.h include/arch.h include/util.h
include/log.h:
include/maps.h:
include/remote.h:
include/unwind.h:
include/arch.h:
include/util.h:
