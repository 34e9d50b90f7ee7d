# tests/runtime/: the runtime's own tests and the test builds of the two
# doors (native here; the enforcement tests run in the emulated-PKU VM).
# Included after loader/, preload/ and audit/, whose objects it links.

RT_BIN := $(B)/tests/runtime
RT_MANY := $(foreach n,0 1 2 3 4 5 6 7 8 9,$(RT_BIN)/libmany$(n).so)
RT_TESTS := $(RT_BIN)/xomtest $(RT_BIN)/libtarget.so $(RT_BIN)/libxomprobe.so \
	$(RT_BIN)/libswap1.so $(RT_BIN)/libswap2.so $(RT_BIN)/libbulk.so \
	$(RT_BIN)/libxom-tiny.so $(RT_BIN)/libxom-read.so $(RT_BIN)/manyprog $(RT_BIN)/helperspy $(RT_MANY) \
	$(RT_BIN)/libdata1.so $(RT_BIN)/libdata2.so $(RT_BIN)/kernkey-test \
	$(RT_BIN)/lock-test
ALL += $(RT_TESTS)

XOMTEST_SRC := tests/runtime/xomtest.c tests/runtime/xomtest-faults.c \
	tests/runtime/xomtest-harden.c formats/format.c
# -rdynamic and no PIE-relative tricks: fault reports name these functions.
$(RT_BIN)/xomtest: $(XOMTEST_SRC) tests/runtime/xomtest.h formats/xom_plan.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $(XOMTEST_SRC) \
		-ldl -pthread

# The kernel key's failure paths (loader/kernkey.c), called directly:
# linked with the runtime's own objects.
$(RT_BIN)/kernkey-test: tests/runtime/kernkey.c $(RUNTIME_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $< $(RUNTIME_OBJ)

# xom's lock and its owner's thread ID in children of every kind.
$(RT_BIN)/lock-test: tests/runtime/lock.c $(RUNTIME_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $< $(RUNTIME_OBJ) -pthread

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
# The doors linked with them.
$(RT_BIN)/libxom-small.so: $(RT_SMALL_OBJ) $(RT_SMALL_REST) $(PRELOAD_OBJ) preload/preload.map
	@mkdir -p $(@D)
	$(CC) -o $@ $(RT_SMALL_OBJ) $(RT_SMALL_REST) $(PRELOAD_OBJ) \
		$(XLDFLAGS) $(RUNTIME_LDFLAGS) $(PRELOAD_LDFLAGS)
$(RT_BIN)/libxom-audit-small.so: $(RT_SMALL_OBJ) $(RT_SMALL_REST) $(AUDIT_OBJ) audit/audit.map
	@mkdir -p $(@D)
	$(CC) -o $@ $(RT_SMALL_OBJ) $(RT_SMALL_REST) $(AUDIT_OBJ) \
		$(XLDFLAGS) $(RUNTIME_LDFLAGS) $(AUDIT_LDFLAGS)

# The preload library that keeps no index between batches, as where the
# kernel's key protects the code (loader/stores.c): its small batches read
# their plans with pread.  The tiny one's plan buffer holds 512 bytes: its
# small batches outgrow it and map the index instead (loader/storeread.c).
$(B)/loader/stores-read.o: loader/stores.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -DXOM_NO_KEPT_INDEX -c -o $@ $<
$(B)/loader/storeread-tiny.o: loader/storeread.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -DXOM_READ_BYTES=512 -c -o $@ $<
RT_READ_REST := $(filter-out $(B)/loader/stores.o $(B)/loader/storeread.o,$(RUNTIME_OBJ))
$(RT_BIN)/libxom-read.so: $(RT_READ_REST) $(B)/loader/stores-read.o $(B)/loader/storeread.o \
		$(PRELOAD_OBJ) preload/preload.map
	@mkdir -p $(@D)
	$(CC) -o $@ $(RT_READ_REST) $(B)/loader/stores-read.o $(B)/loader/storeread.o \
		$(PRELOAD_OBJ) $(XLDFLAGS) $(RUNTIME_LDFLAGS) $(PRELOAD_LDFLAGS)
$(RT_BIN)/libxom-tiny.so: $(RT_READ_REST) $(B)/loader/stores-read.o $(B)/loader/storeread-tiny.o \
		$(PRELOAD_OBJ) preload/preload.map
	@mkdir -p $(@D)
	$(CC) -o $@ $(RT_READ_REST) $(B)/loader/stores-read.o $(B)/loader/storeread-tiny.o \
		$(PRELOAD_OBJ) $(XLDFLAGS) $(RUNTIME_LDFLAGS) $(PRELOAD_LDFLAGS)

.PHONY: check-runtime runtime-tests
runtime-tests: $(B)/libxom.so $(B)/libxom-audit.so $(B)/xom-plan $(RT_TESTS) \
	$(RT_BIN)/libxom-small.so $(RT_BIN)/libxom-audit-small.so

CHECKS += check-runtime
QUICK += check-runtime
check-runtime: runtime-tests
	@B=$(B) tests/runtime/native.sh
