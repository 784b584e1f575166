build-dev/src/entrycheck.o: src/entrycheck.c include/entrycheck.h \
 include/symbols.h include/hooks.h include/maps.h include/report.h \
 include/table.h /usr/include/capstone/capstone.h \
 /usr/include/capstone/platform.h /usr/include/capstone/arm.h \
 /usr/include/capstone/arm64.h /usr/include/capstone/m68k.h \
 /usr/include/capstone/mips.h /usr/include/capstone/ppc.h \
 /usr/include/capstone/sparc.h /usr/include/capstone/systemz.h \
 /usr/include/capstone/x86.h /usr/include/capstone/xcore.h \
 /usr/include/capstone/tms320c64x.h /usr/include/capstone/m680x.h \
 /usr/include/capstone/evm.h include/util.h
include/entrycheck.h:
include/symbols.h:
include/hooks.h:
include/maps.h:
include/report.h:
include/table.h:
/usr/include/capstone/capstone.h:
/usr/include/capstone/platform.h:
/usr/include/capstone/arm.h:
/usr/include/capstone/arm64.h:
/usr/include/capstone/m68k.h:
/usr/include/capstone/mips.h:
/usr/include/capstone/ppc.h:
/usr/include/capstone/sparc.h:
/usr/include/capstone/systemz.h:
/usr/include/capstone/x86.h:
/usr/include/capstone/xcore.h:
/usr/include/capstone/tms320c64x.h:
/usr/include/capstone/m680x.h:
/usr/include/capstone/evm.h:
include/util.h:
