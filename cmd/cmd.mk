# cmd/: the xom command (build/xom), its man page, `make install`, and its
# tests (check-cmd).  The demo has its own fragment, demo/demo.mk.

ALL += $(B)/xom

# The command reads XOM_OPTIONS with the runtime's own parser.
CMD_OBJ := $(addprefix $(B)/cmd/,xom.o run.o prog.o check.o status.o scan.o) \
	$(B)/loader/options.o
$(B)/xom: $(CMD_OBJ)
	$(CC) -o $@ $^ $(XLDFLAGS)

# ---- install ------------------------------------------------------------
# xom finds its libraries in ../lib/xom relative to itself, and the runtime
# finds xom-plan (and xom-plan finds libxom-scan.so) beside libxom.so.

PREFIX ?= /usr/local
RUNTIME_FILES := $(B)/libxom.so $(B)/libxom-audit.so $(B)/xom-plan \
	$(B)/libxom-scan.so

.PHONY: install
install: $(B)/xom $(B)/xom-scan $(RUNTIME_FILES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/xom \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/xom $(B)/xom-scan $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(RUNTIME_FILES) $(DESTDIR)$(PREFIX)/lib/xom/
	install -m 644 cmd/xom.1 $(DESTDIR)$(PREFIX)/share/man/man1/xom.1

# ---- tests ----------------------------------------------------------------

CMD_TEST_PROGS := $(B)/tests/cmd/probe $(B)/tests/cmd/probe-static

$(B)/tests/cmd/probe: tests/cmd/probe.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $<

# Needs libc.a (libc6-dev); the test skips the refusal check without it.
$(B)/tests/cmd/probe-static: tests/cmd/probe.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -static -o $@ $< \
		|| { echo "no static libc: building a stand-in" >&2; rm -f $@; }

.PHONY: check-cmd cmd-tests
cmd-tests: $(B)/xom $(B)/xom-scan $(RUNTIME_FILES) $(CMD_TEST_PROGS) demo-progs

CHECKS += check-cmd
QUICK += check-cmd
check-cmd: cmd-tests
	@B=$(B) tests/cmd/native.sh

# The guest suite (tests/vm/guest.list) runs tests/cmd/guest.sh, which needs
# the probe (and the demo programs, see demo/demo.mk).
check-vm vm-progs: $(B)/tests/cmd/probe
