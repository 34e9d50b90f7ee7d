/*
 * profile_file.c - profiles as files, for xom learn and xom profile: the
 * text format of loader/profile.c read into a list and written back
 * (sorted, each page once, replaced by rename), the user's and the
 * system's profile folders, and adding pages to a file or to a folder of
 * one file per program.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../loader/options.h"
#include "../formats/xom_plan.h"
#include "cache/store.h"
#include "cmd.h"
#include "profile.h"

/* ---- the model ----------------------------------------------------------- */

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

int profile_add(struct profile *pr, const char *prog_key, const char *prog_path,
                const char *key, uint64_t page, const char *path, const char *why)
{
	if (pr->n == pr->cap) {
		size_t cap = pr->cap ? 2 * pr->cap : 64;
		struct prof_page *p = realloc(pr->p, cap * sizeof *p);
		if (!p)
			return -1;
		pr->p = p;
		pr->cap = cap;
	}
	struct prof_page *q = &pr->p[pr->n];
	q->prog_key = strdup(prog_key ? prog_key : "");
	q->prog_path = strdup(prog_path ? prog_path : "");
	q->key = strdup(key);
	q->path = strdup(path ? path : "");
	q->why = strdup(why ? why : "");
	q->page = page & ~(uint64_t)(XOM_PLAN_PAGE - 1);
	static size_t added;
	q->seq = added++;
	if (!q->prog_key || !q->prog_path || !q->key || !q->path || !q->why)
		return -1;
	pr->n++;
	return 0;
}

static void page_free(struct prof_page *q)
{
	free(q->prog_key);
	free(q->prog_path);
	free(q->key);
	free(q->path);
	free(q->why);
}

void profile_free(struct profile *pr)
{
	for (size_t i = 0; i < pr->n; i++)
		page_free(&pr->p[i]);
	free(pr->p);
	memset(pr, 0, sizeof *pr);
}

/* ---- reading -------------------------------------------------------------- */

/* One line, by the runtime's rule (xom_profile_line); 0, 1 for a blank or
 * comment line, -1 for one that is neither an item nor blank. */
static int read_line(struct profile *pr, char *line, char **prog_key,
                     char **prog_path)
{
	struct xom_profile_line it;
	int rc = xom_profile_line(line, line + strlen(line), &it);

	if (rc != 0)
		return rc;
	char *key = dup_n(it.key, it.keylen), *path = dup_n(it.path, it.pathlen);
	rc = key && path ? 0 : -1;
	if (rc == 0 && it.program) {
		free(*prog_key);
		free(*prog_path);
		*prog_key = key;
		*prog_path = path;
		return 0;
	}
	if (rc == 0)
		rc = profile_add(pr, *prog_key, *prog_path, key, it.page, path, it.why);
	free(key);
	free(path);
	return rc;
}

int profile_read(const char *file, struct profile *pr)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	char *line = NULL, *prog_key = NULL, *prog_path = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int rc = 0;

	if (!f) {
		say("%s: %s", file, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (read_line(pr, line, &prog_key, &prog_path) < 0) {
			say("%s:%u: not a profile line (KEY 0xPAGE [PATH], or program KEY [PATH]): %.80s",
			    file, lineno, line);
			rc = -1;
			break;
		}
	}
	if (rc == 0 && ferror(f)) {
		say("%s: %s", file, strerror(errno));
		rc = -1;
	}
	free(line);
	free(prog_key);
	free(prog_path);
	if (f != stdin)
		fclose(f);
	return rc;
}

/* ---- tidying and writing --------------------------------------------------- */

static int cmp_page(const void *a, const void *b)
{
	const struct prof_page *x = a, *y = b;
	int c;

	if ((c = strcmp(x->prog_key, y->prog_key)) || (c = strcmp(x->key, y->key)))
		return c;
	if (x->page != y->page)
		return x->page < y->page ? -1 : 1;
	/* Stable for repeats: the first reason wins. */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int same_item(const struct prof_page *x, const struct prof_page *y)
{
	return !strcmp(x->prog_key, y->prog_key) && !strcmp(x->key, y->key)
	       && x->page == y->page;
}

size_t profile_tidy(struct profile *pr)
{
	size_t u = 0, dropped = 0;

	/* An empty profile has no array: qsort must not see its NULL. */
	if (pr->n)
		qsort(pr->p, pr->n, sizeof pr->p[0], cmp_page);
	for (size_t i = 0; i < pr->n; i++) {
		if (u && same_item(&pr->p[u - 1], &pr->p[i])) {
			/* A later path or reason fills a missing one. */
			struct prof_page *k = &pr->p[u - 1];
			if (!k->path[0] && pr->p[i].path[0]) {
				free(k->path);
				k->path = pr->p[i].path;
				pr->p[i].path = NULL;
			}
			if (!k->why[0] && pr->p[i].why[0]) {
				free(k->why);
				k->why = pr->p[i].why;
				pr->p[i].why = NULL;
			}
			page_free(&pr->p[i]);
			dropped++;
			continue;
		}
		pr->p[u++] = pr->p[i];
	}
	pr->n = u;
	return dropped;
}

int profile_has(const struct profile *pr, const struct prof_page *q)
{
	for (size_t i = 0; i < pr->n; i++)
		if (same_item(&pr->p[i], q))
			return 1;
	return 0;
}

void profile_write(FILE *f, const struct profile *pr, const char *head)
{
	const char *prog = NULL;

	if (head)
		fputs(head, f);
	for (size_t i = 0; i < pr->n; i++) {
		const struct prof_page *q = &pr->p[i];
		if (q->prog_key[0] && (!prog || strcmp(prog, q->prog_key))) {
			fprintf(f, "program %s%s%s\n", q->prog_key, q->prog_path[0] ? " " : "",
			        q->prog_path);
			prog = q->prog_key;
		}
		fprintf(f, "%s 0x%llx%s%s", q->key, (unsigned long long)q->page,
		        q->path[0] ? " " : "", q->path);
		if (q->why[0])
			fprintf(f, " # %s", q->why);
		fputc('\n', f);
	}
}

int profile_save(const char *path, const struct profile *pr, const char *head)
{
	char tmp[PATH_MAX];

	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid())
	    >= sizeof tmp) {
		say("%s: the name is too long", path);
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	/* Readable by all whatever the umask: the system store's must be,
	 * and a profile is no secret of its owner's (the files are public). */
	FILE *f = fd >= 0 && fchmod(fd, 0644) == 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		say("%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	profile_write(f, pr, head);
	if (fflush(f) != 0 || ferror(f) || fsync(fd) != 0) {
		say("%s: %s", tmp, strerror(errno));
		fclose(f);
		unlink(tmp);
		return -1;
	}
	fclose(f);
	if (rename(tmp, path) != 0) {
		say("%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* ---- where profiles are ------------------------------------------------- */

void profile_options(struct xom_opts *o, char *buf, size_t cap)
{
	char err[256];
	int require;

	if (xom_options_parse(getenv("XOM_OPTIONS"), o, buf, cap, &require, err,
	                      sizeof err) != 0)
		xom_options_parse(NULL, o, buf, cap, &require, err, sizeof err);
}

int profile_user_dir(char *out, size_t len)
{
	char buf[4096];
	struct xom_opts o;

	profile_options(&o, buf, sizeof buf);
	return xom_profile_dir(&o, out, len) == XOM_CACHE_DIR ? 0 : -1;
}

int profile_system_dir(char *out, size_t len)
{
	char buf[4096];
	struct xom_opts o;

	profile_options(&o, buf, sizeof buf);
	if (!o.store || !strcmp(o.store, "off"))
		return -1;
	return (size_t)snprintf(out, len, "%s/" XOM_PROFILES_SUBDIR, o.store) < len
	       ? 0 : -1;
}

int profile_file_name(const char *prog_key, char *out, size_t len)
{
	struct xom_plan_key k;

	if (prog_key[0] != '/') {
		/* A build-id: its hex is the name, as xom_key_name writes it. */
		size_t n = strspn(prog_key, "0123456789abcdef");
		if (!n || prog_key[n] || n >= len || n > 2 * sizeof k.bytes)
			return -1;
		memcpy(out, prog_key, n + 1);
		return 0;
	}
	if (file_key(prog_key, &k) != 0 || len < XOM_KEY_NAME_MAX)
		return -1;
	xom_key_name(&k, out, len);
	return 0;
}

/* ---- adding to profiles ---------------------------------------------- */

/* Adds the items of got for program key prog ("" for all) to the file at
 * path; what was new goes into added.  0, or -1 after one line. */
/* The comment lines at the top of the file at path, with those of head
 * that are not among them yet added: a profile learned in several runs
 * keeps every command that went into it.  malloc'd, or NULL. */
static char *merged_head(const char *path, const char *head)
{
	FILE *f = fopen(path, "r"), *m;
	char *out = NULL, *line = NULL;
	size_t len = 0, cap = 0;

	if (!f)
		return strdup(head ? head : "");
	if (!(m = open_memstream(&out, &len))) {
		fclose(f);
		return NULL;
	}
	while (getline(&line, &cap, f) >= 0 && line[0] == '#')
		fputs(line, m);
	fclose(f);
	fflush(m);
	for (const char *h = head ? head : ""; *h;) {
		size_t n = strcspn(h, "\n") + (h[strcspn(h, "\n")] == '\n');
		char *one = dup_n(h, n);
		if (one && (!out || !strstr(out, one)))
			fputs(one, m);
		fflush(m);
		free(one);
		h += n;
	}
	free(line);
	fclose(m);
	return out;
}

int profile_add_to_file(const char *path, const struct profile *got, const char *prog,
                        const char *head, struct profile *added)
{
	struct profile pr = { 0 };
	int rc = 0;

	if (access(path, F_OK) == 0 && profile_read(path, &pr) != 0) {
		profile_free(&pr);
		return -1;
	}
	for (size_t i = 0; i < got->n && rc == 0; i++) {
		const struct prof_page *q = &got->p[i];
		if (prog && strcmp(q->prog_key, prog))
			continue;
		if (!profile_has(&pr, q))
			rc = profile_add(added, q->prog_key, q->prog_path, q->key, q->page,
			                 q->path, q->why);
		if (rc == 0)
			rc = profile_add(&pr, q->prog_key, q->prog_path, q->key, q->page,
			                 q->path, q->why);
	}
	profile_tidy(&pr);
	char *h = rc == 0 ? merged_head(path, head) : NULL;
	if (h)
		rc = profile_save(path, &pr, h);
	else
		say("out of memory"), rc = -1;
	free(h);
	profile_free(&pr);
	return rc;
}

static int mkdir_p(const char *dir, mode_t mode)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof buf, "%s", dir);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, mode) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	if (mkdir(buf, mode) != 0)
		return errno != EEXIST ? -1 : 0;
	/* Made now: its mode as asked, whatever the umask. */
	return chmod(buf, mode);
}

/* The default: one file per program in the user's profile folder. */
int profile_add_to_folder(const struct profile *got, const char *self_key,
                          const char *self_path, const char *head,
                          struct profile *added, const char *dir, int shared)
{
	char name[XOM_KEY_NAME_MAX], path[PATH_MAX + XOM_KEY_NAME_MAX];

	if (mkdir_p(dir, shared ? 0755 : 0700) != 0) {
		say("%s: %s", dir, strerror(errno));
		return -1;
	}
	/* Each program's items, and an empty file for the program learned
	 * when it read nothing: a profile saying so. */
	for (size_t i = 0; i <= got->n; i++) {
		const char *prog = i < got->n ? got->p[i].prog_key : self_key;
		if (i < got->n && i && !strcmp(prog, got->p[i - 1].prog_key))
			continue;
		if (i == got->n) {
			int seen = 0;
			for (size_t j = 0; j < got->n; j++)
				seen |= !strcmp(got->p[j].prog_key, self_key);
			if (seen || !self_key[0])
				break;
		}
		if (!prog[0])
			continue;       /* not of one program: not for a folder */
		if (profile_file_name(prog, name, sizeof name) != 0) {
			say("%s: cannot name its profile file; its pages are not kept",
			    i < got->n && got->p[i].prog_path[0] ? got->p[i].prog_path : self_path);
			continue;
		}
		snprintf(path, sizeof path, "%s/%s", dir, name);
		if (i == got->n) {
			struct profile none = { 0 };
			if (access(path, F_OK) != 0) {
				char h[PATH_MAX + 4200];
				snprintf(h, sizeof h, "%sprogram %s %s\n", head, self_key, self_path);
				if (profile_save(path, &none, h) != 0)
					return -1;
			}
			continue;
		}
		if (profile_add_to_file(path, got, prog, head, added) != 0)
			return -1;
	}
	return 0;
}

