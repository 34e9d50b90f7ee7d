# tests/fuzz/: libFuzzer targets for what xom reads from files that a user
# or root can write.  Included from the top Makefile.
#
#   make fuzz                 fuzz each target for FUZZ_SECONDS (300) and
#                             keep the corpora (FUZZ_TARGETS picks some)
#   make check-fuzz           a short run of each, part of check: the
#                             scanner for FUZZ_SHORT seconds (20), the
#                             parsers for FUZZ_PARSER_SHORT (10) each
#
# The targets: scan, the scanner (an ELF file); plan, the plan format, symbol
# files, key names, build-id notes and ELF headers (formats/format.c);
# store, a plan store's index and its sets, read as the runtime reads them
# and merged as the tools do (format.c, loader/storeread.c,
# plan/storewrite.c); profile, the profile format, as the runtime and the
# command read it (loader/profile.c, cmd/profile_file.c); conf,
# /etc/xom.conf and XOM_OPTIONS (loader/options.c).  They are built with
# clang from the sources, separately from the gcc build, so that
# libFuzzer's coverage instrumentation sees them, with the address and
# undefined-behaviour sanitizers.  Each corpus starts from seeds made from
# real files and grows in $(B)/fuzz between runs; tests/fuzz/regress/TARGET
# keeps the inputs of crashes found and fixed, run every time.

FUZZ_SECONDS ?= 300
FUZZ_SHORT ?= 20
FUZZ_PARSER_SHORT ?= 10
FUZZ_PARSERS := plan store profile conf
FUZZ_TARGETS ?= scan $(FUZZ_PARSERS)
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

# The parsers' targets: each its own sources (a target that includes a .c
# file to reach its tables names it too).
FUZZ_plan_SRC := tests/fuzz/fuzz_plan.c formats/format.c
FUZZ_store_SRC := tests/fuzz/fuzz_store.c formats/format.c plan/storewrite.c
FUZZ_store_DEP := loader/storeread.c
FUZZ_profile_SRC := tests/fuzz/fuzz_profile.c cmd/profile_file.c loader/options.c loader/fmt.c \
	formats/format.c
FUZZ_profile_DEP := loader/profile.c
FUZZ_conf_SRC := tests/fuzz/fuzz_conf.c loader/options.c loader/fmt.c
FUZZ_HEADERS := $(wildcard loader/*.h formats/*.h plan/*.h cmd/*.h) loader/options.def

define fuzz_parser
$(B)/fuzz/fuzz_$(1): $$(FUZZ_$(1)_SRC) $$(FUZZ_$(1)_DEP) $$(FUZZ_HEADERS) \
		| $(B)/.deps-fuzz $(B)/.deps-build
	@mkdir -p $$(@D)
	$$(FUZZ_CC) $$(FUZZ_FLAGS) -o $$@ $$(FUZZ_$(1)_SRC)
endef
$(foreach t,$(FUZZ_PARSERS),$(eval $(call fuzz_parser,$(t))))

# The parsers' seeds, from real files: a user's store built by xom cache
# build for two programs (plans alone and sets), and one that also holds a
# copy of libc with libc's build-id and DF_TEXTREL set (two plans of one
# key); plans as the helper writes them; a symbol file; a key's name;
# ELF files; the shipped profiles and one with every kind of line; the
# shipped /etc/xom.conf and one with every kind of rule.
FUZZ_SEED_TOOLS := $(B)/xom $(B)/xom-plan $(B)/libxom.so $(B)/tests/runtime/xomtest
$(B)/fuzz/parser-seeds.stamp: $(FUZZ_SEED_TOOLS) $(B)/fuzz/seeds.stamp \
		$(wildcard profiles/*.profile) etc/xom.conf tests/fuzz/fuzz.mk
	rm -rf $(B)/fuzz/seed-cache $(B)/fuzz/seeds-plan $(B)/fuzz/seeds-store \
		$(B)/fuzz/seeds-profile $(B)/fuzz/seeds-conf
	mkdir -p $(B)/fuzz/seeds-plan $(B)/fuzz/seeds-store $(B)/fuzz/seeds-profile \
		$(B)/fuzz/seeds-conf
	XDG_CACHE_HOME=$(abspath $(B))/fuzz/seed-cache XOM_OPTIONS=store=off \
		$(B)/xom cache build -q /bin/true /bin/ls
	cp $(B)/fuzz/seed-cache/xom/plans $(B)/fuzz/seeds-store/index-sets
	libc=$$(XDG_CACHE_HOME=$(abspath $(B))/fuzz/seed-cache XOM_OPTIONS=store=off:backend=none:verbose=1 \
		LD_PRELOAD=$(B)/libxom.so /bin/true 2>&1 | sed -n 's/^xom: \(\/.*\/libc\.so\.6\): .*/\1/p') && \
	$(B)/tests/runtime/xomtest forge textrel "$$libc" $(B)/fuzz/seed-cache/libc-textrel.so >/dev/null
	XDG_CACHE_HOME=$(abspath $(B))/fuzz/seed-cache XOM_OPTIONS=store=off \
		$(B)/xom cache build -q $(B)/fuzz/seed-cache/libc-textrel.so
	cp $(B)/fuzz/seed-cache/xom/plans $(B)/fuzz/seeds-store/index-two-shapes
	$(B)/xom-plan -- /bin/true >$(B)/fuzz/seeds-plan/plan-true
	$(B)/xom-plan -- $(B)/fuzz/seeds/textrel.so >$(B)/fuzz/seeds-plan/plan-textrel
	$(B)/xom-plan -- $(B)/fuzz/seeds/tables.so >$(B)/fuzz/seeds-plan/plan-tables
	f=$$(ls $(B)/fuzz/seed-cache/xom/syms | head -n 1) && \
		cp $(B)/fuzz/seed-cache/xom/syms/$$f $(B)/fuzz/seeds-plan/syms && \
		printf '%s' "$$f" >$(B)/fuzz/seeds-plan/key-name
	cp $(B)/fuzz/seeds/true $(B)/fuzz/seeds/tables-strip.so $(B)/fuzz/seeds-plan/
	cp $(wildcard profiles/*.profile) $(B)/fuzz/seeds-profile/
	printf '%s\n' '# lines for every program' 'abcdef12 0x1000 /lib/a.so # read of /lib/a.so+0x1010 by ...' \
		'/lib/noid.so 0x2fff /lib/noid.so' 'program 0123456789abcdef /usr/bin/prog' \
		'abcdef12 0x3000 /lib/a.so # read of x' '' 'program feedface /usr/bin/other' \
		'abcdef12 0x1000' >$(B)/fuzz/seeds-profile/kinds.profile
	{ echo /usr/bin/true; cat etc/xom.conf; } >$(B)/fuzz/seeds-conf/shipped
	printf '%s\n' /opt/vendor/bin/app '# rules' '/usr/local/bin/legacy-app off' \
		'/opt/vendor/bin/* mode=audit:profile=/var/lib/vendor/xom.profile' \
		'* exclude=libGLdispatch.so*,libfoo*:verbose=1 # comment' \
		'/opt/*/bin/[a-z]* require=1:seal=1:notice=once:cache=off:store=/var/cache/xom' \
		'/usr/bin/* backend=none:log=/tmp/x:profiles=off' >$(B)/fuzz/seeds-conf/rules
	printf '%s\n' /usr/lib/x86_64-linux-gnu/libfoo.so.1 \
		'* exclude=*foo*,lib?oo.so*,/usr/*/libf*,*.so.1*,*a*b*c,**,?,[l]ib*:verbose=1' \
		>$(B)/fuzz/seeds-conf/exclude
	{ echo /opt/app/lib/libz39.so; printf '* exclude='; i=0; while [ $$i -lt 40 ]; do \
		printf '*z%d.so,' $$i; i=$$((i + 1)); done; echo; } >$(B)/fuzz/seeds-conf/exclude-many
	printf '/opt/\303\251/lib\303\251.so\n* exclude=*?.so,/opt/?/*,lib?.so*,*\303\251*\n' \
		>$(B)/fuzz/seeds-conf/exclude-utf8
	@touch $@

FUZZ_BINS := $(B)/fuzz/fuzz_scan $(foreach t,$(FUZZ_PARSERS),$(B)/fuzz/fuzz_$(t))

.PHONY: fuzz check-fuzz
fuzz: $(FUZZ_BINS) $(B)/fuzz/seeds.stamp $(B)/fuzz/parser-seeds.stamp
	@tests/fuzz/run.sh $(B) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Prints the summary line that tests/check.sh collects.
check-fuzz: $(FUZZ_BINS) $(B)/fuzz/seeds.stamp $(B)/fuzz/parser-seeds.stamp
	@tests/fuzz/run.sh $(B) $(FUZZ_SHORT) scan >$(B)/fuzz/check-scan.out; \
	s=$$?; tests/fuzz/run.sh $(B) $(FUZZ_PARSER_SHORT) $(FUZZ_PARSERS) \
		>$(B)/fuzz/check-parsers.out; p=$$?; \
	grep -v ' passed, ' $(B)/fuzz/check-scan.out $(B)/fuzz/check-parsers.out | cut -d: -f2-; \
	cat $(B)/fuzz/check-scan.out $(B)/fuzz/check-parsers.out | \
		awk '/ passed, / { p += $$1; f += $$3 } END { print p " passed, " f " failed" }'; \
	[ $$s = 0 ] && [ $$p = 0 ]
