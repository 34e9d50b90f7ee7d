/*
 * build.c - turns the scanner's code map of a file into a plan and a symbol
 * file (xom_plan.h), and scans files for them, several at once.  This is
 * the one place where the scanner's vocabulary (scan/xom_scan.h) meets the
 * plan's; it runs only in the tools, never inside a host process.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../scan/xom_scan_exit.h"
#include "build.h"

_Static_assert(XOM_PLAN_SCAN_VERSION == XOM_SCAN_VERSION,
               "the runtime must accept exactly the plans this scanner makes");
_Static_assert(XOM_PLAN_PAGE == XOM_PAGE_SIZE, "one page size");

/* Counts the runs of consecutive execute-only pages; fills out when set. */
static size_t collect_runs(const struct xom_map *m, struct xom_plan_run *out)
{
	size_t n = 0;

	for (size_t i = 0; i < m->npages; i++) {
		if (m->page_kind[i] != XOM_PG_XOM)
			continue;
		uint64_t a = m->page_addr[i];
		if (n && i && m->page_kind[i - 1] == XOM_PG_XOM
		    && m->page_addr[i - 1] + XOM_PAGE_SIZE == a) {
			if (out)
				out[n - 1].end = a + XOM_PAGE_SIZE;
			continue;
		}
		if (out)
			out[n] = (struct xom_plan_run){ a, a + XOM_PAGE_SIZE };
		n++;
	}
	return n;
}

static uint8_t plan_whole(int reason)
{
	switch (reason) {
	case XOM_R_NONE: return XOM_WHOLE_NONE;
	case XOM_R_TEXTREL: return XOM_WHOLE_TEXTREL;
	case XOM_R_WRITABLE: return XOM_WHOLE_WRITABLE;
	default: return XOM_WHOLE_OTHER;
	}
}

static int fail(struct xom_built *b, int code, const char *why)
{
	b->code = code;
	snprintf(b->why, sizeof(b->why), "%s", why);
	return -1;
}

/* Sized symbols are what can contain an address: functions, and the
 * objects that assembly keeps in .text. */
static int has_extent(const struct xom_sym *s)
{
	return s->size != 0;
}

/* The symbol file: the map's sized symbols (functions and objects in the
 * executable segments), which is what a fault report names. */
static struct xom_syms_head *build_syms(const struct xom_map *m,
                                        uint32_t *count)
{
	size_t n = 0, names = 0;

	for (size_t i = 0; i < m->nsyms; i++)
		if (has_extent(&m->syms[i])) {
			n++;
			names += strlen(m->names + m->syms[i].name) + 1;
		}
	*count = (uint32_t)n;
	if (!n)
		return NULL;
	size_t total = sizeof(struct xom_syms_head) + n * sizeof(struct xom_plan_sym)
	               + names;
	if (total > XOM_SYMS_MAX)
		return NULL;
	struct xom_syms_head *h = calloc(1, total);
	if (!h)
		return NULL;
	memcpy(h->magic, XOM_SYMS_MAGIC, 8);
	h->format = XOM_SYMS_FORMAT;
	h->nsyms = (uint32_t)n;
	h->names_len = names;
	h->total = total;
	h->build_id_len = m->build_id_len;
	memcpy(h->build_id, m->build_id, sizeof(h->build_id));
	struct xom_plan_sym *y = (void *)(h + 1);
	char *text = (char *)(y + n);
	size_t k = 0, at = 0;
	for (size_t i = 0; i < m->nsyms; i++) {
		const struct xom_sym *s = &m->syms[i];
		if (!has_extent(s))
			continue;
		size_t len = strlen(m->names + s->name) + 1;
		y[k++] = (struct xom_plan_sym){ s->addr, s->size, (uint32_t)at, 0 };
		memcpy(text + at, m->names + s->name, len);
		at += len;
	}
	xom_syms_seal(h);
	return h;
}

int xom_plan_build(const struct xom_map *m, const char *path,
                   const struct xom_file_ident *file, uint64_t code_sum,
                   uint64_t shape, uint64_t file_sum, struct xom_built *b)
{
	size_t nruns = m->whole_reason ? 0 : collect_runs(m, NULL);
	size_t path_len = strlen(path) + 1;
	size_t total = xom_plan_size(m->nsegs, nruns, path_len);
	const char *why;

	if (total > XOM_PLAN_MAX || path_len > UINT16_MAX || m->nsegs > UINT16_MAX)
		return fail(b, XOM_EXIT_FAILED, "plan too large");
	struct xom_plan_head *h = calloc(1, total);
	if (!h)
		return fail(b, XOM_EXIT_ENV, "out of memory");
	memcpy(h->magic, XOM_PLAN_MAGIC, 8);
	h->format = XOM_PLAN_FORMAT;
	h->scan_version = XOM_SCAN_VERSION;
	h->total = (uint32_t)total;
	h->nsegs = (uint16_t)m->nsegs;
	h->e_type = m->e_type;
	h->nruns = (uint32_t)nruns;
	h->exec_pages = (uint32_t)m->exec_pages;
	h->xom_pages = (uint32_t)(m->whole_reason ? 0 : m->xom_pages);
	h->whole_reason = plan_whole(m->whole_reason);
	h->build_id_len = m->build_id_len;
	h->path_len = (uint16_t)path_len;
	h->readable_bytes = m->readable_bytes;
	h->ret_gadgets = m->ret_gadgets;
	h->code_sum = code_sum;
	h->shape = shape;
	h->file_sum = file_sum;
	h->file = *file;
	memcpy(h->build_id, m->build_id, sizeof(h->build_id));
	struct xom_plan_seg *s = (void *)(h + 1);
	for (size_t i = 0; i < m->nsegs; i++)
		s[i] = (struct xom_plan_seg){ m->segs[i].vaddr, m->segs[i].memsz,
		                              m->segs[i].offset, m->segs[i].filesz,
		                              m->segs[i].flags, 0 };
	struct xom_plan_run *r = (void *)(s + m->nsegs);
	collect_runs(m, nruns ? r : NULL);
	memcpy((char *)(r + nruns), path, path_len);
	b->syms = build_syms(m, &h->nsyms);
	xom_plan_seal(h);
	if (xom_plan_check(h, total, &why) != 0) {
		free(h);
		free(b->syms);
		b->syms = NULL;
		return fail(b, XOM_EXIT_FAILED, why);
	}
	b->plan = h;
	return 0;
}

/* xom_hash over the file bytes of the executable segments, in order. */
static uint64_t code_sum_of(const unsigned char *img, size_t len,
                            const struct xom_map *m)
{
	uint64_t sum = XOM_HASH_INIT;

	for (size_t i = 0; i < m->nsegs; i++) {
		uint64_t off = m->segs[i].offset, n = m->segs[i].filesz;
		if (off <= len && n <= len - off)
			sum = xom_hash(sum, img + off, n);
	}
	return sum;
}

static long libc_pread(int fd, void *buf, size_t n, long off)
{
	return (long)pread(fd, buf, n, (off_t)off);
}

void xom_plan_file(const char *path, struct xom_built *b)
{
	char err[256];
	struct stat st;
	struct xom_map *m;
	uint64_t shape = 0;

	b->path = path;
	/* O_NONBLOCK: a FIFO must not hang the open; fstat turns it away. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, sizeof(err), "cannot read: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		fail(b, XOM_EXIT_ENV, err);
		return;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		fail(b, XOM_EXIT_FAILED, "unsupported: not a regular, non-empty file");
		return;
	}
	/* The shape from the same open file; a file whose headers cannot be
	 * read gets none, and the scanner says what is wrong with it. */
	int shaped = xom_file_shape(fd, libc_pread, &shape) == 0;
	void *img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED) {
		snprintf(err, sizeof(err), "cannot read: %s", strerror(errno));
		fail(b, XOM_EXIT_ENV, err);
		return;
	}
	int rc = xom_scan_mem(img, (size_t)st.st_size, &m, err, sizeof(err));
	if (rc) {
		fail(b, xom_exit_of_scan(rc), err);
	} else if (!shaped) {
		xom_map_free(m);
		fail(b, XOM_EXIT_FAILED, "malformed: its program headers cannot be read");
	} else {
		struct xom_file_ident id;
		xom_file_ident_of(&st, &id);
		xom_plan_build(m, path, &id, code_sum_of(img, (size_t)st.st_size, m),
		               shape, xom_hash(XOM_HASH_INIT, img, (size_t)st.st_size), b);
		xom_map_free(m);
	}
	munmap(img, (size_t)st.st_size);
}

/* ---- many files at once ---------------------------------------------------- */

struct pool {
	struct xom_built *b;
	size_t n, next, done;
	pthread_mutex_t mu;
	void (*progress)(size_t, size_t, void *);
	void *arg;
};

static void *worker(void *p)
{
	struct pool *pool = p;

	for (;;) {
		pthread_mutex_lock(&pool->mu);
		size_t i = pool->next++;
		pthread_mutex_unlock(&pool->mu);
		if (i >= pool->n)
			return NULL;
		xom_plan_file(pool->b[i].path, &pool->b[i]);
		pthread_mutex_lock(&pool->mu);
		pool->done++;
		if (pool->progress)
			pool->progress(pool->done, pool->n, pool->arg);
		pthread_mutex_unlock(&pool->mu);
	}
}

void xom_plan_files(struct xom_built *b, size_t n, int jobs,
                    void (*progress)(size_t done, size_t n, void *arg),
                    void *arg)
{
	struct pool pool = { b, n, 0, 0, PTHREAD_MUTEX_INITIALIZER, progress, arg };
	pthread_t t[64];
	int started = 0;

	if (jobs <= 0)
		jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs > 64)
		jobs = 64;
	if ((size_t)jobs > n)
		jobs = (int)n;
	/* The caller's thread works too; the others only when there is more
	 * than one file, so a single scan starts no thread. */
	for (int i = 1; i < jobs; i++)
		if (pthread_create(&t[started], NULL, worker, &pool) == 0)
			started++;
	worker(&pool);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
}

void xom_built_free(struct xom_built *b)
{
	free(b->plan);
	free(b->syms);
	b->plan = NULL;
	b->syms = NULL;
}
