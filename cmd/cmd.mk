# cmd/: the xom command (build/xom), its man page (build/xom.1, made from
# cmd/xom.1.in and the option table loader/options.def), `make install`
# and `make uninstall`.  Its tests (check-cmd) are tests/cmd/cmd-tests.mk's,
# and the demo has its own fragment, demo/demo.mk.

ALL += $(B)/xom $(B)/xom.1 $(B)/xom.conf.5

# The command reads XOM_OPTIONS with the runtime's own parser, and the
# plan stores with the plan format's own checks.
CMD_OBJ := $(addprefix $(B)/cmd/,xom.o cmd.o run.o static.o prog.o exec.o check.o status.o \
	status_system.o smaps.o scan.o system.o) \
	$(OPTIONS_OBJ) $(COMMON_OBJ)
# xom cache writes the stores with the tools' own store code; the scanning
# is done by xom-plan, so xom links neither Capstone nor libelf.
CACHE_OBJ := $(addprefix $(B)/cmd/cache/,cache.o stats.o files.o elffile.o listings.o facts.o store.o scanning.o) \
	$(addprefix $(B)/cmd/,learn.o profile.o profile_file.o) \
	$(B)/plan/storewrite.o $(PLAN_FORMAT_OBJ)
$(B)/xom: $(CMD_OBJ) $(CACHE_OBJ)
	$(CC) -o $@ $^ $(XLDFLAGS)

# The man page's list of XOM_OPTIONS keys is written by a host tool from
# the same table that the runtime parses, so the two cannot drift apart.
$(B)/cmd/manpage: $(B)/cmd/manpage.o $(OPTIONS_OBJ)
	$(CC) -o $@ $^ $(XLDFLAGS)

$(B)/xom.1: cmd/xom.1.in $(B)/cmd/manpage
	$(B)/cmd/manpage cmd/xom.1.in >$@

# xom.conf(5), the per-program policy, lists the same keys.
$(B)/xom.conf.5: cmd/xom.conf.5.in $(B)/cmd/manpage
	$(B)/cmd/manpage cmd/xom.conf.5.in >$@

# The shipped profiles (profiles/, see profiles/README.md): copied into
# build/, where the guest's tests find them, and installed into the system
# store's profiles folder, one file per program.
PROFILES := $(wildcard profiles/*.profile)
BUILT_PROFILES := $(patsubst profiles/%,$(B)/profiles/%,$(PROFILES))
ALL += $(BUILT_PROFILES)
$(B)/profiles/%.profile: profiles/%.profile
	@mkdir -p $(@D)
	cp $< $@
# ... and one file per program, named by its key, where the runtime finds
# them beside build/libxom.so (loader/profile.c), as it finds the installed
# ones in lib/xom/profiles.
ALL += $(B)/profiles/.by-key
$(B)/profiles/.by-key: $(BUILT_PROFILES) $(B)/xom
	rm -f $(addprefix $(B)/profiles/,$(SHIPPED_PROGRAMS))
	$(if $(BUILT_PROFILES),$(B)/xom profile install --dir $(B)/profiles $(BUILT_PROFILES))
	touch $@

# ---- install ------------------------------------------------------------
# xom finds its libraries in ../lib/xom relative to itself, and the runtime
# finds xom-plan (and xom-plan finds libxom-scan.so) beside libxom.so.
#
# `make install` writes under $(DESTDIR)$(PREFIX) and nowhere else: a
# throwaway PREFIX leaves the machine as it was.  The pieces that belong to
# the whole system (xom.conf in SYSCONFDIR, the shipped profiles in the
# system store under LOCALSTATEDIR, the apt hook's configuration) are
# `make install-system`'s, which lists at its end every path it wrote
# outside PREFIX.  The Debian packages (debian/, make deb) use neither for
# those: their maintainer scripts and dpkg triggers do that work.

PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
LOCALSTATEDIR ?= /var
RUNTIME_FILES := $(B)/libxom.so $(B)/libxom-audit.so $(B)/xom-plan \
	$(B)/libxom-scan.so
INSTALLED_BIN := $(DESTDIR)$(PREFIX)/bin/xom $(DESTDIR)$(PREFIX)/bin/xom-scan
INSTALLED_LIB := $(addprefix $(DESTDIR)$(PREFIX)/lib/xom/,$(notdir $(RUNTIME_FILES)))
INSTALLED_MAN := $(DESTDIR)$(PREFIX)/share/man/man1/xom.1 \
	$(DESTDIR)$(PREFIX)/share/man/man5/xom.conf.5
# The shipped profiles' source files, kept under PREFIX so that
# install-system (or a package's postinst) can put them into the store.
SHARE_PROFILES := $(DESTDIR)$(PREFIX)/share/xom/profiles
INSTALLED_PROFILES := $(addprefix $(SHARE_PROFILES)/,$(notdir $(PROFILES)))
# The per-program policy's defaults (etc/xom.conf), installed only where
# there is none yet, since it is the administrator's file; XOM_CONF= leaves
# it out.  uninstall leaves it too, unless it is still the one shipped.
XOM_CONF ?= $(SYSCONFDIR)/xom.conf
# Where the runtime reads the system's profiles: the system store's folder.
SYSTEM_PROFILES ?= $(LOCALSTATEDIR)/cache/xom/profiles
# The files that installing the shipped profiles makes there: one per
# program line, named by the program's build-id.
SHIPPED_PROGRAMS = $(sort $(shell sed -n 's/^program \([0-9a-f][0-9a-f]*\) .*/\1/p' $(PROFILES)))
# The apt hook that keeps the system plan store current (cmd/apt-hook.sh.in,
# cmd/90xom.in), with the installed paths filled in.  The hook itself is
# PREFIX's; its configuration goes where apt reads it when that folder
# exists and can be written; APT_CONF_D= leaves it out.
APT_CONF_D ?= $(SYSCONFDIR)/apt/apt.conf.d
APT_HOOK := $(PREFIX)/lib/xom/xom-apt-hook
APT_CONF := $(DESTDIR)$(APT_CONF_D)/90xom
# The preload list that uninstall takes this PREFIX's libxom.so out of.
PRELOAD_LIST := $(DESTDIR)$(SYSCONFDIR)/ld.so.preload

.PHONY: install install-system uninstall
install: $(B)/xom $(B)/xom-scan $(RUNTIME_FILES) $(B)/xom.1 $(B)/xom.conf.5 \
		cmd/apt-hook.sh.in $(BUILT_PROFILES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/xom \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(B)/xom $(B)/xom-scan $(DESTDIR)$(PREFIX)/bin/
	@# Each runtime file appears whole, by rename: under /etc/ld.so.preload
	@# every program that starts maps libxom.so, and one cut short makes
	@# the dynamic linker die by SIGBUS.  Running programs keep the old one.
	for f in $(RUNTIME_FILES); do \
		d=$(DESTDIR)$(PREFIX)/lib/xom/$$(basename $$f); \
		install -m 755 $$f $$d.new && mv -f $$d.new $$d || exit 1; \
	done
	install -m 644 $(B)/xom.1 $(DESTDIR)$(PREFIX)/share/man/man1/xom.1
	install -m 644 $(B)/xom.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/xom.conf.5
	$(if $(BUILT_PROFILES),install -d $(SHARE_PROFILES) && install -m 644 $(BUILT_PROFILES) $(SHARE_PROFILES)/)
	@# The runtime finds the shipped profiles beside libxom.so, one file
	@# per program (loader/profile.c).
	$(if $(BUILT_PROFILES),$(B)/xom profile install --dir $(DESTDIR)$(PREFIX)/lib/xom/profiles $(BUILT_PROFILES))
	sed 's|@XOM@|$(PREFIX)/bin/xom|' cmd/apt-hook.sh.in >$(DESTDIR)$(APT_HOOK)
	chmod 755 $(DESTDIR)$(APT_HOOK)

# The system-wide pieces, after install.  Each path written outside
# $(DESTDIR)$(PREFIX) is collected in a list that is printed at the end.
install-system: install etc/xom.conf cmd/90xom.in
	@set -e; out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
	if [ -z "$(XOM_CONF)" ]; then :; \
	elif [ -e "$(DESTDIR)$(XOM_CONF)" ]; then \
		echo "keeping $(DESTDIR)$(XOM_CONF) (the shipped defaults are in etc/xom.conf)"; \
	else \
		echo "install -D -m 644 etc/xom.conf $(DESTDIR)$(XOM_CONF)"; \
		install -D -m 644 etc/xom.conf $(DESTDIR)$(XOM_CONF); \
		echo "$(DESTDIR)$(XOM_CONF)" >>"$$out"; \
	fi; \
	if [ -n "$(BUILT_PROFILES)" ] && [ -n "$(SYSTEM_PROFILES)" ]; then \
		echo "$(B)/xom profile install --dir $(DESTDIR)$(SYSTEM_PROFILES) $(BUILT_PROFILES)"; \
		$(B)/xom profile install --dir $(DESTDIR)$(SYSTEM_PROFILES) $(BUILT_PROFILES); \
		for p in $(SHIPPED_PROGRAMS); do echo "$(DESTDIR)$(SYSTEM_PROFILES)/$$p" >>"$$out"; done; \
	fi; \
	if [ -n "$(APT_CONF_D)" ] && [ -d "$(DESTDIR)$(APT_CONF_D)" ] && \
	    [ -w "$(DESTDIR)$(APT_CONF_D)" ]; then \
		echo "sed 's|@HOOK@|$(APT_HOOK)|g' cmd/90xom.in >$(APT_CONF)"; \
		sed 's|@HOOK@|$(APT_HOOK)|g' cmd/90xom.in >$(APT_CONF); \
		chmod 644 $(APT_CONF); \
		echo "$(APT_CONF)" >>"$$out"; \
	elif [ -n "$(APT_CONF_D)" ]; then \
		echo "not installing the apt hook: $(DESTDIR)$(APT_CONF_D) is not a folder you can write to"; \
	fi; \
	echo "written outside PREFIX:"; \
	if [ -s "$$out" ]; then sed 's/^/  /' "$$out"; else echo "  (nothing)"; fi

# Removes what install and install-system installed; of the folders only
# lib/xom and share/xom, which are xom's own (the others are shared), and
# only when they are empty.  The plans in the store stay: xom cache prune
# --system, or rm -r.  First, while the library is still there, the
# preload list loses this PREFIX's libxom.so (xom disable --system):
# removing a library that /etc/ld.so.preload names makes every program on
# the machine print an error at start-up.  Without root that fails, and so
# does uninstall, before it has removed anything.
uninstall:
	@if [ -e $(PRELOAD_LIST) ] && tr -s ' \t:' '\n' <$(PRELOAD_LIST) | \
	    grep -qxF '$(PREFIX)/lib/xom/libxom.so'; then \
		x=$(DESTDIR)$(PREFIX)/bin/xom; [ -x "$$x" ] || x=$(B)/xom; \
		echo "$$x disable --system --file $(PRELOAD_LIST)"; \
		"$$x" disable --system --file $(PRELOAD_LIST) || { \
			echo "uninstall: $(PRELOAD_LIST) still lists $(PREFIX)/lib/xom/libxom.so; nothing removed" >&2; \
			exit 1; }; \
	fi
	rm -f $(INSTALLED_BIN) $(INSTALLED_LIB) $(INSTALLED_MAN) $(INSTALLED_PROFILES) $(DESTDIR)$(APT_HOOK) \
		$(addprefix $(DESTDIR)$(PREFIX)/lib/xom/profiles/,$(SHIPPED_PROGRAMS))
	@if [ -n "$(XOM_CONF)" ] && cmp -s etc/xom.conf "$(DESTDIR)$(XOM_CONF)"; then \
		echo "rm -f $(DESTDIR)$(XOM_CONF)"; rm -f "$(DESTDIR)$(XOM_CONF)"; fi
	$(if $(SYSTEM_PROFILES),rm -f $(addprefix $(DESTDIR)$(SYSTEM_PROFILES)/,$(SHIPPED_PROGRAMS)))
	$(if $(SYSTEM_PROFILES),rmdir $(DESTDIR)$(SYSTEM_PROFILES) 2>/dev/null || true)
	@if [ -n "$(APT_CONF_D)" ] && grep -qs '^// xom:' $(APT_CONF); then \
		echo "rm -f $(APT_CONF)"; rm -f $(APT_CONF); fi
	rmdir $(SHARE_PROFILES) $(DESTDIR)$(PREFIX)/share/xom $(DESTDIR)$(PREFIX)/lib/xom/profiles \
		$(DESTDIR)$(PREFIX)/lib/xom 2>/dev/null || true
