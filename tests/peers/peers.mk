# tests/peers/: the differential run of peers' own test suites (issue 25).
# Python's regression tests and GLib's installed tests run without xom,
# through the preload door and through the audit door, with backend=none,
# and every case must end the same way in all three runs.  Their packages
# (tests/deps.sh peers) are installed on first use.  It takes a few minutes
# (most tests wait on timers and children), so it is in `make check` but
# not in `make quick`.

CHECKS += check-peers
.PHONY: check-peers
check-peers: $(RUNTIME_FILES) | $(B)/.deps-peers
	@B=$(B) tests/peers/native.sh
