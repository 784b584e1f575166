build-dev/src/report.o: src/report.c include/report.h include/table.h \
 include/util.h
include/report.h:
include/table.h:
include/util.h:
