# tests/scan/: the scanner's tests.  Included from the top Makefile; uses its
# B, CC, CFLAGS, XCFLAGS and XLDFLAGS, so `make asan` (B=build/asan with
# SANFLAGS) rebuilds the helpers and the scanner with sanitizers and reruns
# the same tests.
#
# The helpers read ELF and JSON by themselves, without the scanner's code,
# so that a mistake there cannot hide a mistake in the scanner.

SCANTEST_HELPERS := $(B)/tests/scan/scanq $(B)/tests/scan/elfq \
	$(B)/tests/scan/corrupt $(B)/tests/scan/evex8

$(B)/tests/scan/%: tests/scan/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(XLDFLAGS)

# The one helper that asks the disassembler, linked as the scanner is.
$(B)/tests/scan/evex8: tests/scan/evex8.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(XLDFLAGS) $(SCAN_LIBS)

CHECKS += check-scan
QUICK += check-scan
.PHONY: check-scan
check-scan: $(B)/xom-scan $(SCANTEST_HELPERS)
	@CC=$(CC) SANFLAGS='$(SANFLAGS)' tests/scan/run.sh $(B)

# The codec test of the emulated-PKU guest (tests/scan/vm-codecs.sh): the
# swscale/swresample driver.  Its page probe is the runtime suites' own
# (tests/runtime/probe.c).
ALL += $(B)/tests/scan/convert

$(B)/tests/scan/convert: tests/scan/convert.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(XLDFLAGS) -ldl -lm
