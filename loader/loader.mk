# loader/: the runtime core, the LD_AUDIT module libxom-audit.so, and the
# xom-plan helper that runs the scanner on a plan-cache miss.  The core is
# compiled once (PIC, hidden) and linked into both libxom.so and
# libxom-audit.so; neither links Capstone or libelf.

LOADER_OBJ := $(B)/loader/core.o $(B)/loader/plan.o $(B)/loader/format.o
RUNTIME_LDFLAGS := -shared -Wl,--no-undefined -Wl,-z,now,-z,relro \
	-Wl,--hash-style=both

ALL += $(B)/libxom-audit.so $(B)/xom-plan

# Exports la_* and xom_audit_api only.
$(B)/libxom-audit.so: $(LOADER_OBJ) $(B)/loader/audit.o loader/audit.map
	$(CC) -o $@ $(LOADER_OBJ) $(B)/loader/audit.o $(XLDFLAGS) \
		$(RUNTIME_LDFLAGS) -Wl,--version-script=loader/audit.map

# Found by the runtime next to its own library, so libxom-scan.so is found
# next to it too.
$(B)/xom-plan: $(B)/loader/plan_tool.o $(B)/loader/format.o $(B)/libxom-scan.so
	$(CC) -o $@ $(B)/loader/plan_tool.o $(B)/loader/format.o $(XLDFLAGS) \
		-L$(B) -lxom-scan -Wl,-rpath,'$$ORIGIN'

# ---- tests (native; the enforcement tests run in the emulated-PKU VM) ----

RT_BIN := $(B)/tests/runtime
RT_TESTS := $(RT_BIN)/xomtest $(RT_BIN)/libtarget.so
ALL += $(RT_TESTS)

$(RT_BIN)/xomtest: tests/runtime/xomtest.c loader/format.c loader/core.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ \
		tests/runtime/xomtest.c loader/format.c -ldl -pthread

$(RT_BIN)/lib%.so: tests/runtime/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC -o $@ $<

.PHONY: check-runtime runtime-tests
runtime-tests: $(B)/libxom.so $(B)/libxom-audit.so $(B)/xom-plan $(RT_TESTS)

CHECKS += check-runtime
QUICK += check-runtime
check-runtime: runtime-tests
	@B=$(B) tests/runtime/native.sh
