build-dev/arch/x86_64/stubcode.o: arch/x86_64/stubcode.c \
 arch/x86_64/stub_arch.h
arch/x86_64/stub_arch.h:
