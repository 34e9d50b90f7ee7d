# bench/: xom measured against its baselines (see bench/README.md).
#
#   make bench        the full run (about 15 minutes on two cores); writes
#                     bench/results.md and bench/coverage.png
#   make bench-quick  a small fixed subset (under a minute), into $(B)/bench
#   make check-bench  runs bench-quick and checks that its report is
#                     well-formed; it never asserts a time, because timings
#                     on shared machines are too noisy to fail a build on

BENCH_PROGS := $(B)/bench/runner $(B)/bench/capstone_decode \
	$(B)/bench/scan_time $(B)/bench/libempty.so $(B)/bench/dlopen_one \
	$(B)/bench/dlopen_loop $(B)/bench/many/many $(B)/bench/vm_runtime.sh \
	$(B)/bench/dlopen_cycle $(B)/bench/cycle/libextra.so

CHECKS += check-bench
.PHONY: bench bench-quick check-bench bench-progs

bench-progs: $(BENCH_PROGS)

$(B)/bench/runner: bench/runner.c | $(B)/.deps-bench
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(XLDFLAGS)

$(B)/bench/capstone_decode: bench/capstone_decode.c $(B)/scan/x86.o | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $^ $(XLDFLAGS) -lcapstone

$(B)/bench/scan_time: bench/scan_time.c $(B)/libxom-scan.a | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $^ $(XLDFLAGS) $(SCAN_LIBS)

$(B)/bench/dlopen_one: bench/dlopen_one.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(XLDFLAGS) -ldl

$(B)/bench/dlopen_loop: bench/dlopen_loop.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(XLDFLAGS) -ldl

$(B)/bench/dlopen_cycle: bench/dlopen_cycle.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(XLDFLAGS) -ldl

# 500 libraries for dlopen_cycle: copies of the 200 below (each copy is an
# object of its own to the dynamic linker), and the one it cycles.
$(B)/bench/cycle/libextra.so: $(B)/bench/many/many
	@rm -rf $(@D) && mkdir -p $(@D)
	@i=0; while [ $$i -lt 500 ]; do \
		cp $(B)/bench/many/libm$$(printf %03d $$((i % 200))).so \
		   $(@D)/libm$$(printf %03d $$i).so; i=$$((i + 1)); done
	cp $(B)/bench/many/libextra.so $@

# 200 small libraries and a program linked against them all (a minute of
# compiling at most, once).
$(B)/bench/many/many: bench/gen_many.sh
	@rm -rf $(@D)
	sh bench/gen_many.sh 200 $(@D) "$(CC)"

$(B)/bench/libempty.so: bench/empty.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -shared -o $@ $< $(XLDFLAGS) -Wl,--no-undefined

# The emulated-PKU guest sees the build outputs but not bench/, so the
# workload script travels as one of them.
$(B)/bench/vm_runtime.sh: bench/vm_runtime.sh
	@mkdir -p $(@D)
	cp $< $@

bench: all $(BENCH_PROGS)
	@B=$(B) python3 bench/bench.py --full --out bench

bench-quick: all $(BENCH_PROGS)
	@B=$(B) python3 bench/bench.py --quick --out $(B)/bench/quick

check-bench: bench-quick
	@python3 bench/bench.py --check $(B)/bench/quick
