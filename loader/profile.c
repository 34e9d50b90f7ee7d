/*
 * profile.c - the audit profile: pages that stay readable, and the pages
 * that audit mode saw read.
 *
 * Lines are "<build-id in hex, or path> 0x<link-time page>".  Phases: the
 * profile is mapped for one batch of objects and unmapped at its end (it is
 * a list of readable code pages, which must not stay in memory), and the
 * fault handler appends to it (open, write, close: async-signal-safe).
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loader.h"

static const char *profile_map;
static size_t profile_len;

void xom_profile_open(void)
{
	struct stat st;

	if (!xom_opt.profile || profile_map)
		return;
	int fd = open(xom_opt.profile, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;         /* A first audit run creates it. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			profile_map = p;
			profile_len = (size_t)st.st_size;
		}
	}
	close(fd);
}

void xom_profile_close(void)
{
	if (profile_map)
		munmap((void *)profile_map, profile_len);
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

size_t xom_profile_pages(const char *key, uint64_t *out, size_t cap)
{
	size_t n = 0, keylen = strlen(key);
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
	return n;
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
	int fd = open(xom_opt.profile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	              0600);
	if (fd >= 0) {
		ssize_t r = write(fd, line, n);
		(void)r;
		close(fd);
	}
}
