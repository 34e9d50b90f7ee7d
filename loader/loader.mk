# loader/: the runtime, linked into both doors (libxom.so, see
# preload/preload.mk, and the LD_AUDIT module libxom-audit.so, see
# audit/audit.mk), and
# loader/plan/: the plan file, shared with the xom-plan helper that runs the
# scanner on a plan-cache miss.  The runtime is compiled once (PIC, hidden);
# neither library links Capstone or libelf.

PLAN_FORMAT_OBJ := $(B)/loader/plan/format.o
# XOM_OPTIONS's parser, which the xom command links too.
OPTIONS_OBJ := $(B)/loader/options.o $(B)/loader/fmt.o
# A door links the runtime's objects, then its own.  objects.o comes
# first: the runtime's small variables share a page, and its tables lie
# after them in .lbss (XOM_COLD in loader.h), the object table's first
# slots first.
RUNTIME_OBJ := $(addprefix $(B)/loader/,objects.o state.o start.o refuse.o settings.o options.o fmt.o say.o \
	pkey.o kernkey.o elfmem.o store.o apply.o fault.o calls.o str.o helper.o \
	arrive.o lookup.o batch.o profile.o storeread.o) $(PLAN_FORMAT_OBJ)
# str.c defines memcpy and friends: the compiler must not turn its loops
# back into calls to them.
$(B)/loader/str.o: CFLAGS += -fno-builtin -fno-tree-loop-distribute-patterns

RUNTIME_LDFLAGS := -shared -Wl,--no-undefined -Wl,-z,now,-z,relro \
	-Wl,--hash-style=both

ALL += $(B)/xom-plan

# The helper is found by the runtime next to its own library.  It is
# linked statically, so that no dynamic linker runs for it and neither
# LD_PRELOAD nor /etc/ld.so.preload can load xom into it.
PLAN_TOOL_OBJ := $(B)/loader/plan/build.o $(B)/loader/plan/store.o \
	$(PLAN_FORMAT_OBJ)
XOM_PLAN_OBJ := $(B)/loader/plan/xom-plan.o $(PLAN_TOOL_OBJ)
#
# The libraries' own static link lines come from pkg-config: elfutils 0.192
# adds -lzstd, for one.  Its libelf.a also calls search-tree functions that
# only elfutils' internal libeu holds, which Debian does not ship (elfutils
# bug 32293): when the link says they are missing, and only then,
# loader/plan/eu-search.c is compiled and the link tried again with it.
XOM_PLAN_LINK = $(CC) -static -o $@ $(XOM_PLAN_OBJ) $(B)/libxom-scan.a $(XLDFLAGS)
EU_SEARCH_OBJ := $(B)/loader/plan/eu-search.o
$(B)/xom-plan: $(XOM_PLAN_OBJ) $(B)/libxom-scan.a loader/plan/eu-search.c
	@libs="$$(pkg-config --static --libs libelf capstone) -pthread" && \
	echo "$(XOM_PLAN_LINK) $$libs" && \
	if ! $(XOM_PLAN_LINK) $$libs 2>$@.log; then \
		if ! grep -q "undefined reference to .eu_" $@.log; then cat $@.log >&2; rm -f $@.log; exit 1; fi; \
		echo "xom-plan: libelf.a lacks elfutils' libeu (elfutils bug 32293); linking loader/plan/eu-search.c"; \
		echo "$(CC) $(CFLAGS) $(XCFLAGS) -c -o $(EU_SEARCH_OBJ) loader/plan/eu-search.c" && \
		$(CC) $(CFLAGS) $(XCFLAGS) -c -o $(EU_SEARCH_OBJ) loader/plan/eu-search.c && \
		echo "$(XOM_PLAN_LINK) $(EU_SEARCH_OBJ) $$libs" && \
		$(XOM_PLAN_LINK) $(EU_SEARCH_OBJ) $$libs; \
	else cat $@.log >&2; fi; rc=$$?; rm -f $@.log; exit $$rc

# ---- tests (native; the enforcement tests run in the emulated-PKU VM) ----

RT_BIN := $(B)/tests/runtime
RT_MANY := $(foreach n,0 1 2 3 4 5 6 7 8 9,$(RT_BIN)/libmany$(n).so)
RT_TESTS := $(RT_BIN)/xomtest $(RT_BIN)/libtarget.so $(RT_BIN)/libxomprobe.so \
	$(RT_BIN)/libswap1.so $(RT_BIN)/libswap2.so $(RT_BIN)/libbulk.so \
	$(RT_BIN)/libxom-tiny.so $(RT_BIN)/manyprog $(RT_BIN)/helperspy $(RT_MANY) \
	$(RT_BIN)/libdata1.so $(RT_BIN)/libdata2.so $(RT_BIN)/kernkey-test
ALL += $(RT_TESTS)

XOMTEST_SRC := tests/runtime/xomtest.c tests/runtime/xomtest-faults.c \
	tests/runtime/xomtest-harden.c loader/plan/format.c
# -rdynamic and no PIE-relative tricks: fault reports name these functions.
$(RT_BIN)/xomtest: $(XOMTEST_SRC) tests/runtime/xomtest.h loader/plan/xom_plan.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $(XOMTEST_SRC) \
		-ldl -pthread

# The kernel key's failure paths (loader/kernkey.c), called directly:
# linked with the runtime's own objects.
$(RT_BIN)/kernkey-test: tests/runtime/kernkey.c $(RUNTIME_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $< $(RUNTIME_OBJ)

# A program that starts with more objects than a small batch has (ten
# libraries of its own), so that its start-up maps the store's index.
$(RT_BIN)/libmany%.so: tests/runtime/many.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC -DMANY=$* -o $@ $<
$(RT_BIN)/manyprog: tests/runtime/many.c $(RT_MANY)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -DMANY_MAIN -o $@ $< -L$(RT_BIN) \
		$(patsubst $(RT_BIN)/lib%.so,-l%,$(RT_MANY)) -Wl,-rpath,'$$ORIGIN'

# Stands in for xom-plan to show what the helper is started with; static,
# as the helper is.
$(RT_BIN)/helperspy: tests/runtime/helperspy.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -static -o $@ $<

$(RT_BIN)/libtarget.so: tests/runtime/target.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC -o $@ $<

$(RT_BIN)/libbulk.so: tests/runtime/bulk.S
	@mkdir -p $(@D)
	$(CC) -shared -nostdlib -o $@ $<

$(RT_BIN)/libxomprobe.so: tests/runtime/probe.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -shared -fPIC -o $@ $<

$(RT_BIN)/libdata%.so: tests/runtime/data.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC -nostdlib -o $@ $<

# Without a build-id, so that the runtime keys their plans by identity.
$(RT_BIN)/libswap%.so: tests/runtime/swap.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC -DSWAP_VALUE=$* \
		-Wl,--build-id=none -o $@ $<

# Both doors with little room of their own: a batch of more than 8
# objects maps its tables, the object table maps a block past 16 slots
# (and again past 32, 64, ...), and the helper takes at most 5 files a
# run, so that a program of a few dozen objects takes every path that one
# of thousands takes.  Tested beside a copy of the helper.
RT_SMALL_DEFS := -DXOM_BATCH_ARRIVALS=8 -DXOM_FIRST_SLOTS=16 -DXOM_RUN_FILES=5
RT_SMALL_SRC := objects arrive lookup helper
RT_SMALL_OBJ := $(patsubst %,$(B)/loader/%-small.o,$(RT_SMALL_SRC))
RT_SMALL_REST := $(filter-out $(patsubst %,$(B)/loader/%.o,$(RT_SMALL_SRC)),$(RUNTIME_OBJ))
$(B)/loader/%-small.o: loader/%.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) $(RT_SMALL_DEFS) -c -o $@ $<
# (The doors' own small libraries are linked in preload/preload.mk and
# audit/audit.mk.)

.PHONY: check-runtime runtime-tests
runtime-tests: $(B)/libxom.so $(B)/libxom-audit.so $(B)/xom-plan $(RT_TESTS) \
	$(RT_BIN)/libxom-small.so $(RT_BIN)/libxom-audit-small.so

CHECKS += check-runtime
QUICK += check-runtime
check-runtime: runtime-tests
	@B=$(B) tests/runtime/native.sh
