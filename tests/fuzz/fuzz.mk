# tests/fuzz/: a libFuzzer target for the scanner.  Included from the top
# Makefile.
#
#   make fuzz                 fuzz for FUZZ_SECONDS (300) and keep the corpus
#   make check-fuzz           a short run (FUZZ_SHORT seconds), part of check
#
# The target is built with clang from the scanner's sources, separately from
# the gcc build, so that libFuzzer's coverage instrumentation sees them.  The
# corpus starts from the scanner tests' inputs and a system executable, and
# grows in $(B)/fuzz/corpus between runs.

FUZZ_SECONDS ?= 300
FUZZ_SHORT ?= 20
FUZZ_CC := clang
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -std=gnu11 -D_GNU_SOURCE
FUZZ_SRC := $(SCAN_SRC) tests/fuzz/fuzz_scan.c

$(B)/fuzz/fuzz_scan: $(FUZZ_SRC) scan/xom_scan.h $(wildcard scan/*.h) \
		| $(B)/.deps-fuzz $(B)/.deps-build
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_SRC) $(SCAN_LIBS)

# Seeds: the small test inputs (built by check-scan's inputs step) and
# /bin/true.  Seeds are copied, so the corpus can grow without touching them.
$(B)/fuzz/seeds.stamp: tests/scan/inputs/tables.S tests/scan/inputs/gadgets.S \
		tests/scan/inputs/absolute.S tests/scan/inputs/textrel.S
	@mkdir -p $(B)/fuzz/corpus $(B)/fuzz/seeds
	$(CC) -shared -nostdlib -o $(B)/fuzz/seeds/tables.so tests/scan/inputs/tables.S
	$(CC) -shared -nostdlib -Wl,-z,noseparate-code \
		-o $(B)/fuzz/seeds/tables-nosep.so tests/scan/inputs/tables.S
	strip --strip-all -o $(B)/fuzz/seeds/tables-strip.so $(B)/fuzz/seeds/tables.so
	$(CC) -shared -nostdlib -o $(B)/fuzz/seeds/gadgets.so tests/scan/inputs/gadgets.S
	$(CC) -no-pie -nostdlib -o $(B)/fuzz/seeds/absolute tests/scan/inputs/absolute.S
	$(CC) -shared -nostdlib -Wl,-z,notext -o $(B)/fuzz/seeds/textrel.so \
		tests/scan/inputs/textrel.S
	cp $$(readlink -f /bin/true) $(B)/fuzz/seeds/true
	@touch $@

# -max_len keeps mutated inputs near the seeds' size; -rss_limit_mb turns an
# unbounded allocation into a reported failure.
FUZZ_RUN = $(B)/fuzz/fuzz_scan -max_len=262144 -rss_limit_mb=2048 \
	-timeout=10 -print_final_stats=1 -artifact_prefix=$(B)/fuzz/ \
	$(B)/fuzz/corpus $(B)/fuzz/seeds

.PHONY: fuzz check-fuzz
fuzz: $(B)/fuzz/fuzz_scan $(B)/fuzz/seeds.stamp
	$(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS)

# Prints the summary line that tests/check.sh collects.
check-fuzz: $(B)/fuzz/fuzz_scan $(B)/fuzz/seeds.stamp
	@if $(FUZZ_RUN) -max_total_time=$(FUZZ_SHORT) >$(B)/fuzz/short.log 2>&1; then \
		echo "PASS fuzz_scan: $(FUZZ_SHORT) s without a crash"; \
		echo "1 passed, 0 failed"; \
	else \
		tail -n 30 $(B)/fuzz/short.log; \
		echo "FAIL fuzz_scan: see $(B)/fuzz/short.log"; \
		echo "0 passed, 1 failed"; exit 1; \
	fi
