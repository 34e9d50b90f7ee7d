# tests/scan/: the scanner's tests.  Included from the top Makefile; uses its
# B, CC, CFLAGS, XCFLAGS and XLDFLAGS, so `make asan` (B=build/asan with
# SANFLAGS) rebuilds the helpers and the scanner with sanitizers and reruns
# the same tests.
#
# The helpers read ELF and JSON by themselves, without the scanner's code,
# so that a mistake there cannot hide a mistake in the scanner.

SCANTEST_HELPERS := $(B)/tests/scan/scanq $(B)/tests/scan/elfq \
	$(B)/tests/scan/corrupt

$(B)/tests/scan/%: tests/scan/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(XLDFLAGS)

CHECKS += check-scan
QUICK += check-scan
.PHONY: check-scan
check-scan: $(B)/xom-scan $(SCANTEST_HELPERS)
	@CC=$(CC) SANFLAGS='$(SANFLAGS)' tests/scan/run.sh $(B)
