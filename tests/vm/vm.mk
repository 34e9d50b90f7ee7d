# tests/vm/: the emulated-PKU guest. `make check-vm` boots a Debian kernel
# under QEMU (TCG, -cpu max, which implements protection keys) and runs the
# programs of tests/vm/guest.list there; `make vm-shell` boots a shell.
# See tests/vm/README.md.

VM_PROGS := $(B)/tests/vm/pkey_kernel $(B)/tests/vm/libpkdl.so

CHECKS += check-vm
.PHONY: check-vm vm-shell vm-progs

vm-progs: $(VM_PROGS)

$(B)/tests/vm/pkey_kernel: tests/vm/pkey_kernel.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(XLDFLAGS) -pthread -ldl

$(B)/tests/vm/libpkdl.so: tests/vm/pkdl.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -shared -o $@ $< $(XLDFLAGS) -Wl,--no-undefined

# tests/vm/run installs QEMU itself (through tests/deps.sh vm) so that a
# machine that cannot get it reports a skip instead of a failed build.
check-vm: all $(VM_PROGS)
	@B=$(B) tests/vm/run

vm-shell: all $(VM_PROGS)
	@B=$(B) tests/vm/run --shell
