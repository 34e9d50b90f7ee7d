# demo/: a program with a read bug and a JIT-ROP attacker that uses it.
# `make demo` runs the attack without and with xom; where the CPU has no
# protection keys it runs inside the emulated-PKU VM (tests/vm/run).

DEMO_PROGS := $(B)/demo/victim $(B)/demo/attacker $(B)/demo/demo.sh
ALL += $(DEMO_PROGS)

# Ordinary compiler flags: the victim should look like any program.
$(B)/demo/%: demo/%.c | $(B)/.deps-build
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $<

# The guest sees build outputs and tests/ only, so the script travels in
# build/.
$(B)/demo/demo.sh: demo/demo.sh
	@mkdir -p $(@D)
	cp $< $@ && chmod 755 $@

.PHONY: demo demo-progs
demo-progs: $(DEMO_PROGS)

# Only what the demo runs is built; the VM needs QEMU and a kernel, not the
# test suite's packages (tests/vm/run --demo).
DEMO_NEEDS := $(B)/xom $(B)/xom-scan $(B)/xom-plan $(B)/libxom.so \
	$(B)/libxom-audit.so $(B)/libxom-scan.so $(DEMO_PROGS)
demo: $(DEMO_NEEDS)
	@if $(B)/xom check >/dev/null 2>&1; then \
		$(B)/demo/demo.sh; \
	else \
		echo "This CPU has no memory protection keys (PKU), so the demo runs inside a"; \
		echo "virtual machine whose emulated CPU has them (QEMU -cpu max, via tests/vm/run)."; \
		echo "The first run installs QEMU (about 100 MB) and downloads a kernel; then"; \
		echo "the guest boots and runs the demo, about half a minute on an idle machine."; \
		echo; \
		B=$(B) tests/vm/run --demo --timeout 300 -- build/demo/demo.sh; \
	fi

# tests/cmd/guest.sh runs the demo in the emulated-PKU guest suite.
check-vm vm-progs: $(DEMO_PROGS)
