/*
 * kernkey.c - the second way to make code execute-only: the kernel's own
 * execute-only key, for processes whose seccomp filter refuses xom's key.
 *
 * Phase: object; the fault handler reads xom_kernel_key and uses
 * xom_mapping_of and xom_open_mapped.
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
 * place, with PROT_EXEC.  The file is the one mapped there, opened by the
 * kernel's name for the mapping (/proc/self/maps) and checked to be the
 * same inode, and its bytes are compared with the mapped ones through
 * that descriptor first, so the pages hold exactly what they held before.
 * A failure gives back only what was made, the way it was made (apply.c).
 *
 * The kernel denies reads under its key in the PKRU of the thread that
 * asked.  Every other thread and every signal handler starts from the
 * kernel's initial PKRU, which denies every key but 0, so they are denied
 * too unless the program rewrote its own PKRU; xom_key_check (pkey.c)
 * looks at the key in use.  fork copies the key with the address space.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "loader.h"
#include "sys.h"

int xom_kernel_key;
int xom_via;            /* XOM_VIA_KEY: 0, like xom_kernel_key, for .bss */

/* What refuses the key, for messages: in a systemd unit, which setting. */
static const char *filter_name(int alloc)
{
	if (!xom_in_unit())
		return "a seccomp filter (a container runtime's profile, or a service manager's)";
	return alloc ? "a seccomp filter: this systemd unit's SystemCallFilter= lacks pkey_alloc"
	             : "a seccomp filter: this systemd unit's MemoryDenyWriteExecute=yes (or a SystemCallFilter= without pkey_mprotect)";
}

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
	           XOM_ERR(refusal.err), filter_name(!strcmp(refusal.call, "pkey_alloc")),
	           outcome);
}

/* The file being re-mapped from, open while one object is applied: the
 * very file mapped at the object's code, found by the kernel's own name
 * for the mapping, checked by its inode. */
static struct { const struct xom_target *t; int fd; long size; } src = { NULL, -1, 0 };

void xom_kernel_close(void)
{
	if (src.fd >= 0)
		x_close(src.fd);
	src.t = NULL;
	src.fd = -1;
}

/* ---- /proc/self/maps ----------------------------------------------------- */

static unsigned long hex(const char **p)
{
	unsigned long v = 0;

	for (int d; (d = xom_hex_digit(**p)) >= 0; (*p)++)
		v = v * 16 + (unsigned long)d;
	return v;
}

/* One maps line, at its start: fills m when it holds addr. */
static int maps_line(const char *line, const char *end, uintptr_t addr,
                     struct xom_mapped *m)
{
	const char *p = line;
	unsigned long lo = hex(&p), hi = (p++, hex(&p));

	if (addr < lo || addr >= hi || p[0] != ' ' || end - p < 6)
		return 0;
	m->prot = (p[1] == 'r' ? PROT_READ : 0) | (p[2] == 'w' ? PROT_WRITE : 0)
	          | (p[3] == 'x' ? PROT_EXEC : 0);
	p += 6;
	m->off = hex(&p) + (addr - lo);
	p++;
	m->major = hex(&p);
	p++;
	m->minor = hex(&p);
	m->ino = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		m->ino = m->ino * 10 + (unsigned long)(*p - '0');
	const char *path = memchr(p, '/', (size_t)(end - p));
	size_t n = path ? (size_t)(end - path) : 0;
	/* A file deleted since it was mapped has no name to open again:
	 * another file may be called "NAME (deleted)". */
	if (n >= sizeof(m->path) || (n > 10 && !memcmp(end - 10, " (deleted)", 10)))
		n = 0;
	memcpy(m->path, path ? path : "", n);
	m->path[n] = 0;
	return 1;
}

/* Calls fn on each line of the /proc file at path, read with raw calls,
 * until fn returns non-zero [fault]. */
static void proc_lines(const char *path,
                       int (*fn)(const char *line, const char *end, void *arg),
                       void *arg)
{
	char buf[4096 + 512];
	size_t have = 0;
	int skip = 0;           /* in a line longer than buf, whose start went */
	long fd = x_open(path, O_RDONLY | O_CLOEXEC, 0);

	if (SYS_FAILED(fd))
		return;
	for (;;) {
		long r = x_read((int)fd, buf + have, sizeof(buf) - 1 - have);
		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			/* The rest of a long line is not a line: a file's name
			 * could make it read like one. */
			if (!skip && fn(line, nl, arg))
				goto out;
			skip = 0;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		if (have >= sizeof(buf) - 1) {
			have = 0;
			skip = 1;
		}
		memmove(buf, line, have);
	}
out:
	x_close((int)fd);
}

struct maps_query { uintptr_t addr; struct xom_mapped *m; };

static int maps_query_line(const char *line, const char *end, void *arg)
{
	struct maps_query *q = arg;

	return maps_line(line, end, q->addr, q->m);
}

void xom_mapping_of(uintptr_t addr, struct xom_mapped *m)
{
	struct maps_query q = { addr, m };

	m->prot = -1;
	m->path[0] = 0;
	proc_lines("/proc/self/maps", maps_query_line, &q);
}

long xom_open_mapped(const struct xom_mapped *m, struct stat *st)
{
	long fd = m->path[0] == '/'
	          ? x_open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0)
	          : -ENOENT;

	if (SYS_FAILED(fd))
		return fd;
	/* maps gives the file system's device; btrfs's stat a subvolume's,
	 * both anonymous (major 0), so there the inode number decides. */
	if (x_fstat((int)fd, st) == 0 && S_ISREG(st->st_mode) && st->st_ino == m->ino
	    && ((major(st->st_dev) == m->major && minor(st->st_dev) == m->minor)
	        || (major(st->st_dev) == 0 && m->major == 0)))
		return fd;
	x_close((int)fd);
	return -ESTALE;
}

/* ---- re-mapping ---------------------------------------------------------- */

/* The file offset of the page at vaddr, in the executable segment that
 * holds [vaddr, vaddr+len) whole; -1 when a page is not file (a segment's
 * zero fill) or the range leaves the segment. */
static long file_offset(const struct xom_target *t, uint64_t vaddr, size_t len)
{
	for (int i = 0; i < t->phnum; i++) {
		const ElfW(Phdr) *p = &t->ph[i];
		uint64_t lo = p->p_vaddr & ~(uint64_t)(XOM_PAGE - 1);
		uint64_t file_end = (p->p_vaddr + p->p_filesz + XOM_PAGE - 1)
		                    & ~(uint64_t)(XOM_PAGE - 1);
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X)
		    || vaddr < lo || vaddr >= file_end)
			continue;
		if (vaddr + len > file_end)
			return -1;
		return (long)(p->p_offset - (p->p_vaddr - vaddr));
	}
	return -1;
}

/* Opens the file mapped at a for t: the kernel's name of the mapping,
 * which must still be that inode, a regular file.  0 or -ENOEXEC. */
static long open_source(const struct xom_target *t, uintptr_t a)
{
	struct xom_mapped m;
	struct stat st;

	xom_kernel_close();
	xom_mapping_of(a, &m);
	if (m.prot < 0 || m.path[0] != '/')
		return -ENOEXEC;
	long fd = xom_open_mapped(&m, &st);
	if (SYS_FAILED(fd))
		return -ENOEXEC;
	src.t = t;
	src.fd = (int)fd;
	src.size = (long)st.st_size;
	return 0;
}

/* Maps [a, a+len) of t again from its file with PROT_EXEC, if the file
 * holds the bytes mapped there now.  0, -errno of a refused or failed
 * mmap, -ESTALE (other bytes) or -ENOEXEC (no such file to map from). */
static long remap(const struct xom_target *t, uintptr_t a, size_t len)
{
	long off = file_offset(t, a - t->bias, len), rc;

	if (off < 0)
		return -ENOEXEC;
	if (src.t != t && (rc = open_source(t, a)) != 0)
		return rc;
	/* Every page must have a byte in the file: a page past its end
	 * would raise SIGBUS. */
	if (off + (long)len - (long)XOM_PAGE >= src.size)
		return -ENOEXEC;
	void *copy = x_mmap(NULL, len, PROT_READ, MAP_PRIVATE, src.fd, off);
	if (X_MAP_FAILED(copy))
		return (long)copy;
	int same = memcmp(copy, (const void *)a, len) == 0;
	x_munmap(copy, len);
	if (!same)
		return -ESTALE;
	void *m = x_mmap((void *)a, len, PROT_EXEC, MAP_PRIVATE | MAP_FIXED, src.fd, off);
	if (X_MAP_FAILED(m) && (long)m != -EPERM && (long)m != -EACCES)
		/* Before Linux 6.12 a late failure may have unmapped the
		 * range: the compared bytes go back. */
		x_mmap((void *)a, len, xom_elf_seg_prot(t->ph, t->phnum, a - t->bias),
		       MAP_PRIVATE | MAP_FIXED, src.fd, off);
	return X_MAP_FAILED(m) ? (long)m : m == (void *)a ? 0 : -EFAULT;
}

/* Gives a run that remap protected back its protection: from the same
 * file, whose bytes it was just compared with. */
static void unmap_back(uintptr_t a, size_t len, int prot)
{
	long off = src.t ? file_offset(src.t, a - src.t->bias, len) : -1;

	if (off >= 0)
		x_mmap((void *)a, len, prot, MAP_PRIVATE | MAP_FIXED, src.fd, off);
}

/* ---- which key the kernel chose ----------------------------------------- */

/* The ProtectionKey of the mapping that holds addr, from
 * /proc/self/smaps, or -1.  Read once per process, on the first run that
 * the kernel's key protects. */
struct key_query { uintptr_t addr; int in, key; };

static int smaps_line(const char *line, const char *end, void *arg)
{
	struct key_query *q = arg;
	const char *p = line;
	unsigned long lo = hex(&p);

	(void)end;
	if (*p == '-' && p != line) {
		p++;
		unsigned long hi = hex(&p);
		q->in = *p == ' ' && q->addr >= lo && q->addr < hi;
	} else if (q->in && !strncmp(line, "ProtectionKey:", 14)) {
		for (p = line + 14; *p == ' ' || *p == '\t'; p++)
			;
		q->key = 0;
		while (*p >= '0' && *p <= '9')
			q->key = q->key * 10 + (*p++ - '0');
		return 1;
	}
	return 0;
}

static int smaps_key(uintptr_t addr)
{
	struct key_query q = { addr, 0, -1 };

	proc_lines("/proc/self/smaps", smaps_line, &q);
	return q.key;
}

/* ---- protecting ------------------------------------------------------- */

/* Whether reads at a are denied: the kernel's copy from it fails with
 * EFAULT.  access(2) asks with no descriptor; where a filter refuses it,
 * a pipe's write(2) asks instead. */
static int reads_denied(uintptr_t a)
{
	long r = x_access((const char *)a, F_OK);
	int fd[2];

	if (r != -EPERM && r != -ENOSYS)
		return r == -EFAULT;
	if (x_pipe2(fd, O_CLOEXEC) != 0)
		return 0;
	r = x_write(fd[1], (const void *)a, 1);
	x_close(fd[0]);
	x_close(fd[1]);
	return r == -EFAULT;
}

/* After the first run: whether reads of it are denied (the kernel may
 * have had no key left to give, and then PROT_EXEC lets reads through on
 * x86), and which key it carries.  0, or -ENOKEY after undoing. */
static long first_check(uintptr_t a, size_t len, int via)
{
	if (reads_denied(a)) {
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
	xom_kernel_unprotect(a, len, PROT_READ | PROT_EXEC, via);
	return -ENOKEY;
}

long xom_kernel_protect(const struct xom_target *t, uintptr_t a, size_t len,
                        int via)
{
	long rc = via == XOM_VIA_MPROTECT
	          ? sys3(SYS_mprotect, (long)a, (long)len, PROT_EXEC)
	          : remap(t, a, len);

	if (rc == 0 && !xom_kernel_key)
		rc = first_check(a, len, via);
	return rc;
}

void xom_kernel_unprotect(uintptr_t a, size_t len, int prot, int via)
{
	if (via == XOM_VIA_MPROTECT)
		sys3(SYS_mprotect, (long)a, (long)len, prot);
	else
		unmap_back(a, len, prot);
}
