build-dev/arch/x86_64/arch.o: arch/x86_64/arch.c include/arch.h
include/arch.h:
