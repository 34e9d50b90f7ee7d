/*
 * fuzz_profile.c - libFuzzer target for the profile format, which both
 * the runtime (loader/profile.c: the pages it keeps readable, read from a
 * mapped file in every batch) and the xom command (cmd/profile_file.c:
 * xom profile and xom learn, which read, merge and write profiles) parse.
 * The input is a profile.
 *
 * Besides the sanitizers, it checks what the two promise together: the
 * command writes back what it read, and reads that back to the same items
 * (its round trip); and where the command reads the whole file, the
 * runtime keeps readable, for each object and the file's first program,
 * exactly the pages the command lists for them, as profiles are meant to
 * work (the runtime keeps the first 512 of them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The runtime's reader, with its tables, in this file. */
#include "../../loader/profile.c"

#include "../../cmd/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#include "../check.h"

/* ---- what the runtime's reader calls ---------------------------------- */

struct xom_opts xom_opt;
int xom_secure;
unsigned xom_euid;

/* Formats the message, so that its arguments are read as they would be. */
void xom_say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
}

const char *xom_store_dir(int i, char *buf, size_t cap)
{
	(void)i, (void)buf, (void)cap;
	return NULL;
}

/* No folder beside a library: the fuzzer hands the reader its file. */
const char *xom_beside(const char *name, char *buf, size_t cap)
{
	(void)name, (void)buf, (void)cap;
	return NULL;
}

/* ---- what the command's reader calls ------------------------------------ */

void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
}

int file_key(const char *path, struct xom_plan_key *k)
{
	(void)path, (void)k;
	return -1;
}

/* ---- the command's round trip ------------------------------------------- */

/* The command reads profiles by name: a memory file holds the text. */
static int read_text(const void *p, size_t n, struct profile *pr)
{
	char name[64];
	int fd = memfd_create("profile", MFD_CLOEXEC);

	if (fd < 0)
		return -2;
	int rc = -2;
	if ((size_t)write(fd, p, n) == n) {
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
		rc = profile_read(name, pr);
	}
	close(fd);
	return rc;
}

static void round_trip(struct profile *pr)
{
	char *text = NULL;
	size_t len = 0;
	struct profile again = { 0 };

	profile_tidy(pr);
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	profile_write(f, pr, "# a comment\n");
	fclose(f);
	TRAP_UNLESS(read_text(text, len, &again) == 0);
	profile_tidy(&again);
	TRAP_UNLESS(again.n == pr->n);
	for (size_t i = 0; i < pr->n; i++) {
		const struct prof_page *a = &pr->p[i], *b = &again.p[i];
		TRAP_UNLESS(!strcmp(a->prog_key, b->prog_key) && !strcmp(a->key, b->key)
		      && a->page == b->page && !strcmp(a->path, b->path)
		      && !strcmp(a->why, b->why));
	}
	profile_free(&again);
	free(text);
}

/* ---- both readers, on the same file -------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The pages the command's list keeps readable for object key under main
 * program prog ("" for none), as the runtime reads a profile: the items
 * for every program and those for prog, the first MAX_PROFILE_PAGES,
 * sorted, each once. */
static size_t expected(const struct profile *pr, const char *key, const char *prog,
                       uint64_t *out)
{
	size_t n = 0, u = 0;

	for (size_t i = 0; i < pr->n && n < MAX_PROFILE_PAGES; i++) {
		const struct prof_page *q = &pr->p[i];
		if (!strcmp(q->key, key) && (!q->prog_key[0] || (prog[0] && !strcmp(q->prog_key, prog))))
			out[n++] = q->page;
	}
	qsort(out, n, sizeof(out[0]), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!u || out[u - 1] != out[i])
			out[u++] = out[i];
	return u;
}

static void runtime_reads(const uint8_t *data, size_t size, const struct profile *pr,
                          int compare)
{
	static uint64_t want[MAX_PROFILE_PAGES];
	const char *prog = "", *prog_path = "";
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return;
	memcpy(copy, data, size);
	/* The file's first program is this process's main program. */
	for (size_t i = 0; i < pr->n; i++)
		if (pr->p[i].prog_key[0]) {
			prog = pr->p[i].prog_key;
			prog_path = pr->p[i].prog_path;
			break;
		}
	compare = compare && strlen(prog) < sizeof(main_key) && strlen(prog_path) < sizeof(main_path);
	main_key[0] = main_file[0] = main_path[0] = 0;
	xom_profile_program(prog, prog, prog_path);
	src[0].map = copy;
	src[0].len = size;
	src[0].stale_said = 0;
	nsrc = 1;
	/* Each object the command found (the first few), and one it did not. */
	for (size_t i = 0; i <= pr->n && i < 16; i++) {
		const char *key = i < pr->n ? pr->p[i].key : "0123abcd";
		const char *path = i < pr->n ? pr->p[i].path : "/nowhere";
		const uint64_t *pages;
		size_t n = xom_profile_pages(key, path, &pages);
		TRAP_UNLESS(n <= MAX_PROFILE_PAGES);
		for (size_t j = 1; j < n; j++)
			TRAP_UNLESS(pages[j - 1] < pages[j]);
		if (compare) {
			size_t m = expected(pr, key, prog, want);
			TRAP_UNLESS(m == n && !memcmp(want, pages, n * sizeof(pages[0])));
		}
		xom_profile_forget();
	}
	memset(&src[0], 0, sizeof(src[0]));
	nsrc = 0;
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile pr = { 0 };
	int rc = read_text(data, size, &pr);

	/* The command reads lines as C strings, to the first NUL; the runtime
	 * reads the bytes.  They are compared where they read the same. */
	int compare = rc == 0 && !memchr(data, 0, size);
	runtime_reads(data, size, &pr, compare);
	if (rc == 0)
		round_trip(&pr);
	profile_free(&pr);
	return 0;
}
