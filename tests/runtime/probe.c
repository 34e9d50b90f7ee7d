/*
 * probe.c - libxomprobe.so, preloaded after xom into real programs by the
 * runtime's suites: at exit it counts, for every loaded object, the code
 * pages that cannot be read, and appends one line per object to the file
 * named by XOM_PROBE_OUT:  "<path or [main]> <unreadable> <pages>".
 * A key that let reads through would make every count zero.
 *
 * A page is probed with write(2) to a pipe: the kernel honours PKRU when it
 * copies from user memory, so a protected page fails with EFAULT instead of
 * faulting.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int probe_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *fds = arg, xom = 0, total = 0;
	char c;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = (info->dlpi_addr + ph->p_vaddr) & ~4095ul;
		uintptr_t e = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		for (; a < e; a += 4096, total++) {
			if (write(fds[1], (const void *)a, 1) == 1)
				(void)!read(fds[0], &c, 1);
			else
				xom += errno == EFAULT;
		}
	}
	if (total)
		dprintf(fds[2], "%s %d %d\n", *info->dlpi_name ? info->dlpi_name
		                                                : "[main]", xom, total);
	return 0;
}

__attribute__((destructor)) static void probe_all(void)
{
	const char *out = getenv("XOM_PROBE_OUT");
	int fds[3];

	if (!out || pipe(fds) != 0)
		return;
	fds[2] = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fds[2] >= 0) {
		dl_iterate_phdr(probe_one, fds);
		close(fds[2]);
	}
	close(fds[0]);
	close(fds[1]);
}
