build-dev/src/guardcode.o: src/guardcode.c include/guard.h \
 arch/x86_64/guard_arch.h
include/guard.h:
arch/x86_64/guard_arch.h:
