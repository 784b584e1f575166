build-dev/src/hooks.o: src/hooks.c include/hooks.h
include/hooks.h:
