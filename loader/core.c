/*
 * core.c - the runtime core: options, messages, the key, the table of
 * loaded objects, applying plans, and the SIGSEGV handler.
 *
 * Phases, and what each may not do:
 *   start     (xom_start) runs in the preload constructor or in the audit
 *             module's la_version.  It may not use stdio or the host's
 *             malloc: everything it keeps lives in static storage.
 *   objects   (xom_add_object, xom_forget_range) run with the dynamic
 *             linker's lock or xom_lock held; they may open files and spawn
 *             the helper, but keep no heap memory.
 *   fault     (on_segv) runs with the kernel's default PKRU, which denies
 *             reads of our key's pages, on any thread, at any moment: only
 *             raw system calls and reads of our own tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "core.h"
#include "xom_loader.h"
#include "../scan/xom_scan.h"

#define PAGE 4096ul
#define MAX_OBJS 1024
#define MAX_PROFILE_PAGES 512

struct xom_opts xom_opt = { .log_fd = 2 };

static const char *door = "xom";
static int active;
static int key = -1;
static unsigned long prot_calls;

/* ---- messages ------------------------------------------------------ */

static void msg_raw(struct xom_msg *m, const char *s, size_t n)
{
	size_t room = sizeof(m->buf) - 1 - m->n;    /* keep one byte for '\n' */

	if (n > room)
		n = room;
	memcpy(m->buf + m->n, s, n);
	m->n += n;
}

void msg_start(struct xom_msg *m)
{
	m->n = 0;
	msg_raw(m, "xom: ", 5);
}

void msg_str(struct xom_msg *m, const char *s)
{
	msg_raw(m, s, strlen(s));
}

void msg_dec(struct xom_msg *m, uint64_t v)
{
	char d[24];
	int i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while (v /= 10);
	msg_raw(m, d + i, sizeof(d) - i);
}

void msg_hex(struct xom_msg *m, uint64_t v)
{
	char d[20];
	int i = sizeof(d);

	do
		d[--i] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	d[--i] = 'x';
	d[--i] = '0';
	msg_raw(m, d + i, sizeof(d) - i);
}

/* strerror is not async-signal-safe and may allocate; name the common
 * errors here and give the number otherwise. */
void msg_errno(struct xom_msg *m, int err)
{
	static const struct { int e; const char *s; } names[] = {
		{ ENOENT, "no such file" }, { EACCES, "permission denied" },
		{ ENOMEM, "out of memory or map count" }, { EINVAL, "invalid" },
		{ ENOSPC, "no space" }, { ENOSYS, "not implemented" },
		{ EPERM, "not permitted" }, { EEXIST, "exists" },
	};

	msg_str(m, " (");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err) {
			msg_str(m, names[i].s);
			msg_str(m, ", ");
			break;
		}
	msg_str(m, "errno ");
	msg_dec(m, (uint64_t)err);
	msg_str(m, ")");
}

void msg_send(struct xom_msg *m)
{
	m->buf[m->n++] = '\n';
	int saved = errno;
	ssize_t r;
	do
		r = write(xom_opt.log_fd, m->buf, m->n);
	while (r < 0 && errno == EINTR);
	errno = saved;
}

static void say(const char *a, const char *b, const char *c)
{
	struct xom_msg m;

	msg_start(&m);
	msg_str(&m, a);
	if (b)
		msg_str(&m, b);
	if (c)
		msg_str(&m, c);
	msg_send(&m);
}

/* ---- options ------------------------------------------------------- */

static char opt_buf[4096];
static char cache_buf[4096];

static int bad_option(const char *what, const char *item, const char *end)
{
	struct xom_msg m;

	msg_start(&m);
	msg_str(&m, "XOM_OPTIONS: ");
	msg_str(&m, what);
	msg_str(&m, item);
	msg_str(&m, end);
	msg_send(&m);
	return -1;
}

static int parse_pair(char *item)
{
	char *v = strchr(item, '=');
	if (!v || v == item)
		return bad_option("expected key=value, got '", item, "'");
	*v++ = 0;
	if (!strcmp(item, "mode")) {
		if (!strcmp(v, "enforce")) xom_opt.mode = XOM_ENFORCE;
		else if (!strcmp(v, "audit")) xom_opt.mode = XOM_AUDIT;
		else if (!strcmp(v, "off")) xom_opt.mode = XOM_OFF;
		else return bad_option("mode must be enforce, audit or off, got '", v, "'");
	} else if (!strcmp(item, "backend")) {
		if (!strcmp(v, "pkey")) xom_opt.backend = XOM_BACKEND_PKEY;
		else if (!strcmp(v, "none")) xom_opt.backend = XOM_BACKEND_NONE;
		else return bad_option("backend must be pkey or none, got '", v, "'");
	} else if (!strcmp(item, "require")) {
		if (strcmp(v, "0") && strcmp(v, "1"))
			return bad_option("require must be 0 or 1, got '", v, "'");
		xom_opt.require = *v == '1';
	} else if (!strcmp(item, "verbose")) {
		char *end;
		long n = strtol(v, &end, 10);
		if (!*v || *end || n < 0 || n > 9)
			return bad_option("verbose must be a number 0-9, got '", v, "'");
		xom_opt.verbose = (int)n;
	} else if (!strcmp(item, "log")) {
		if (!*v)
			return bad_option("log needs a path", "", "");
		int fd = open(v, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return bad_option("cannot open log file '", v, "'");
		xom_opt.log_fd = fd;
	} else if (!strcmp(item, "cache")) {
		if (!*v)
			return bad_option("cache needs a directory or off", "", "");
		xom_opt.cache = strcmp(v, "off") ? v : NULL;
	} else if (!strcmp(item, "profile")) {
		if (!*v)
			return bad_option("profile needs a path", "", "");
		xom_opt.profile = v;
	} else if (!strcmp(item, "exclude")) {
		xom_opt.exclude = v;
	} else {
		return bad_option("unknown key '", item, "'");
	}
	return 0;
}

static void default_cache(void)
{
	const char *base = getenv("XDG_CACHE_HOME");
	const char *tail = "/xom";

	if (!base || base[0] != '/') {
		base = getenv("HOME");
		tail = "/.cache/xom";
	}
	if (!base || base[0] != '/' || strlen(base) + 12 >= sizeof(cache_buf))
		return;
	strcpy(cache_buf, base);
	strcat(cache_buf, tail);
	xom_opt.cache = cache_buf;
}

/* Returns 0, or -1 after one line naming the first bad item.  require=1 is
 * honoured even when it appears after the bad item. */
static int parse_options(void)
{
	const char *env = getenv("XOM_OPTIONS");
	int bad = 0;

	default_cache();
	if (!env || !*env)
		return 0;
	if (strlen(env) >= sizeof(opt_buf))
		return bad_option("too long", "", "");
	strcpy(opt_buf, env);
	for (char *s = opt_buf, *next; s; s = next) {
		next = strchr(s, ':');
		if (next)
			*next++ = 0;
		if (!*s)
			continue;
		if (!strcmp(s, "require=1"))
			xom_opt.require = 1;
		if (!bad && parse_pair(s) != 0)
			bad = 1;
	}
	return bad ? -1 : 0;
}

/* ---- the key ------------------------------------------------------- */

static void refuse(const char *why)
{
	say("refusing to run: ", why, " (require=1)");
	_exit(127);
}

static int alloc_key(void)
{
	long k = syscall(SYS_pkey_alloc, 0ul, (unsigned long)PKEY_DISABLE_ACCESS);
	if (k >= 0) {
		key = (int)k;
		return 0;
	}
	const char *why;
	switch (errno) {
	case EINVAL: why = "protection keys are not supported by this CPU or kernel"; break;
	case ENOSPC: why = "all protection keys are already in use"; break;
	case ENOSYS: why = "the kernel has no pkey_alloc"; break;
	default: why = "pkey_alloc failed"; break;
	}
	if (xom_opt.require)
		refuse(why);
	say(why, "; running unprotected", NULL);
	return -1;
}

static int protect_range(uintptr_t a, size_t len)
{
	prot_calls++;
	if (xom_opt.backend == XOM_BACKEND_NONE)
		return 0;
	return (int)syscall(SYS_pkey_mprotect, a, len, PROT_EXEC, key);
}

static void unprotect_range(uintptr_t a, size_t len, int prot)
{
	if (xom_opt.backend == XOM_BACKEND_NONE)
		return;
	syscall(SYS_pkey_mprotect, a, len, prot, 0);
}

/* ---- the table of objects ------------------------------------------ */

/*
 * Written only under the dynamic linker's lock or xom_lock, read without a
 * lock by the fault handler: a slot is filled first and published by
 * setting live last (release), and readers load live first (acquire).
 */
struct object {
	int live;
	uintptr_t bias, lo, hi;         /* executable span in memory */
	const struct xom_plan_head *plan;
	char id[132];                   /* build-id in hex, or the path */
	char path[256];
};

static struct object objs[MAX_OBJS];
/* Slots in use are all below this mark, so that a scan touches only the
 * pages of the slots that were used: the table is big, and touching all of
 * it would cost every process start a hundred page faults. */
static int nobjs;

static struct object *find_object(uintptr_t addr)
{
	for (int i = 0; i < __atomic_load_n(&nobjs, __ATOMIC_ACQUIRE); i++) {
		struct object *o = &objs[i];
		if (__atomic_load_n(&o->live, __ATOMIC_ACQUIRE)
		    && addr >= o->lo && addr < o->hi)
			return o;
	}
	return NULL;
}

void xom_forget_range(uintptr_t start, uintptr_t end)
{
	for (int i = 0; i < __atomic_load_n(&nobjs, __ATOMIC_ACQUIRE); i++) {
		struct object *o = &objs[i];
		if (o->live && o->lo < end && start < o->hi)
			__atomic_store_n(&o->live, 0, __ATOMIC_RELEASE);
	}
}

static struct object *known_object(uintptr_t bias, uintptr_t lo,
                                   const char *path)
{
	for (int i = 0; i < __atomic_load_n(&nobjs, __ATOMIC_ACQUIRE); i++) {
		struct object *o = &objs[i];
		if (o->live && o->bias == bias && o->lo == lo
		    && !strncmp(o->path, path, sizeof(o->path) - 1))
			return o;
	}
	return NULL;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

static void remember(uintptr_t bias, uintptr_t lo, uintptr_t hi,
                     const char *path, const char *id,
                     const struct xom_plan_head *plan)
{
	for (int i = 0; i < MAX_OBJS && i <= nobjs; i++) {
		struct object *o = &objs[i];
		if (o->live)
			continue;
		o->bias = bias;
		o->lo = lo;
		o->hi = hi;
		o->plan = plan;
		copy_str(o->path, sizeof(o->path), path);
		copy_str(o->id, sizeof(o->id), id);
		__atomic_store_n(&o->live, 1, __ATOMIC_RELEASE);
		if (i == nobjs)
			__atomic_store_n(&nobjs, i + 1, __ATOMIC_RELEASE);
		return;
	}
	say(path, ": too many objects loaded; xom cannot name its faults", NULL);
}

/* ---- the profile --------------------------------------------------- */

static const char *profile_map;
static size_t profile_len;

static void load_profile(void)
{
	if (!xom_opt.profile)
		return;
	int fd = open(xom_opt.profile, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;         /* A first audit run creates it. */
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		void *p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			profile_map = p;
			profile_len = st.st_size;
		}
	}
	close(fd);
}

/* Profile lines are "<build-id in hex, or path> 0x<link-time page>". */
static size_t profile_pages(const char *id, uint64_t *out, size_t cap)
{
	size_t n = 0, idn = strlen(id);
	const char *p = profile_map, *end = profile_map + profile_len;

	while (p && p < end && n < cap) {
		const char *nl = memchr(p, '\n', end - p);
		const char *eol = nl ? nl : end;
		if ((size_t)(eol - p) > idn + 3 && !memcmp(p, id, idn)
		    && p[idn] == ' ' && p[idn + 1] == '0' && p[idn + 2] == 'x') {
			uint64_t v = 0;
			const char *q = p + idn + 3;
			for (; q < eol; q++) {
				int d = *q >= '0' && *q <= '9' ? *q - '0'
				        : *q >= 'a' && *q <= 'f' ? *q - 'a' + 10 : -1;
				if (d < 0)
					break;
				v = v << 4 | (uint64_t)d;
			}
			if (q == eol)
				out[n++] = v & ~(uint64_t)(PAGE - 1);
		}
		p = eol + 1;
	}
	/* Insertion sort: profiles are short. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j && out[j - 1] > out[j]; j--) {
			uint64_t t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

static void append_profile(const struct object *o, uint64_t page)
{
	struct xom_msg m;

	if (!xom_opt.profile)
		return;
	m.n = 0;
	msg_str(&m, o->id);
	msg_str(&m, " ");
	msg_hex(&m, page);
	m.buf[m.n++] = '\n';
	int fd = open(xom_opt.profile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	              0600);
	if (fd >= 0) {
		ssize_t r = write(fd, m.buf, m.n);
		(void)r;
		close(fd);
	}
}

/* ---- applying a plan ----------------------------------------------- */

static int is_excluded(const char *path)
{
	const char *base = strrchr(path, '/');
	char pat[256];

	base = base ? base + 1 : path;
	for (const char *p = xom_opt.exclude; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = 0;
			if (!fnmatch(pat, path, 0) || !fnmatch(pat, base, 0))
				return 1;
		}
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

static void read_build_id(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                          struct xom_plan_id *id)
{
	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const void *)(bias + ph[i].p_vaddr);
		const unsigned char *end = p + ph[i].p_memsz;
		while (p + 12 <= end) {
			const uint32_t *n = (const void *)p;
			size_t name = (n[0] + 3) & ~3u, desc = (n[1] + 3) & ~3u;
			const unsigned char *d = p + 12 + name;
			if (d + desc > end)
				break;
			if (n[2] == NT_GNU_BUILD_ID && n[0] == 4
			    && !memcmp(p + 12, "GNU", 4) && n[1] <= 64) {
				id->build_id_len = (uint8_t)n[1];
				memcpy(id->build_id, d, n[1]);
				return;
			}
			p = d + desc;
		}
	}
}

static void exec_span(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                      uintptr_t *lo, uintptr_t *hi)
{
	*lo = UINTPTR_MAX;
	*hi = 0;
	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		uintptr_t s = (bias + ph[i].p_vaddr) & ~(PAGE - 1);
		uintptr_t e = (bias + ph[i].p_vaddr + ph[i].p_memsz + PAGE - 1)
		              & ~(PAGE - 1);
		if (s < *lo)
			*lo = s;
		if (e > *hi)
			*hi = e;
	}
}

/* The plan must list exactly the executable segments that are mapped. */
static int segs_match(const struct xom_plan_head *h, const ElfW(Phdr) *ph,
                      int phnum)
{
	const struct xom_plan_seg *s = (const void *)(h + 1);
	uint32_t k = 0;

	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (k >= h->nsegs || s[k].vaddr != ph[i].p_vaddr
		    || s[k].memsz != ph[i].p_memsz)
			return 0;
		k++;
	}
	return k == h->nsegs;
}

static const char *whole_reason(int r)
{
	switch (r) {
	case XOM_R_TEXTREL: return "it has text relocations (DT_TEXTREL)";
	case XOM_R_WRITABLE: return "it has a writable executable segment";
	case XOM_R_NOSECTIONS: return "it has no section headers";
	default: return "the scanner keeps the whole file readable";
	}
}

static int seg_prot(const ElfW(Phdr) *ph, int phnum, uintptr_t vaddr)
{
	for (int i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= (ph[i].p_vaddr & ~(PAGE - 1))
		    && vaddr < ph[i].p_vaddr + ph[i].p_memsz)
			return (ph[i].p_flags & PF_R ? PROT_READ : 0) | PROT_EXEC;
	return PROT_READ | PROT_EXEC;
}

/* Protects [s, e) minus the profile's pages; returns pages protected or
 * -1 (with errno), leaving the caller to undo. */
static long apply_run(uintptr_t bias, uint64_t s, uint64_t e,
                      const uint64_t *keep, size_t nkeep)
{
	long pages = 0;
	uint64_t cur = s;

	for (size_t i = 0; i <= nkeep; i++) {
		uint64_t stop = i < nkeep ? keep[i] : e;
		if (stop < cur)
			continue;
		if (stop > e)
			stop = e;
		if (stop > cur) {
			if (protect_range(bias + cur, stop - cur) != 0)
				return -1;
			pages += (long)((stop - cur) / PAGE);
		}
		if (i < nkeep && keep[i] + PAGE > cur)
			cur = keep[i] + PAGE;
		if (cur >= e)
			break;
	}
	return pages;
}

static void apply_plan(const char *path, uintptr_t bias,
                       const ElfW(Phdr) *ph, int phnum,
                       const struct xom_plan_head *h, const char *id)
{
	static uint64_t keep[MAX_PROFILE_PAGES];
	size_t nkeep = profile_pages(id, keep, MAX_PROFILE_PAGES);
	const struct xom_plan_run *r =
		(const void *)((const struct xom_plan_seg *)(h + 1) + h->nsegs);
	unsigned long calls0 = prot_calls;
	long xom = 0;

	for (uint32_t i = 0; i < h->nruns; i++) {
		long n = apply_run(bias, r[i].start, r[i].end, keep, nkeep);
		if (n < 0) {
			int err = errno;
			/* The failing call may have changed part of its range
			 * before it gave up, so every run up to and including
			 * this one goes back to the protection it was mapped
			 * with: the object works as if xom were absent. */
			for (uint32_t j = 0; j <= i; j++)
				unprotect_range(bias + r[j].start, r[j].end - r[j].start,
				                seg_prot(ph, phnum, r[j].start));
			struct xom_msg m;
			msg_start(&m);
			msg_str(&m, path);
			msg_str(&m, ": pkey_mprotect failed");
			msg_errno(&m, err);
			msg_str(&m, "; left unprotected");
			msg_send(&m);
			return;
		}
		xom += n;
	}
	if (xom_opt.verbose >= 1) {
		struct xom_msg m;
		msg_start(&m);
		msg_str(&m, path);
		msg_str(&m, ": ");
		msg_dec(&m, (uint64_t)xom);
		msg_str(&m, " pages execute-only, ");
		msg_dec(&m, h->exec_pages - (uint64_t)xom);
		msg_str(&m, " kept readable, ");
		msg_dec(&m, prot_calls - calls0);
		msg_str(&m, xom_opt.backend == XOM_BACKEND_NONE
		            ? " protection calls not made (backend=none)"
		            : " protection calls");
		msg_send(&m);
	}
}

static void hex_id(const struct xom_plan_id *id, const char *path, char *out,
                   size_t cap)
{
	if (!id->build_id_len || (size_t)id->build_id_len * 2 >= cap) {
		copy_str(out, cap, path);
		return;
	}
	for (int i = 0; i < id->build_id_len; i++) {
		out[2 * i] = "0123456789abcdef"[id->build_id[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[id->build_id[i] & 15];
	}
	out[2 * id->build_id_len] = 0;
}

void xom_add_object(const char *name, uintptr_t bias,
                    const ElfW(Phdr) *ph, int phnum)
{
	static char exe[PATH_MAX];
	const char *path = name;
	uintptr_t lo, hi;
	char idhex[132];
	struct xom_plan_id id;

	if (!active || !ph)
		return;
	exec_span(bias, ph, phnum, &lo, &hi);
	if (lo >= hi)
		return;         /* Nothing executable (a pure data object). */
	if (!name || !*name) {
		/* Not AT_EXECFN: for a #! script that names the script, and
		 * the interpreter that is really mapped would go unprotected. */
		if (!exe[0]) {
			ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			if (n <= 0)
				return;
			exe[n] = 0;
		}
		path = exe;
	}
	if (known_object(bias, lo, path))
		return;
	xom_forget_range(lo, hi);
	if (!strncmp(path, "linux-vdso", 10)
	    || (uintptr_t)getauxval(AT_SYSINFO_EHDR) == lo) {
		remember(bias, lo, hi, "[vdso]", "[vdso]", NULL);
		return;         /* The vDSO has no file and stays readable. */
	}
	if (is_excluded(path)) {
		if (xom_opt.verbose >= 1)
			say(path, ": excluded; left unprotected", NULL);
		remember(bias, lo, hi, path, path, NULL);
		return;
	}
	memset(&id, 0, sizeof(id));
	read_build_id(bias, ph, phnum, &id);
	hex_id(&id, path, idhex, sizeof(idhex));
	const struct xom_plan_head *h = NULL;
	if (stat(path, &id.st) != 0) {
		struct xom_msg m;
		msg_start(&m);
		msg_str(&m, path);
		msg_str(&m, ": cannot stat the file");
		msg_errno(&m, errno);
		msg_str(&m, "; left unprotected");
		msg_send(&m);
	} else if ((h = xom_plan_get(path, &id)) != NULL) {
		if (h->whole) {
			say(path, ": left unprotected because ", whole_reason(h->whole));
		} else if (!segs_match(h, ph, phnum)) {
			say(path, ": the plan's segments differ from the mapped ones;",
			    " left unprotected");
		} else {
			apply_plan(path, bias, ph, phnum, h, idhex);
		}
	}
	remember(bias, lo, hi, path, idhex, h);
}

const ElfW(Phdr) *xom_link_map_phdrs(const struct link_map *map, int is_main,
                                     int *phnum)
{
	if (is_main) {
		*phnum = (int)getauxval(AT_PHNUM);
		return (const void *)getauxval(AT_PHDR);
	}
	/* A shared object's first PT_LOAD maps file offset 0 at address 0. */
	const ElfW(Ehdr) *eh = (const void *)map->l_addr;
	if (!map->l_addr || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0
	    || eh->e_type != ET_DYN || eh->e_phentsize != sizeof(ElfW(Phdr))
	    || eh->e_phnum == 0 || eh->e_phoff > 65536)
		return NULL;
	*phnum = eh->e_phnum;
	return (const void *)(map->l_addr + eh->e_phoff);
}

void xom_add_link_map(struct link_map *map, int is_main)
{
	int n = 0;
	const ElfW(Phdr) *ph = xom_link_map_phdrs(map, is_main, &n);

	xom_add_object(map->l_name, map->l_addr, ph, n);
}

void *xom_lookup_dynsym(uintptr_t b, const ElfW(Phdr) *ph, int phnum,
                        const char *name)
{
	const ElfW(Dyn) *dyn = NULL;

	for (int i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(b + ph[i].p_vaddr);
	if (!dyn)
		return NULL;
	uintptr_t symtab = 0, strtab = 0, hash = 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		/* The dynamic linker adds the bias to these in place, as soon
		 * as it maps the object. */
		uintptr_t p = dyn->d_un.d_ptr;
		if (p < b)
			p += b;
		if (dyn->d_tag == DT_SYMTAB) symtab = p;
		else if (dyn->d_tag == DT_STRTAB) strtab = p;
		else if (dyn->d_tag == DT_HASH) hash = p;
	}
	if (!symtab || !strtab || !hash)
		return NULL;
	uint32_t nsyms = ((const uint32_t *)hash)[1];
	const ElfW(Sym) *sym = (const void *)symtab;
	for (uint32_t i = 1; i < nsyms; i++)
		if (sym[i].st_shndx != SHN_UNDEF
		    && !strcmp((const char *)strtab + sym[i].st_name, name))
			return (void *)(b + sym[i].st_value);
	return NULL;
}

/* ---- the fault handler --------------------------------------------- */

/* The signal return trampoline, byte for byte what libgcc's unwinder and
 * debuggers recognise as a signal frame. */
__attribute__((naked, used)) static void restore_rt(void)
{
	__asm__ volatile("movq $15, %rax\n\tsyscall\n\thlt");
}

struct k_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};
#define K_SA_RESTORER 0x04000000ul

static struct sigaction prog_act;       /* the program's SIGSEGV action */

static long k_sigaction(int sig, const struct k_sigaction *k,
                        struct k_sigaction *old)
{
	return syscall(SYS_rt_sigaction, sig, k, old, 8);
}

/* Sets SIGSEGV back to its default and sends it again: it is blocked
 * while the handler runs, so it arrives when the handler returns, and the
 * process dies by SIGSEGV as it would have without xom. */
static void die_by_segv(void)
{
	struct k_sigaction k = { 0 };

	k_sigaction(SIGSEGV, &k, NULL);
	syscall(SYS_tgkill, (long)getpid(), syscall(SYS_gettid), SIGSEGV);
}

static void put_place(struct xom_msg *m, uintptr_t addr)
{
	const struct object *o = find_object(addr);

	msg_hex(m, addr);
	if (!o) {
		msg_str(m, " (unknown object)");
		return;
	}
	uint64_t off = 0, v = addr - o->bias;
	msg_str(m, " (");
	msg_str(m, o->path);
	msg_str(m, "+");
	msg_hex(m, v);
	msg_str(m, ", in ");
	const char *sym = xom_plan_symbol(o->plan, v, &off);
	msg_str(m, sym ? sym : "?");
	if (sym && off) {
		msg_str(m, "+");
		msg_hex(m, off);
	}
	msg_str(m, ")");
}

static void pass_on(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = prog_act;

	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL) {
		die_by_segv();
		return;
	}
	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN) {
		/* The kernel does not let a fault be ignored either. */
		if (si->si_code > 0)
			die_by_segv();
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		memset(&prog_act, 0, sizeof(prog_act));
		prog_act.sa_handler = SIG_DFL;
	}
	sigset_t old;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &a.sa_mask, &old, 8);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	ucontext_t *uc = ucv;

	if (si->si_code != SEGV_PKUERR || key < 0 || (int)si->si_pkey != key) {
		pass_on(sig, si, ucv);
		errno = saved;
		return;
	}
	uintptr_t addr = (uintptr_t)si->si_addr;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	int allow = xom_opt.mode == XOM_AUDIT;
	uintptr_t page = addr & ~(PAGE - 1);
	if (allow && syscall(SYS_pkey_mprotect, page, PAGE,
	                     PROT_READ | PROT_EXEC, 0) != 0)
		allow = 0;
	struct xom_msg m;
	msg_start(&m);
	msg_str(&m, allow ? "allowed read of " : "blocked read of ");
	put_place(&m, addr);
	msg_str(&m, " by instruction at ");
	put_place(&m, ip);
	msg_str(&m, ", pid ");
	msg_dec(&m, (uint64_t)getpid());
	msg_send(&m);
	if (allow) {
		const struct object *o = find_object(addr);
		if (o)
			append_profile(o, page - o->bias);
	} else {
		die_by_segv();
	}
	errno = saved;
}

static void install_handler(void)
{
	struct k_sigaction k = {
		.handler = (void *)on_segv,
		.flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | K_SA_RESTORER,
		.restorer = (void *)restore_rt,
	}, old;

	if (k_sigaction(SIGSEGV, &k, &old) != 0) {
		say("cannot install the SIGSEGV handler; reads of code will not",
		    " be reported", NULL);
		return;
	}
	memset(&prog_act, 0, sizeof(prog_act));
	prog_act.sa_handler = (void (*)(int))old.handler;
	prog_act.sa_flags = (int)(old.flags & ~K_SA_RESTORER);
	memcpy(&prog_act.sa_mask, &old.mask, sizeof(old.mask));
}

int xom_sigaction(const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev = prog_act;

	if (!active)
		return -1;
	if (act)
		prog_act = *act;
	if (old)
		*old = prev;
	return 0;
}

/* ---- start-up and the lock ----------------------------------------- */

int xom_start(const char *who)
{
	door = who;
	(void)door;
	if (parse_options() != 0) {
		if (xom_opt.require)
			refuse("XOM_OPTIONS is invalid");
		say("XOM_OPTIONS is invalid; running unprotected", NULL, NULL);
		return 0;
	}
	if (xom_opt.mode == XOM_OFF)
		return 0;
	if (xom_opt.backend == XOM_BACKEND_PKEY && alloc_key() != 0)
		return 0;
	load_profile();
	install_handler();
	active = 1;
	return 1;
}

static int lock_owner;
static int lock_depth;

/* A recursive lock: constructors run by dlopen may call dlopen again. */
void xom_lock(void)
{
	int self = (int)syscall(SYS_gettid);

	if (__atomic_load_n(&lock_owner, __ATOMIC_RELAXED) == self) {
		lock_depth++;
		return;
	}
	int free_ = 0;
	while (!__atomic_compare_exchange_n(&lock_owner, &free_, self, 0,
	                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		free_ = 0;
		syscall(SYS_sched_yield);
	}
	lock_depth = 1;
}

void xom_unlock(void)
{
	if (--lock_depth == 0)
		__atomic_store_n(&lock_owner, 0, __ATOMIC_RELEASE);
}

/* A child of fork has one thread; a lock held by another thread of the
 * parent would never be released there. */
void xom_lock_reset(void)
{
	lock_owner = 0;
	lock_depth = 0;
}

static int sync_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	xom_add_object(info->dlpi_name, info->dlpi_addr, info->dlpi_phdr,
	               info->dlpi_phnum);
	return 0;
}

static int mark_present(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t lo, hi;
	unsigned char *seen = arg;

	(void)size;
	exec_span(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &lo, &hi);
	for (int i = 0; i < __atomic_load_n(&nobjs, __ATOMIC_ACQUIRE); i++)
		if (objs[i].live && objs[i].bias == info->dlpi_addr
		    && objs[i].lo == lo)
			seen[i] = 1;
	return 0;
}

void xom_sync_objects(void)
{
	static unsigned char seen[MAX_OBJS];

	if (!active)
		return;
	/* Forget what was unloaded, so that a new mapping at the same
	 * address is protected again. */
	memset(seen, 0, (size_t)nobjs);
	dl_iterate_phdr(mark_present, seen);
	for (int i = 0; i < __atomic_load_n(&nobjs, __ATOMIC_ACQUIRE); i++)
		if (objs[i].live && !seen[i])
			__atomic_store_n(&objs[i].live, 0, __ATOMIC_RELEASE);
	dl_iterate_phdr(sync_one, NULL);
}
