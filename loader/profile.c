/*
 * profile.c - the audit profile: pages that stay readable, and the pages
 * that audit mode saw read.
 *
 * Lines are "<build-id in hex, or path> 0x<link-time page>".  Phases: the
 * profile is mapped for one batch of objects and unmapped at its end (it is
 * a list of readable code pages, which must not stay in memory), and the
 * fault handler appends to it (open, write, close: async-signal-safe).
 */
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"

static const char *profile_map;
static size_t profile_len;

void xom_profile_open(void)
{
	struct stat st;

	if (!xom_opt.profile || profile_map)
		return;
	long fd = x_open(xom_opt.profile, O_RDONLY | O_CLOEXEC, 0);
	if (SYS_FAILED(fd))
		return;         /* A first audit run creates it. */
	if (x_fstat((int)fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = x_mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
		                 (int)fd, 0);
		if (!X_MAP_FAILED(p)) {
			profile_map = p;
			profile_len = (size_t)st.st_size;
		}
	}
	x_close((int)fd);
}

void xom_profile_close(void)
{
	if (!profile_map)
		return;
	x_munmap(profile_map, profile_len);
	profile_map = NULL;
	profile_len = 0;
}

/* The hex page number after "<key> 0x" on one line, or -1 if none. */
static int line_page(const char *p, const char *eol, const char *key,
                     size_t keylen, uint64_t *page)
{
	if ((size_t)(eol - p) <= keylen + 3 || memcmp(p, key, keylen)
	    || p[keylen] != ' ' || p[keylen + 1] != '0' || p[keylen + 2] != 'x')
		return -1;
	uint64_t v = 0;
	for (const char *q = p + keylen + 3; q < eol; q++) {
		int d = *q >= '0' && *q <= '9' ? *q - '0'
		        : *q >= 'a' && *q <= 'f' ? *q - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*page = v & ~(uint64_t)(XOM_PAGE - 1);
	return 0;
}

#define MAX_PROFILE_PAGES 512

/* The last lookup's pages: a list of readable code pages, wiped by
 * xom_profile_forget as soon as they are applied. */
static uint64_t keep[MAX_PROFILE_PAGES];
static size_t nkeep;

size_t xom_profile_pages(const char *key, const uint64_t **pages)
{
	uint64_t *out = keep;
	size_t n = 0, cap = MAX_PROFILE_PAGES, keylen = strlen(key);

	*pages = keep;
	if (!profile_map)
		return 0;
	const char *p = profile_map, *end = profile_map + profile_len;

	while (p && p < end && n < cap) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		if (line_page(p, eol, key, keylen, &out[n]) == 0)
			n++;
		p = eol + 1;
	}
	/* Insertion sort: profiles are short. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j && out[j - 1] > out[j]; j--) {
			uint64_t t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return nkeep = n;
}

void xom_profile_forget(void)
{
	if (!nkeep)
		return;
	memset(keep, 0, nkeep * sizeof(keep[0]));
	nkeep = 0;
}

/* The profile's name for an object: its build-id in hex, else its path. */
static const char *profile_key(const struct xom_object *o)
{
	return o->flags & XOM_OBJ_BUILD_ID ? o->key : o->path;
}

void xom_profile_append(const struct xom_object *o, uint64_t page)
{
	char line[512];

	if (!xom_opt.profile)
		return;
	size_t n = xom_fmt(line, sizeof(line) - 1, "%s %#lx", profile_key(o),
	                   (unsigned long)page);
	line[n++] = '\n';
	long fd = x_open(xom_opt.profile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	                 0600);
	if (!SYS_FAILED(fd)) {
		x_write((int)fd, line, n);
		x_close((int)fd);
	}
}
