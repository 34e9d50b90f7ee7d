/*
 * kernkey.c - the second way to make code execute-only: the kernel's own
 * execute-only key, for processes whose seccomp filter refuses xom's key.
 *
 * Phase: object (the fault handler reads xom_kernel_key).
 *
 * On x86 with protection keys, Linux gives a mapping made or changed to
 * PROT_EXEC alone a key of the kernel's choosing, allocated once per
 * address space, and denies reads under it (arch/x86/mm/pkeys.c
 * __arch_override_mprotect_pkey for mprotect, mm/mmap.c do_mmap for
 * mmap).  Neither call is pkey_alloc or pkey_mprotect, so a service's
 * SystemCallFilter= allow-list that lacks them lets both through.
 * systemd's MemoryDenyWriteExecute=yes (a seccomp filter before systemd
 * 254's use of PR_SET_MDWE) refuses mprotect with PROT_EXEC, but not
 * mmap without PROT_WRITE: a run is then mapped again from its file, in
 * place, with PROT_EXEC.  That is done only after the file's bytes were
 * compared with the mapped ones, through the same open descriptor, so the
 * pages hold exactly what they held before.
 *
 * The kernel denies reads under its key in the PKRU of the thread that
 * asked.  Every other thread and every signal handler starts from the
 * kernel's initial PKRU, which denies every key but 0, so they are denied
 * too unless the program rewrote its own PKRU; xom_key_check (pkey.c)
 * looks at the key in use.  fork copies the key with the address space.
 */
#include <errno.h>
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"

int xom_kernel_key;

/* The call that was refused first, and how, for the one line. */
static struct { const char *call; int err; } refusal;

void xom_kernel_refused(const char *call, int err)
{
	if (!refusal.call) {
		refusal.call = call;
		refusal.err = err;
	}
	if (xom_via == XOM_VIA_KEY)
		xom_via = XOM_VIA_MPROTECT;
}

void xom_kernel_say_refused(const char *outcome)
{
	xom_notice("%s is refused (%serrno %d) by %s; %s", refusal.call,
	           XOM_ERR(refusal.err), xom_filter_name(!strcmp(refusal.call, "pkey_alloc")),
	           outcome);
}

/* The file being re-mapped from, open while one object is applied. */
static struct { const struct xom_target *t; int fd; } src = { NULL, -1 };

void xom_kernel_close(void)
{
	if (src.fd >= 0)
		x_close(src.fd);
	src.t = NULL;
	src.fd = -1;
}

/* The file offset of the page at vaddr, in the executable segment that
 * holds it; -1 when the page is not all file (a segment's zero fill). */
static long file_offset(const struct xom_target *t, uint64_t vaddr, size_t len)
{
	for (int i = 0; i < t->phnum; i++) {
		const ElfW(Phdr) *p = &t->ph[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X)
		    || vaddr < (p->p_vaddr & ~(uint64_t)(XOM_PAGE - 1))
		    || vaddr + len > p->p_vaddr + p->p_memsz + XOM_PAGE)
			continue;
		uint64_t file_end = p->p_vaddr + p->p_filesz;
		if (vaddr + len > ((file_end + XOM_PAGE - 1) & ~(uint64_t)(XOM_PAGE - 1)))
			return -1;
		return (long)(p->p_offset - (p->p_vaddr - vaddr));
	}
	return -1;
}

/* Maps [a, a+len) again from t's file with prot; with check, only if the
 * file holds the bytes mapped there now.  0 or -errno. */
static long remap(const struct xom_target *t, uintptr_t a, size_t len, int prot,
                  int check)
{
	long off = file_offset(t, a - t->bias, len);

	if (off < 0 || !t->path)
		return -ENOEXEC;
	if (src.t != t) {
		xom_kernel_close();
		long fd = x_open(t->path, O_RDONLY | O_CLOEXEC, 0);
		if (SYS_FAILED(fd))
			return fd;
		src.t = t;
		src.fd = (int)fd;
	}
	if (check) {
		void *copy = x_mmap(NULL, len, PROT_READ, MAP_PRIVATE, src.fd, off);
		if (copy == MAP_FAILED)
			return -ENOMEM;
		int same = memcmp(copy, (const void *)a, len) == 0;
		x_munmap(copy, len);
		if (!same)
			return -ESTALE;
	}
	void *m = x_mmap((void *)a, len, prot, MAP_PRIVATE | MAP_FIXED, src.fd, off);
	return m == (void *)a ? 0 : m == MAP_FAILED ? -ENOMEM : -EFAULT;
}

/* ---- which key the kernel chose ----------------------------------------- */

static unsigned long hex(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		unsigned c = (unsigned char)**p;
		if (c - '0' < 10)
			v = v * 16 + (c - '0');
		else if ((c | 32) - 'a' < 6)
			v = v * 16 + ((c | 32) - 'a' + 10);
		else
			return v;
	}
}

/* The ProtectionKey of the mapping that holds addr, from
 * /proc/self/smaps, or -1.  Read once per process, on the first run that
 * the kernel's key protects. */
static int smaps_key(uintptr_t addr)
{
	char buf[4096 + 256];
	size_t have = 0;
	int in = 0, key = -1;
	long fd = x_open("/proc/self/smaps", O_RDONLY | O_CLOEXEC, 0);

	if (SYS_FAILED(fd))
		return -1;
	for (;;) {
		long r = x_read((int)fd, buf + have, sizeof(buf) - 1 - have);
		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			const char *p = line;
			unsigned long lo = hex(&p);
			if (*p == '-' && p != line) {
				p++;
				unsigned long hi = hex(&p);
				in = *p == ' ' && addr >= lo && addr < hi;
			} else if (in && !strncmp(line, "ProtectionKey:", 14)) {
				p = line + 14;
				while (*p == ' ' || *p == '\t')
					p++;
				key = 0;
				while (*p >= '0' && *p <= '9')
					key = key * 10 + (*p++ - '0');
				goto out;
			}
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		if (have >= sizeof(buf) - 1)
			have = 0;               /* a line longer than the buffer */
		memmove(buf, line, have);
	}
out:
	x_close((int)fd);
	return key;
}

/* ---- protecting ------------------------------------------------------- */

/* After the first run: whether reads of it are denied (the kernel may
 * have had no key left to give, and then PROT_EXEC lets reads through on
 * x86), and which key it carries.  0, or -ENOKEY after undoing. */
static long first_check(const struct xom_target *t, uintptr_t a, size_t len,
                        int via)
{
	if (x_access((const char *)a, F_OK) == -EFAULT) {
		char line[200], num[16] = "";
		int k = smaps_key(a);
		xom_kernel_key = k > 0 ? k : -1;
		if (k > 0)
			xom_fmt(num, sizeof(num), " (key %d)", k);
		xom_fmt(line, sizeof(line), "xom makes code execute-only with the kernel's own execute-only key%s instead, by %s",
		        num, via == XOM_VIA_MPROTECT ? "mprotect(PROT_EXEC)"
		                                     : "mapping it again from its file with PROT_EXEC");
		xom_kernel_say_refused(line);
		return 0;
	}
	xom_kernel_unprotect(t, a, len, PROT_READ | PROT_EXEC, via);
	return -ENOKEY;
}

long xom_kernel_protect(const struct xom_target *t, uintptr_t a, size_t len,
                        int via)
{
	long rc = via == XOM_VIA_MPROTECT
	          ? sys3(SYS_mprotect, (long)a, (long)len, PROT_EXEC)
	          : remap(t, a, len, PROT_EXEC, 1);

	if (rc == 0 && !xom_kernel_key)
		rc = first_check(t, a, len, via);
	return rc;
}

void xom_kernel_unprotect(const struct xom_target *t, uintptr_t a, size_t len,
                          int prot, int via)
{
	if (via == XOM_VIA_MPROTECT)
		sys3(SYS_mprotect, (long)a, (long)len, prot);
	else
		remap(t, a, len, prot, 0);
}
