# loader/: the runtime, linked into both doors (libxom.so, see
# preload/preload.mk, and the LD_AUDIT module libxom-audit.so), and
# loader/plan/: the plan file, shared with the xom-plan helper that runs the
# scanner on a plan-cache miss.  The runtime is compiled once (PIC, hidden);
# neither library links Capstone or libelf.

PLAN_FORMAT_OBJ := $(B)/loader/plan/format.o
RUNTIME_OBJ := $(addprefix $(B)/loader/,start.o options.o say.o pkey.o \
	elfmem.o objects.o cache.o helper.o apply.o profile.o fault.o) \
	$(PLAN_FORMAT_OBJ)
RUNTIME_LDFLAGS := -shared -Wl,--no-undefined -Wl,-z,now,-z,relro \
	-Wl,--hash-style=both

ALL += $(B)/libxom-audit.so $(B)/xom-plan

# Exports la_* and xom_audit_api only.
$(B)/libxom-audit.so: $(RUNTIME_OBJ) $(B)/loader/audit.o loader/audit.map
	$(CC) -o $@ $(RUNTIME_OBJ) $(B)/loader/audit.o $(XLDFLAGS) \
		$(RUNTIME_LDFLAGS) -Wl,--version-script=loader/audit.map

# Found by the runtime next to its own library, so libxom-scan.so is found
# next to it too.
XOM_PLAN_OBJ := $(B)/loader/plan/xom-plan.o $(B)/loader/plan/build.o \
	$(PLAN_FORMAT_OBJ)
$(B)/xom-plan: $(XOM_PLAN_OBJ) $(B)/libxom-scan.so
	$(CC) -o $@ $(XOM_PLAN_OBJ) $(XLDFLAGS) -L$(B) -lxom-scan \
		-Wl,-rpath,'$$ORIGIN'

# ---- tests (native; the enforcement tests run in the emulated-PKU VM) ----

RT_BIN := $(B)/tests/runtime
RT_TESTS := $(RT_BIN)/xomtest $(RT_BIN)/libtarget.so
ALL += $(RT_TESTS)

$(RT_BIN)/xomtest: tests/runtime/xomtest.c loader/plan/format.c \
		loader/plan/xom_plan.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ \
		tests/runtime/xomtest.c loader/plan/format.c -ldl -pthread

$(RT_BIN)/lib%.so: tests/runtime/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC -o $@ $<

.PHONY: check-runtime runtime-tests
runtime-tests: $(B)/libxom.so $(B)/libxom-audit.so $(B)/xom-plan $(RT_TESTS)

CHECKS += check-runtime
QUICK += check-runtime
check-runtime: runtime-tests
	@B=$(B) tests/runtime/native.sh
