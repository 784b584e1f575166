build-dev/arch/x86_64/regs.o: arch/x86_64/regs.c include/arch.h
include/arch.h:
