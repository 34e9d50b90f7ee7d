/*
 * exec.c - what exec runs for a file (exec.h), read the way the kernel
 * reads it: a #! line in the first 256 bytes names an interpreter, and
 * an ELF program's first PT_INTERP names the dynamic linker, whose path
 * must end in its NUL.  The callers walk the chain, each with its own
 * purpose, up to MAX_INTERP_DEPTH interpreters.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec.h"

/* The interpreter and first argument of the #! line at line. */
static void shebang(const char *line, char *interp, char *arg)
{
	line += 2 + strspn(line + 2, " \t");
	size_t len = strcspn(line, " \t\n");
	snprintf(interp, EXEC_HEAD, "%.*s", (int)len, line);
	line += len;
	line += strspn(line, " \t");
	snprintf(arg, EXEC_HEAD, "%.*s", (int)strcspn(line, " \t\n"), line);
}

enum exec_kind exec_head(int fd, struct exec_head *h, char interp[EXEC_HEAD],
                         char arg[EXEC_HEAD])
{
	interp[0] = arg[0] = 0;
	h->n = pread(fd, h->buf, EXEC_HEAD, 0);
	if (h->n < 0)
		h->n = 0;
	h->buf[h->n] = 0;
	if (h->n >= 2 && h->buf[0] == '#' && h->buf[1] == '!') {
		shebang((const char *)h->buf, interp, arg);
		return EXEC_SCRIPT;
	}
	if (h->n >= SELFMAG && !memcmp(h->buf, ELFMAG, SELFMAG))
		return EXEC_ELF;
	return EXEC_NEITHER;
}

int exec_pt_interp(int fd, const Elf64_Ehdr *eh, char *out, size_t len)
{
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		uint64_t off;
		if (__builtin_mul_overflow((uint64_t)i, sizeof ph, &off)
		    || __builtin_add_overflow(off, eh->e_phoff, &off)
		    || off > (uint64_t)INT64_MAX
		    || pread(fd, &ph, sizeof ph, (off_t)off) != (ssize_t)sizeof ph)
			return -1;
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz < 2 || ph.p_filesz > len || ph.p_offset > (uint64_t)INT64_MAX
		    || pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz
		    || out[ph.p_filesz - 1] != 0)
			return -1;
		return 1;
	}
	return 0;
}
