# make deb: the Debian packages (debian/), built with debhelper from a copy
# of the tree's files (tracked, and untracked ones git does not ignore)
# under $(B)/deb, and checked with lintian.  The packages land in
# $(B)/deb: libxom, xom and xom-enable.  make check-deb installs them in
# a root of the release that built them (tests/deb/check.sh), and
# make check-vm's system-wide guest with dpkg (tests/cmd/guest-system.sh).
# They are made again when a file that goes into them is newer: the tree's
# files but its tests, documents, benchmarks and demo (their .mk files
# count, the build reads them); a make deb that failed, lintian included,
# leaves no package behind.

XOM_VERSION := $(shell sed -n 's/^\#define XOM_VERSION "\(.*\)"$$/\1/p' cmd/xom.c)
DEB_DIR := $(B)/deb
DEB_SRC := $(DEB_DIR)/xom-$(XOM_VERSION)
DEBS := $(addprefix $(DEB_DIR)/,libxom_$(XOM_VERSION)_amd64.deb \
	xom_$(XOM_VERSION)_amd64.deb xom-enable_$(XOM_VERSION)_amd64.deb)

DEB_FILES := $(wildcard $(shell git ls-files -co --exclude-standard 2>/dev/null))
DEB_INPUTS := $(filter-out tests/% docs/% bench/% demo/% %.md,$(DEB_FILES)) \
	$(filter %.mk,$(DEB_FILES))

.PHONY: deb check-deb
deb: $(DEBS)
	@ls $(DEBS)

$(DEBS) &: $(DEB_INPUTS) | $(B)/.deps-build $(B)/.deps-deb
	@v=$$(dpkg-parsechangelog -l debian/changelog -S Version); \
	[ "$$v" = "$(XOM_VERSION)" ] || { \
		echo "deb: debian/changelog says $$v, cmd/xom.c's XOM_VERSION $(XOM_VERSION)" >&2; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC)
	git ls-files -z -co --exclude-standard | \
		tar --null --ignore-failed-read -T - -cf - | tar -xf - -C $(DEB_SRC)
	@echo "dpkg-buildpackage -b -us -uc (log: $(DEB_DIR)/build.log)"
	@cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || { tail -40 ../build.log; rm -f $(DEBS); exit 1; }
	rm -rf $(DEB_SRC)
	lintian --fail-on error,warning \
		$(DEB_DIR)/xom_$(XOM_VERSION)_amd64.changes || { rm -f $(DEBS); exit 1; }

# The system-wide guest of make check-vm installs the packages
# (tests/vm/run's system_packages); check-vm comes before check-deb in
# make check, which then finds them current.
check-vm: $(DEBS)

# The packages installed, upgraded, removed and purged in a root of this
# release, Debian 12 or 13 (tests/deb/check.sh, which runs make deb); SKIP
# without root.
CHECKS += check-deb
check-deb:
	@B=$(B) tests/deb/check.sh

# A stock Debian system of this release with the packages installed as an
# operator installs them, booted whole under emulated protection keys:
# every long-running process execute-only, the hardened systemd daemons
# included (tests/deb/stock-boot.sh, which runs make deb); SKIP without root.
CHECKS += check-stock
.PHONY: check-stock
check-stock:
	@B=$(B) tests/deb/stock-boot.sh
