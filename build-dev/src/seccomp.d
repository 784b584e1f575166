build-dev/src/seccomp.o: src/seccomp.c include/seccomp.h
include/seccomp.h:
