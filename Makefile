# xom - execute-only memory for unmodified x86-64 Linux programs.
#
#   make            build everything into build/
#   make check      build and run every test (scanner, runtime, command,
#                   emulated-PKU VM, fuzzing); XOM_SKIP_VM=1 leaves out the VM
#   make quick      the fast inner loop: build, then the native suites only
#   make demo       the code-disclosure demo
#   make deb        the Debian packages, in build/deb
#   make asan       the scanner and its tests under ASan+UBSan, in build/asan
#
# Each part keeps its rules in its own fragment (scan/scan.mk, ...); this file
# holds the flags they share.

.DELETE_ON_ERROR:
.SUFFIXES:
.DEFAULT_GOAL := all

B ?= build
CC := gcc
CFLAGS ?= -O2 -g
# The dangerous classes are errors; the rest are warnings worth reading.
WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wpointer-arith -Wcast-align \
	-Wstrict-prototypes -Wmissing-prototypes -Wvla -Wwrite-strings \
	-Wundef -Wnull-dereference -Wimplicit-fallthrough \
	-Werror=implicit-function-declaration -Werror=format-security \
	-Werror=int-conversion -Werror=incompatible-pointer-types \
	-Werror=return-type -Werror=array-bounds -Werror=shift-count-overflow \
	-Werror=stringop-overflow -Werror=vla
XCFLAGS := -std=gnu11 -D_GNU_SOURCE -fvisibility=hidden -fPIC -MMD -MP \
	$(WARN) $(SANFLAGS)
XLDFLAGS := $(SANFLAGS)

# Debian packages are installed on first use when they are missing.  The
# stamps are kept, or make would treat them as intermediate and redo them.
.PRECIOUS: $(B)/.deps-%
$(B)/.deps-%: tests/deps.sh
	@mkdir -p $(@D)
	@tests/deps.sh $*
	@touch $@

# The build's own packages (the compiler among them) come before any rule
# runs: make remakes an included file first, so even `make -j` on a fresh
# machine finds gcc.  The stamp is an empty file.  `make clean` needs none.
ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
include $(B)/.deps-build
endif

# One compile rule for every part's objects; the fragments list objects and
# say how they are linked.
$(B)/%.o: %.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -c -o $@ $<

ALL :=
CHECKS :=
QUICK :=
include common/common.mk
include scan/scan.mk
include formats/formats.mk
include loader/loader.mk
include plan/plan.mk
include preload/preload.mk
include audit/audit.mk
include tests/runtime/runtime.mk
include tests/scan/scan.mk
include tests/dl/dl.mk
include tests/fuzz/fuzz.mk
include tests/vm/vm.mk
include bench/bench.mk
include cmd/cmd.mk
include tests/cmd/cmd-tests.mk
include demo/demo.mk
include tests/peers/peers.mk
include debian/deb.mk

.PHONY: all check quick clean asan check-asan demo check-readme check-house check-debian13
all: $(ALL)

# Every command README.md and docs/*.md show after a "$ " prompt is run, so
# they stay true.
CHECKS += check-readme
check-readme: all
	@tests/readme.sh

# No two source files of the product call each other in a loop: read from
# the built objects with nm (tests/house/loops.sh).
CHECKS += check-house
QUICK += check-house
check-house: all
	@tests/house/loops.sh $(B)

check: all
	@tests/check.sh $(CHECKS)

# The suites that need no VM and no sanitizer rebuild: seconds, not minutes.
# The documented commands that boot the VM are skipped there, and say so.
QUICK += check-readme
quick: all
	@XOM_SKIP_VM=1 tests/check.sh $(QUICK)

asan:
	$(MAKE) B=build/asan SANFLAGS='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' check-scan

# The scanner reads untrusted files: its tests run under the sanitizers in
# every `make check` too, and libFuzzer gets FUZZ_SHORT (20) seconds at it.
CHECKS += check-asan check-fuzz
check-asan: asan

# The same tree on Debian 13: a cached trixie root under build/debian13
# runs the build, the native suites, ASan, the demo and the emulated-PKU
# suite (tests/debian13.sh).  Not in CHECKS: it installs a system.
check-debian13:
	@tests/debian13.sh

# build/debian13 holds a whole system: never follow a mount out of it.
clean:
	rm -rf --one-file-system build

-include $(wildcard $(B)/*.d $(B)/*/*.d $(B)/*/*/*.d)
