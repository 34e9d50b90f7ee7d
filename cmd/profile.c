/*
 * profile.c - profiles in the xom command: reading, tidying and writing the
 * text format of loader/profile.c, the listing of xom profile show, and the
 * subcommand xom profile show|merge.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../loader/options.h"
#include "../loader/plan/xom_plan.h"
#include "cache.h"
#include "cmd.h"
#include "profile.h"

const char profile_usage[] =
	"usage: xom profile show [PROFILE|PROG] | merge OUT IN... |\n"
	"       install [--system | --dir DIR] PROFILE...\n"
	"\n"
	"A profile lists the code pages that stay readable because a program was\n"
	"seen to read them (xom learn writes them).  Each page is named by the\n"
	"build-id of its file and its link-time address, so a profile holds across\n"
	"runs and stays valid until the file changes.\n"
	"\n"
	"  show PROFILE   lists the profile file: per program and object, each\n"
	"                 page, why it was read (the symbol read and the\n"
	"                 instruction that read it), and how much of the\n"
	"                 object's code stays execute-only, from its plan\n"
	"  show PROG      the profiles the runtime finds for PROG (looked up in\n"
	"                 PATH when it has no slash): in your profile folder and\n"
	"                 in the system store's\n"
	"  show           every profile in those two folders\n"
	"  merge OUT IN...  writes the pages of every IN into OUT (OUT may be one\n"
	"                 of them), sorted, each page once\n"
	"  install PROFILE...  puts each program's pages of the PROFILEs into\n"
	"                 its file in your profile folder (--system: the system\n"
	"                 store's, as root; --dir DIR: the folder DIR), where the\n"
	"                 runtime finds them for that program by itself\n"
	"\n"
	"Your profile folder is $XDG_CONFIG_HOME/xom/profiles (else\n"
	"$HOME/.config/xom/profiles, or XOM_OPTIONS profiles=DIR); the system's\n"
	"is the profiles folder of the system store (/var/cache/xom/profiles),\n"
	"read only when root owns it and nobody else can write to it.  Each file\n"
	"there is one program's, named by its build-id.\n"
	"\n"
	"Exit status: 0 done; 1 a profile is malformed or missing; 2 a file\n"
	"could not be written; 64 usage.\n";

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

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static size_t word(const char **p, const char *end, const char **w)
{
	while (*p < end && blank(**p))
		(*p)++;
	*w = *p;
	while (*p < end && !blank(**p))
		(*p)++;
	return (size_t)(*p - *w);
}

static int hex_page(const char *w, size_t n, uint64_t *page)
{
	uint64_t v = 0;

	if (n < 3 || n > 18 || w[0] != '0' || w[1] != 'x')
		return -1;
	for (size_t i = 2; i < n; i++) {
		int d = w[i] >= '0' && w[i] <= '9' ? w[i] - '0'
		        : w[i] >= 'a' && w[i] <= 'f' ? w[i] - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*page = v;
	return 0;
}

/* One line, by the runtime's rule (loader/profile.c); 0, 1 for a blank or
 * comment line, -1 for one that is neither an item nor blank. */
static int read_line(struct profile *pr, char *line, char **prog_key,
                     char **prog_path)
{
	char *eol = line + strlen(line), *why = NULL;
	const char *p = line, *w, *k;
	size_t n, kn;
	uint64_t page;

	for (char *q = line; q < eol; q++)
		if (*q == '#' && (q == line || blank(q[-1]))) {
			why = q + 1 + (q[1] == ' ');
			eol = q;
			break;
		}
	if (!(n = word(&p, eol, &w)))
		return 1;
	int program = n == 7 && !memcmp(w, "program", 7);
	if (program) {
		if (!(kn = word(&p, eol, &k)))
			return -1;
	} else {
		k = w;
		kn = n;
		if (!(n = word(&p, eol, &w)) || hex_page(w, n, &page) != 0)
			return -1;
	}
	while (p < eol && blank(*p))
		p++;
	while (eol > p && blank(eol[-1]))
		eol--;
	char *key = dup_n(k, kn), *path = dup_n(p, (size_t)(eol - p));
	int rc = key && path ? 0 : -1;
	if (rc == 0 && program) {
		free(*prog_key);
		free(*prog_path);
		*prog_key = key;
		*prog_path = path;
		return 0;
	}
	if (rc == 0)
		rc = profile_add(pr, *prog_key, *prog_path, key, page, path, why);
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

static void options(struct xom_opts *o, char *buf, size_t cap)
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

	options(&o, buf, sizeof buf);
	return xom_profile_dir(&o, out, len) == XOM_CACHE_DIR ? 0 : -1;
}

int profile_system_dir(char *out, size_t len)
{
	char buf[4096];
	struct xom_opts o;

	options(&o, buf, sizeof buf);
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

/* ---- show ----------------------------------------------------------------- */

struct stores { struct store_index ix[XOM_NSTORES]; };

static void stores_open(struct stores *st)
{
	char buf[4096], dir[PATH_MAX], why[PATH_MAX + 64];
	struct xom_opts o;
	struct xom_dirs d;

	memset(st, 0, sizeof *st);
	options(&o, buf, sizeof buf);
	xom_store_dirs(&o, 0, geteuid(), &d);
	for (int i = 0; i < XOM_NSTORES; i++)
		if (xom_dir_path(&d, i, dir, sizeof dir)
		    && store_trusted(dir, i == XOM_STORE_SYSTEM, why, sizeof why) == 0)
			store_map(dir, &st->ix[i]);
}

static void stores_close(struct stores *st)
{
	for (int i = 0; i < XOM_NSTORES; i++)
		store_unmap(&st->ix[i]);
}

/* The key of a profile's object: a build-id in hex, or (for a path) the
 * identity of the file there now. */
static int item_key(const char *key, struct xom_plan_key *k)
{
	size_t n = strlen(key);

	if (key[0] == '/')
		return file_key(key, k);
	if (!n || n % 2 || n / 2 > sizeof k->bytes
	    || strspn(key, "0123456789abcdef") != n)
		return -1;
	memset(k, 0, sizeof *k);
	k->kind = XOM_KEY_BUILD_ID;
	k->len = (uint8_t)(n / 2);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		sscanf(key + 2 * i, "%2x", &v);
		k->bytes[i] = (uint8_t)v;
	}
	return 0;
}

static const struct xom_plan_head *find_plan(const struct stores *st,
                                             const char *key)
{
	struct xom_plan_key k;

	if (item_key(key, &k) != 0)
		return NULL;
	for (int i = 0; i < XOM_NSTORES; i++) {
		const struct xom_plan_head *h = store_find(&st->ix[i], &k);
		if (h)
			return h;
	}
	return NULL;
}

static int in_runs(const struct xom_plan_head *h, uint64_t page)
{
	const struct xom_plan_run *r = xom_plan_runs(h);

	for (uint32_t i = 0; i < h->nruns; i++)
		if (page >= r[i].start && page < r[i].end)
			return 1;
	return 0;
}

/* Items [i, j) are one object's, of one program. */
static void show_object(FILE *f, const struct stores *st,
                        const struct prof_page *q, size_t n)
{
	const struct xom_plan_head *h = find_plan(st, q->key);
	size_t opened = 0;

	for (size_t i = 0; h && i < n; i++)
		opened += in_runs(h, q[i].page);
	fprintf(f, "  %s (%s%s): %zu page%s kept readable", q->path[0] ? q->path : q->key,
	        q->key[0] == '/' ? "by path" : "build-id ",
	        q->key[0] == '/' ? "" : q->key, n, n == 1 ? "" : "s");
	if (h) {
		unsigned long xo = h->xom_pages - opened;
		fprintf(f, "; %lu of %u code pages stay execute-only (%.2f%%)", xo,
		        h->exec_pages, h->exec_pages ? 100.0 * (double)xo / h->exec_pages : 0.0);
		if (opened < n)
			fprintf(f, "; %zu of the pages are readable by its plan anyway",
			        n - opened);
	} else {
		fputs("; no plan in the stores, so the share kept execute-only is unknown (xom cache build FILE)",
		      f);
	}
	fputc('\n', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "    0x%llx%s%s\n", (unsigned long long)q[i].page,
		        q[i].why[0] ? "  " : "", q[i].why);
}

void profile_show(FILE *f, const struct profile *pr)
{
	struct stores st;

	stores_open(&st);
	for (size_t i = 0; i < pr->n;) {
		const struct prof_page *q = &pr->p[i];
		if (i == 0 || strcmp(q->prog_key, pr->p[i - 1].prog_key)) {
			if (q->prog_key[0])
				fprintf(f, "program %s (%s%s)\n",
				        q->prog_path[0] ? q->prog_path : q->prog_key,
				        q->prog_key[0] == '/' ? "by path" : "build-id ",
				        q->prog_key[0] == '/' ? "" : q->prog_key);
			else
				fputs("every program\n", f);
		}
		size_t j = i + 1;
		while (j < pr->n && !strcmp(pr->p[j].prog_key, q->prog_key)
		       && !strcmp(pr->p[j].key, q->key))
			j++;
		show_object(f, &st, q, j - i);
		i = j;
	}
	if (!pr->n)
		fputs("no pages: every code page stays as its plan says\n", f);
	stores_close(&st);
}

/* ---- the subcommand ------------------------------------------------------- */

static int show_file(const char *file)
{
	struct profile pr = { 0 };

	if (profile_read(file, &pr) != 0) {
		profile_free(&pr);
		return XOM_EXIT_FAILED;
	}
	profile_tidy(&pr);
	printf("%s:\n", file);
	profile_show(stdout, &pr);
	profile_free(&pr);
	return XOM_EXIT_OK;
}

/* Shows every file of dir (name NULL) or the one named name. */
static int show_dir(const char *what, const char *dir, const char *name,
                    int *shown)
{
	char path[PATH_MAX];
	int rc = XOM_EXIT_OK;

	if (name) {
		snprintf(path, sizeof path, "%s/%s", dir, name);
		if (access(path, F_OK) != 0)
			return rc;
		printf("%s ", what);
		(*shown)++;
		return show_file(path);
	}
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && !strstr(names[i]->d_name, ".tmp-")) {
			snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
			printf("%s ", what);
			(*shown)++;
			int r = show_file(path);
			if (r > rc)
				rc = r;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

static int cmd_show(int argc, char **argv)
{
	char user[PATH_MAX], sys[PATH_MAX], name[XOM_KEY_NAME_MAX], path[PATH_MAX];
	const char *want = NULL;
	int shown = 0, rc = XOM_EXIT_OK, r;
	struct stat st;

	if (argc > 2)
		return usage_error("show takes one PROFILE or PROG at most");
	if (argc == 2) {
		const char *arg = argv[1];
		if (stat(arg, &st) == 0 && S_ISREG(st.st_mode)) {
			/* A profile, or a program: a program is an ELF file. */
			char magic[4] = { 0 };
			FILE *f = fopen(arg, "r");
			if (f) {
				if (fread(magic, 1, 4, f) != 4)
					magic[0] = 0;
				fclose(f);
			}
			if (memcmp(magic, "\177ELF", 4))
				return show_file(arg);
			if (!strchr(arg, '/') && (r = prog_search(arg, path, sizeof path)) == 0)
				;       /* a program of PATH: as a shell would take it */
			else
				snprintf(path, sizeof path, "%s", arg);
		} else if (strchr(arg, '/')) {
			say("%s: %s", arg, strerror(errno));
			return XOM_EXIT_FAILED;
		} else if ((r = prog_search(arg, path, sizeof path)) != 0) {
			say("%s: %s", arg, r == ENOENT ? "command not found" : strerror(r));
			return XOM_EXIT_FAILED;
		}
		struct xom_plan_key k;
		if (file_key(path, &k) != 0) {
			say("%s: %s", path, strerror(errno));
			return XOM_EXIT_FAILED;
		}
		xom_key_name(&k, name, sizeof name);
		want = name;
	}
	if (profile_user_dir(user, sizeof user) == 0
	    && (r = show_dir("your profile", user, want, &shown)) > rc)
		rc = r;
	if (profile_system_dir(sys, sizeof sys) == 0
	    && (r = show_dir("system profile", sys, want, &shown)) > rc)
		rc = r;
	if (!shown)
		printf("no profile%s%s in %s or %s\n", want ? " for " : "",
		       want ? path : "", profile_user_dir(user, sizeof user) == 0 ? user : "(no folder)",
		       profile_system_dir(sys, sizeof sys) == 0 ? sys : "(no store)");
	return rc;
}

static int cmd_merge(int argc, char **argv)
{
	struct profile pr = { 0 };

	if (argc < 3)
		return usage_error("merge needs OUT and at least one IN");
	for (int i = 2; i < argc; i++)
		if (profile_read(argv[i], &pr) != 0) {
			profile_free(&pr);
			return XOM_EXIT_FAILED;
		}
	size_t dropped = profile_tidy(&pr);
	int rc = profile_save(argv[1], &pr, "# xom profile (xom profile merge)\n")
	         ? XOM_EXIT_ENV : XOM_EXIT_OK;
	if (rc == XOM_EXIT_OK)
		say("%s: %zu page%s from %d profile%s (%zu repeated)", argv[1], pr.n,
		    pr.n == 1 ? "" : "s", argc - 2, argc - 2 == 1 ? "" : "s", dropped);
	profile_free(&pr);
	return rc;
}

static int cmd_install(int argc, char **argv)
{
	char dir[PATH_MAX];
	const char *to = NULL;
	int system = 0, i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--system"))
			system = 1;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			to = argv[++i];
		else if (!strcmp(argv[i], "--"))
			{ i++; break; }
		else
			return usage_error("install: unknown option '%s'", argv[i]);
	}
	if (i >= argc)
		return usage_error("install needs a PROFILE");
	if (system && to)
		return usage_error("install: --system or --dir, not both");
	if (!to && (system ? profile_system_dir(dir, sizeof dir)
	                   : profile_user_dir(dir, sizeof dir)) != 0) {
		say("profile install: no %s profile folder (store=off or profiles=off, or no HOME)",
		    system ? "system" : "user");
		return XOM_EXIT_ENV;
	}
	if (!to)
		to = dir;
	struct profile pr = { 0 }, added = { 0 };
	int rc = XOM_EXIT_OK;
	for (; i < argc && rc == XOM_EXIT_OK; i++)
		if (profile_read(argv[i], &pr) != 0)
			rc = XOM_EXIT_FAILED;
	for (size_t k = 0; rc == XOM_EXIT_OK && k < pr.n; k++)
		if (!pr.p[k].prog_key[0]) {
			say("profile install: %s 0x%llx is for every program (no program line before it); a profile folder holds one program's pages a file: use XOM_OPTIONS profile=FILE for it",
			    pr.p[k].path[0] ? pr.p[k].path : pr.p[k].key,
			    (unsigned long long)pr.p[k].page);
			rc = XOM_EXIT_FAILED;
		}
	if (rc == XOM_EXIT_OK) {
		profile_tidy(&pr);
		if (profile_add_to_folder(&pr, "", "", "# xom profile (xom profile install)\n",
		                          &added, to, system || geteuid() == 0) != 0)
			rc = XOM_EXIT_ENV;
		else
			say("profile install: %zu page%s, %zu of them new, into %s", pr.n,
			    pr.n == 1 ? "" : "s", added.n, to);
	}
	profile_free(&pr);
	profile_free(&added);
	return rc;
}

int cmd_profile(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return show_help();
	if (argc < 2)
		return usage_error("show, merge or install?");
	if (!strcmp(argv[1], "show"))
		return cmd_show(argc - 1, argv + 1);
	if (!strcmp(argv[1], "merge"))
		return cmd_merge(argc - 1, argv + 1);
	if (!strcmp(argv[1], "install"))
		return cmd_install(argc - 1, argv + 1);
	return usage_error("unknown subcommand '%s' (show, merge or install)", argv[1]);
}
