build-dev/src/symbols.o: src/symbols.c include/log.h include/symbols.h \
 include/hooks.h include/maps.h include/report.h include/table.h \
 include/util.h
include/log.h:
include/symbols.h:
include/hooks.h:
include/maps.h:
include/report.h:
include/table.h:
include/util.h:
