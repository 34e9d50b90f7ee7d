# tests/cmd/: the xom command's tests.  The programs they run (the probe,
# its static builds, the tracer, the cache test's libraries and programs,
# xom status's counting rule), the native suites (check-cmd, check-static,
# check-learn), and what the guest's suites need built on the host (gcc's
# plans, a make install of xom).  Included after cmd/cmd.mk, whose
# variables (RUNTIME_FILES, BUILT_PROFILES) it uses, and whose objects
# status_count links.

CACHE_TEST := $(B)/tests/cmd/cache
CMD_TEST_PROGS := $(B)/tests/cmd/probe $(B)/tests/cmd/probe-static \
	$(B)/tests/cmd/probe-static-pie $(B)/tests/cmd/ptracer \
	$(B)/tests/cmd/libempty.so $(B)/tests/cmd/status_count \
	$(CACHE_TEST)/cacheprog $(CACHE_TEST)/lib/libcachedep.so \
	$(CACHE_TEST)/auditprog $(CACHE_TEST)/libcacheaudit.so \
	$(addprefix $(CACHE_TEST)/,libcache1.so libcache2.so libcache3.so libcachenoid.so)

$(B)/tests/cmd/probe: tests/cmd/probe.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $<

# Needs libc.a (libc6-dev); the test skips the refusal check without it.
$(B)/tests/cmd/probe-static: tests/cmd/probe.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -static -o $@ $< \
		|| { echo "no static libc: building a stand-in" >&2; rm -f $@; }

$(B)/tests/cmd/probe-static-pie: tests/cmd/probe.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -static-pie -fPIE -o $@ $< \
		|| { echo "no static-pie libc: building a stand-in" >&2; rm -f $@; }

# Puts xom run under a tracer, or under a seccomp filter that forbids ptrace.
$(B)/tests/cmd/ptracer: tests/cmd/ptracer.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $<

# The other static programs of the guest's tests (tests/cmd/guest-static.sh):
# the probe linked with musl, and a Go program, with the packages of
# tests/deps.sh's static group.  Go writes its build cache into build/tmp, which the guest does not get.
STATIC_GUEST_PROGS := $(B)/tests/cmd/probe-musl $(B)/tests/cmd/gostatic
$(B)/tests/cmd/probe-musl: tests/cmd/probe.c | $(B)/.deps-static
	@mkdir -p $(@D)
	musl-gcc -O2 -std=gnu11 -D_GNU_SOURCE $(WARN) -static -o $@ $<

$(B)/tests/cmd/gostatic: tests/cmd/gostatic.go | $(B)/.deps-static
	@mkdir -p $(@D)
	cd $(@D) && CGO_ENABLED=0 GO111MODULE=off GOPATH=$(abspath $(B))/tmp/go \
		GOCACHE=$(abspath $(B))/tmp/go/cache go build -o gostatic $(abspath $<)

# The user's own preload, for the test that xom run keeps it.
$(B)/tests/cmd/libempty.so: tests/cmd/libempty.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -shared -fPIC -o $@ $<

# xom cache: libraries with build-ids of their own, one without, and a
# program that finds its library only through RUNPATH $ORIGIN/lib.
$(CACHE_TEST)/libcache%.so: tests/cmd/cachelib.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC -DCACHE_VALUE=$* -o $@ $<

$(CACHE_TEST)/libcachenoid.so: tests/cmd/cachelib.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC -DCACHE_VALUE=9 \
		-Wl,--build-id=none -o $@ $<

$(CACHE_TEST)/lib/libcachedep.so: tests/cmd/cachelib.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC -DCACHE_VALUE=7 \
		-Wl,-soname,libcachedep.so -o $@ $<

$(CACHE_TEST)/cacheprog: tests/cmd/cacheprog.c $(CACHE_TEST)/lib/libcachedep.so
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -o $@ $< -L$(CACHE_TEST)/lib -lcachedep \
		-Wl,-rpath,'$$ORIGIN/lib' -Wl,--enable-new-dtags

# A program that names an audit module, which runs when the dynamic linker
# lists its libraries; the module marks that it ran.
$(CACHE_TEST)/libcacheaudit.so: tests/cmd/cacheaudit.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -shared -fPIC \
		-DCACHE_AUDIT_MARK='"$(abspath $(CACHE_TEST))/audit-ran"' -o $@ $<

$(CACHE_TEST)/auditprog: tests/cmd/cacheprog.c $(CACHE_TEST)/lib/libcachedep.so \
		$(CACHE_TEST)/libcacheaudit.so
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -o $@ $< -L$(CACHE_TEST)/lib -lcachedep \
		-Wl,-rpath,'$$ORIGIN/lib' -Wl,--audit=$(abspath $(CACHE_TEST))/libcacheaudit.so

# xom status's counting rule, on made-up smaps text (it includes
# cmd/status.c, and links the rule, cmd/smaps.c).
$(B)/tests/cmd/status_count: tests/cmd/status_count.c cmd/status.c cmd/cmd.h \
		$(B)/cmd/smaps.o $(B)/cmd/cache/store.o $(OPTIONS_OBJ) \
		$(PLAN_FORMAT_OBJ) | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $< $(B)/cmd/smaps.o \
		$(B)/cmd/cache/store.o $(OPTIONS_OBJ) $(PLAN_FORMAT_OBJ)

.PHONY: check-cmd cmd-tests
# xomtest's seccomp filter stands in for a machine without usable keys in
# the test of xom enable's refusal.
cmd-tests: $(B)/xom $(B)/xom.1 $(B)/xom.conf.5 $(B)/xom-scan $(B)/tests/runtime/xomtest $(RUNTIME_FILES) $(CMD_TEST_PROGS) \
	demo-progs

# The native suite is split by what each part proves (tests/cmd/native-*.sh);
# tests/cmd/native.sh runs every part and adds up their counts.
CHECKS += check-cmd
QUICK += check-cmd
check-cmd: cmd-tests
	@B=$(B) tests/cmd/native.sh

# xom run with statically linked programs, without keys (backend=none,
# and the fallbacks).
.PHONY: check-static
CHECKS += check-static
QUICK += check-static
check-static: cmd-tests
	@B=$(B) tests/cmd/native-static.sh

# xom learn and xom profile, and the runtime's profiles, without keys.
.PHONY: check-learn
CHECKS += check-learn
QUICK += check-learn
check-learn: cmd-tests
	@B=$(B) tests/cmd/native-learn.sh

# The plans of Debian's gcc (the driver, cc1, the assembler, collect2,
# ld and its LTO plugin, with their libraries) for the guest's gcc tests
# (tests/cmd/guest-learn.sh), made here: they are keyed by build-id, so
# they hold in the guest, where scanning cc1 alone takes a minute of
# emulated time.  gcc says where its programs are (gcc 12 keeps them under
# /usr/lib/gcc, gcc 14 under /usr/libexec/gcc); asked only when the plans
# are made.
GCC_DIR = $(patsubst %/,%,$(dir $(shell $(CC) -print-prog-name=cc1)))
GCC_PLANS := $(B)/tests/learn/cache/xom/plans
$(GCC_PLANS): $(B)/xom $(B)/xom-plan $(B)/libxom-scan.so $(B)/tests/runtime/libxomprobe.so
	rm -rf $(B)/tests/learn/cache
	XDG_CACHE_HOME=$(abspath $(B))/tests/learn/cache $(B)/xom cache build gcc as ld \
		$(GCC_DIR)/cc1 $(GCC_DIR)/collect2 $(GCC_DIR)/lto-wrapper \
		$(GCC_DIR)/liblto_plugin.so $(B)/tests/runtime/libxomprobe.so

# The guest suite (tests/vm/guest.list) runs tests/cmd/guest.sh,
# guest-cache.sh and guest-learn.sh, which need the probe, the cache test's
# libraries and gcc's plans (and the demo programs, see demo/demo.mk).
check-vm vm-progs: $(CMD_TEST_PROGS) $(STATIC_GUEST_PROGS) $(GCC_PLANS) $(BUILT_PROFILES)

# The systemd boot's tests (tests/cmd/guest-systemd.sh, guest-container.sh)
# use xom as `make install install-system DESTDIR=... PREFIX=/usr/local`
# lays it out (xom.conf and the shipped profiles included): the
# container recipe of README.md starts with that command.  It is installed
# into a folder of the build, which every guest gets.
VM_INSTALL := $(B)/tests/install
$(VM_INSTALL)/.installed: $(B)/xom $(B)/xom-scan $(RUNTIME_FILES) $(B)/xom.1 $(B)/xom.conf.5 \
		cmd/apt-hook.sh.in cmd/90xom.in etc/xom.conf $(BUILT_PROFILES)
	rm -rf $(VM_INSTALL)
	$(MAKE) --no-print-directory -s install install-system B=$(B) DESTDIR=$(abspath $(VM_INSTALL)) \
		PREFIX=/usr/local APT_CONF_D= >/dev/null
	touch $@
check-vm vm-progs: $(VM_INSTALL)/.installed
