# scan/: the ELF analyser, as a static archive for the command, a shared
# library that the runtime loads only on a plan-cache miss, and xom-scan.

SCAN_SRC := scan/util.c scan/x86.c scan/elf.c scan/ehframe.c scan/disasm.c \
	scan/flowinsn.c scan/flowop.c scan/flowstack.c scan/flowwin.c scan/flow.c scan/classify.c scan/gadgets.c scan/surface.c scan/scan.c
SCAN_OBJ := $(SCAN_SRC:%.c=$(B)/%.o)
SCAN_LIBS := -lcapstone -lelf -lpthread

ALL += $(B)/xom-scan $(B)/libxom-scan.so

$(B)/libxom-scan.a: $(SCAN_OBJ)
	rm -f $@ && ar rcs $@ $^

# Exports exactly the functions of scan/xom_scan.h.
$(B)/libxom-scan.so: $(SCAN_OBJ) scan/exports.map
	$(CC) -shared -o $@ $(SCAN_OBJ) $(XLDFLAGS) -Wl,--no-undefined \
		-Wl,--version-script=scan/exports.map -Wl,-z,now,-z,relro $(SCAN_LIBS)

$(B)/xom-scan: $(B)/scan/xom-scan.o $(COMMON_OBJ) $(B)/libxom-scan.a
	$(CC) -o $@ $^ $(XLDFLAGS) $(SCAN_LIBS)
