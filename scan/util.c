/*
 * util.c - what more than one stage of the scanner needs: growable arrays,
 * error messages, bounds checks, binary search, the function-extent index
 * and the instruction-start bitmap.
 *
 * Reads and writes only the struct scan fields that each function names;
 * calls nothing in the stage files, so every stage may call it.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

int scan_fail(struct scan *s, int code, const char *fmt, ...)
{
	va_list ap;

	if (s->err && s->errlen) {
		va_start(ap, fmt);
		vsnprintf(s->err, s->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

bool image_has(const struct scan *s, uint64_t off, uint64_t n)
{
	uint64_t end;

	return !__builtin_add_overflow(off, n, &end) && end <= s->len;
}

/* ---- growable arrays ---------------------------------------------------- */

void *vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		size_t bytes;
		void *p;

		if (__builtin_mul_overflow(cap, v->size, &bytes))
			return NULL;
		p = realloc(v->p, bytes);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = cap;
	}
	return (char *)v->p + v->n++ * v->size;
}

void vec_free(struct vec *v)
{
	free(v->p);
	v->p = NULL;
	v->n = v->cap = 0;
}

void vec_sort_u64(struct vec *v)
{
	uint64_t *a = v->p;
	size_t i, n = 0;

	if (!v->n)
		return;
	sort_by_key(a, v->n, sizeof *a);
	for (i = 0; i < v->n; i++)
		if (!n || a[n - 1] != a[i])
			a[n++] = a[i];
	v->n = n;
}

/* ---- addresses in the executable segments ------------------------------- */

const struct xom_segment *exec_seg_at(const struct scan *s, uint64_t vaddr)
{
	const struct xom_segment *g = s->segs.p;
	size_t i;

	/* Files have one to three executable segments: a scan beats a search. */
	for (i = 0; i < s->segs.n; i++)
		if (vaddr >= g[i].vaddr && vaddr - g[i].vaddr < g[i].memsz)
			return &g[i];
	return NULL;
}

bool scan_in_data_section(const struct scan *s, uint64_t vaddr)
{
	const struct span *v = s->spans.p;
	size_t k = count_le(v, s->spans.n, sizeof *v, vaddr);

	return k && vaddr < v[k - 1].end && !v[k - 1].exec;
}

int scan_push_addr(struct scan *s, struct vec *v, uint64_t addr)
{
	uint64_t *e;

	if (!exec_seg_at(s, addr))
		return 0;
	if (!(e = vec_push(v)))
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	*e = addr;
	return 0;
}

int scan_push_ref(struct scan *s, uint64_t target, uint32_t size,
                  enum xom_reason reason, bool has_ref, uint64_t at)
{
	struct ref *r;

	if (!exec_seg_at(s, target))
		return 0;
	if (!(r = vec_push(&s->refs)))
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	*r = (struct ref){ .target = target, .ref = at, .size = size,
	                   .reason = reason, .has_ref = has_ref };
	return 0;
}

/* ---- threads ------------------------------------------------------------- */

struct pool {
	size_t njobs, next;     /* next: taken with an atomic add */
	void (*fn)(void *ctx, size_t job, unsigned worker);
	void *ctx;
};

struct worker {
	struct pool *pool;
	unsigned id;
};

static void run_jobs(struct pool *p, unsigned id)
{
	size_t j;

	while ((j = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->njobs)
		p->fn(p->ctx, j, id);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	run_jobs(w->pool, w->id);
	return NULL;
}

void scan_parallel(unsigned nthreads, size_t njobs, unsigned *workers,
                   void (*fn)(void *ctx, size_t job, unsigned worker), void *ctx)
{
	struct pool p = { .njobs = njobs, .fn = fn, .ctx = ctx };
	pthread_t tid[64];
	struct worker w[64];
	unsigned n = 0;

	if (nthreads > 64)
		nthreads = 64;
	for (unsigned i = 1; i < nthreads && i < njobs; i++) {
		w[n] = (struct worker){ &p, i };
		if (pthread_create(&tid[n], NULL, worker_main, &w[n]) != 0)
			break;
		n++;
	}
	if (workers)
		*workers = n + 1;
	run_jobs(&p, 0);
	for (unsigned i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
}

/* ---- arrays sorted by a key ---------------------------------------------- */

/* The arrays that sort_by_key() and count_le() serve start each item with
 * its key. */
_Static_assert(offsetof(struct xom_segment, vaddr) == 0, "segment key");
_Static_assert(offsetof(struct span, start) == 0, "span key");
_Static_assert(offsetof(struct xom_range, start) == 0, "range key");
_Static_assert(offsetof(struct xom_sym, addr) == 0, "symbol key");

static int cmp_key(const void *a, const void *b)
{
	uint64_t x, y;

	memcpy(&x, a, sizeof x);
	memcpy(&y, b, sizeof y);
	return x < y ? -1 : x > y;
}

static uint64_t key_of(const char *item)
{
	uint64_t k;

	memcpy(&k, item, sizeof k);
	return k;
}

/*
 * A stable LSD radix sort on the key, a byte at a time from the lowest, as
 * many passes as the largest key has bytes.  The call targets of a large
 * library number in the hundreds of thousands, and qsort()'s callback per
 * comparison cost more than all of classify.c.  Small arrays, or no memory
 * for the second buffer, take qsort().
 */
void sort_by_key(void *base, size_t n, size_t size)
{
	char *src = base, *dst, *tmp;
	uint64_t max = 0;
	unsigned passes = 0;

	if (n < 64 || !(tmp = malloc(n * size))) {
		sort_items(base, n, size, cmp_key);
		return;
	}
	for (size_t i = 0; i < n; i++)
		max |= key_of(src + i * size);
	for (; max; max >>= 8)
		passes++;
	dst = tmp;
	for (unsigned p = 0; p < passes; p++) {
		size_t count[257] = { 0 };
		unsigned shift = 8 * p;
		char *t;

		for (size_t i = 0; i < n; i++)
			count[((key_of(src + i * size) >> shift) & 0xff) + 1]++;
		for (unsigned k = 1; k < 257; k++)
			count[k] += count[k - 1];
		for (size_t i = 0; i < n; i++)
			memcpy(dst + size * count[(key_of(src + i * size) >> shift) & 0xff]++,
			       src + i * size, size);
		t = src, src = dst, dst = t;
	}
	if (src != base)
		memcpy(base, src, n * size);
	free(tmp);
}

size_t count_le(const void *base, size_t n, size_t stride, uint64_t x)
{
	const char *p = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, p + mid * stride, sizeof key);
		if (key <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool sorted_has_u64(const uint64_t *a, size_t n, uint64_t x)
{
	size_t k = count_le(a, n, sizeof *a, x);

	return k && a[k - 1] == x;
}

/* ---- the function-extent index ------------------------------------------ */

/*
 * funcs is sorted by start and its ends are turned into running maxima, so
 * that one search answers scan_inside_function() even where extents nest
 * or overlap.
 */
void scan_prepare_funcs(struct scan *s)
{
	struct xom_range *f = s->funcs.p;

	if (!s->funcs.n)
		return;
	sort_by_key(f, s->funcs.n, sizeof *f);
	for (size_t i = 1; i < s->funcs.n; i++)
		if (f[i].end < f[i - 1].end)
			f[i].end = f[i - 1].end;
}

bool scan_inside_function(const struct scan *s, uint64_t x)
{
	const struct xom_range *f = s->funcs.p;
	size_t k = count_le(f, s->funcs.n, sizeof *f, x);

	return k && f[k - 1].end > x;
}

/* ---- the instruction-start bitmap --------------------------------------- */

/*
 * One bit per file byte of the executable segments, segment by segment in
 * vaddr order.  Bytes past a segment's file size hold no instructions and
 * have no bit.
 */
int scan_alloc_starts(struct scan *s)
{
	const struct xom_segment *g = s->segs.p;
	uint64_t total = 0;

	for (size_t i = 0; i < s->segs.n; i++)
		if (__builtin_add_overflow(total, g[i].filesz, &total) || total > s->len)
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: executable segments hold more bytes than the file");
	s->starts = calloc(total / 8 + 1, 1);
	if (!s->starts)
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	return 0;
}

/* The bit of vaddr, and the segment that holds it, or NULL. */
static const struct xom_segment *start_index(const struct scan *s, uint64_t vaddr,
                                             uint64_t *idx)
{
	const struct xom_segment *g = s->segs.p;
	uint64_t base = 0;

	for (size_t i = 0; i < s->segs.n; i++) {
		if (vaddr >= g[i].vaddr && vaddr - g[i].vaddr < g[i].filesz) {
			*idx = base + (vaddr - g[i].vaddr);
			return &g[i];
		}
		base += g[i].filesz;
	}
	return NULL;
}

void scan_mark_start_slow(struct scan *s, uint64_t vaddr)
{
	const struct xom_segment *g;
	uint64_t i;

	if (!(g = start_index(s, vaddr, &i)))
		return;
	s->mark_vaddr = g->vaddr;
	s->mark_size = g->filesz;
	s->mark_base = i - (vaddr - g->vaddr);
	s->starts[i >> 3] |= (uint8_t)(1u << (i & 7));
}

bool scan_is_start(const struct scan *s, uint64_t vaddr)
{
	uint64_t i;

	return start_index(s, vaddr, &i) && ((s->starts[i >> 3] >> (i & 7)) & 1);
}
