/*
 * profile.c - xom profile show|merge|install, and the listing that show and
 * xom learn print (the files themselves: profile_file.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/optword.h"
#include "../loader/options.h"
#include "../formats/xom_plan.h"
#include "cache/store.h"
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

/* ---- show ----------------------------------------------------------------- */

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
	static const struct option longopts[] = {
		{ "system", no_argument, NULL, 'S' },
		{ "dir", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *to = NULL, *word;
	int system = 0, c, i;

	/* Options stop at the first PROFILE ("+"); any other option, or
	 * --dir without its folder, gets the message it always had. */
	while ((c = getopt_word(argc, argv, "+:", longopts, &word)) != -1) {
		if (c == 'S')
			system = 1;
		else if (c == 'd')
			to = optarg;
		else
			return usage_error("install: unknown option '%s'", word);
	}
	i = optind;
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

static const struct xom_verb verbs[] = {
	{ "show", "list a profile, or the profiles the runtime finds", cmd_show },
	{ "merge", "write the pages of every IN into OUT", cmd_merge },
	{ "install", "put each program's pages into its file in a profile folder",
	  cmd_install },
};

const struct xom_verbs profile_verbs = {
	verbs, sizeof verbs / sizeof verbs[0], "subcommand", "",
};
