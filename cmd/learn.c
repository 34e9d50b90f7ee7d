/*
 * learn.c - xom learn: runs a program under xom in audit mode, so that every
 * read of protected code is allowed and recorded (the fault handler appends
 * the page to a scratch profile), then adds what was read to a profile and
 * says which pages it added and why.
 *
 * The run itself is xom run's (cmd/run.c), with mode=audit, the scratch
 * profile, and profiles=off: a profile already in force would keep the
 * pages it opens from being read, and so from being learned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../formats/xom_plan.h"
#include "cache/store.h"
#include "cmd.h"
#include "profile.h"

const char learn_usage[] =
	"usage: xom learn [-o PROFILE] [--door preload|audit] [--] PROG [ARGS...]\n"
	"\n"
	"Runs PROG (looked up in PATH when it has no slash) as xom run does, but\n"
	"in audit mode: a read of protected code is allowed, and the page read\n"
	"is recorded.  Then it adds those pages to a profile, each named by the\n"
	"build-id of its file and its link-time address (so the profile holds\n"
	"across runs and ASLR), and says on standard error which objects and\n"
	"pages it added, why (the code that was read, and the instruction that\n"
	"read it, each with its symbol), and how much of each object's code\n"
	"stays execute-only.  Only the pages read stay readable, never a whole\n"
	"object.  Profiles in force are not used meanwhile (profiles=off).\n"
	"\n"
	"Options:\n"
	"  -o PROFILE           add the pages to the file PROFILE (created if\n"
	"                       need be); by default they go to your profile\n"
	"                       folder, one file per program that read code,\n"
	"                       named by its build-id, where the runtime finds\n"
	"                       them for that program by itself\n"
	"  --door preload|audit the door to run PROG through: LD_PRELOAD alone\n"
	"                       (default), or with the LD_AUDIT module too, which\n"
	"                       also reaches the libraries libc loads itself\n"
	"  -h, --help           this text\n"
	"\n"
	"Your profile folder is $XDG_CONFIG_HOME/xom/profiles, else\n"
	"$HOME/.config/xom/profiles (XOM_OPTIONS profiles=DIR moves it); see\n"
	"xom profile show.  Run PROG over the work it does in earnest: a page\n"
	"that this run does not read stays execute-only.\n"
	"\n"
	"Exit status: PROG's, as with xom run (the profile is written even when\n"
	"PROG fails); 2 the profile could not be written; 64 usage.\n";

struct learn_opts {
	const char *out;
	int audit;
};

static int parse_learn(int argc, char **argv, struct learn_opts *lo)
{
	enum { OPT_DOOR = 256 };
	static const struct option longopts[] = {
		{ "door", required_argument, NULL, OPT_DOOR },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': lo->out = optarg; break;
		case 'h': return show_help();
		case OPT_DOOR:
			if (!strcmp(optarg, "audit"))
				lo->audit = 1;
			else if (strcmp(optarg, "preload"))
				return usage_error("--door: '%s' is neither preload nor audit",
				                   optarg);
			break;
		default:
			return option_error(c, argv, longopts);
		}
	}
	if (optind >= argc)
		return usage_error("no program given");
	return -1;
}

/* The command line, quoted as a shell would need, for the profile's head. */
static void put_command(char *out, size_t len, int audit, char **argv)
{
	size_t n = (size_t)snprintf(out, len, "# learned by: xom learn%s --",
	                            audit ? " --door audit" : "");

	for (int i = 0; argv[i] && n < len; i++) {
		int plain = argv[i][0] && strspn(argv[i], "abcdefghijklmnopqrstuvwxyz"
		            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=+,:@%")
		            == strlen(argv[i]);
		n += (size_t)snprintf(out + n, len - n, plain ? " %s" : " '%s'", argv[i]);
	}
	if (n < len)
		snprintf(out + n, len - n, "\n");
}

/* The learned program's profile key: its build-id in hex, else its path. */
static int prog_key(const char *name, char *key, size_t klen, char *path,
                    size_t plen)
{
	struct xom_plan_key k;
	int e;

	if (strchr(name, '/'))
		snprintf(path, plen, "%s", name);
	else if ((e = prog_search(name, path, plen)) != 0)
		return -1;
	char *real = realpath(path, NULL);
	if (real) {
		snprintf(path, plen, "%s", real);
		free(real);
	}
	if (file_key(path, &k) != 0)
		return -1;
	if (k.kind == XOM_KEY_BUILD_ID)
		xom_key_name(&k, key, klen);
	else
		snprintf(key, klen, "%s", path);
	return 0;
}

int cmd_learn(int argc, char **argv)
{
	struct learn_opts lo = { 0 };
	char raw[] = "/tmp/xom-learn-XXXXXX", head[4200], self_key[PATH_MAX],
	     self_path[PATH_MAX], where[PATH_MAX];
	int r;

	if ((r = parse_learn(argc, argv, &lo)) >= 0)
		return r;
	char **prog = argv + optind;
	int nprog = argc - optind;
	if (prog_key(prog[0], self_key, sizeof self_key, self_path,
	             sizeof self_path) != 0)
		self_key[0] = self_path[0] = 0;   /* xom run says why */
	/* Without keys no page is made execute-only, so no read is ever seen:
	 * the profile would be empty, and say nothing true. */
	int key = pkey_alloc(0, PKEY_DISABLE_ACCESS);
	if (key < 0) {
		say("learn: nothing can be learned here: pkey_alloc fails (%s), so no page is made execute-only and no read is seen; learn where `xom check` says ok (it names machines with keys)",
		    strerror(errno));
		return XOM_EXIT_ENV;
	}
	pkey_free(key);
	/* The folder as the runtime finds it, before profiles=off below. */
	if (!lo.out && profile_user_dir(where, sizeof where) != 0) {
		say("learn: no profile folder (profiles=off, or neither XDG_CONFIG_HOME nor HOME is set): give -o PROFILE");
		return XOM_EXIT_USAGE;
	}
	int fd = mkstemp(raw);
	if (fd < 0) {
		say("learn: %s: %s", raw, strerror(errno));
		return XOM_EXIT_ENV;
	}
	close(fd);

	/* profiles=off after the user's own items: the last value of a key
	 * wins. */
	const char *old = getenv("XOM_OPTIONS");
	char *opts;
	if (asprintf(&opts, "%s%sprofiles=off", old && *old ? old : "",
	             old && *old ? ":" : "") < 0 || setenv("XOM_OPTIONS", opts, 1)) {
		say("learn: out of memory");
		unlink(raw);
		return XOM_EXIT_ENV;
	}
	free(opts);
	char **rargv = calloc((size_t)nprog + 8, sizeof *rargv);
	if (!rargv) {
		unlink(raw);
		return XOM_EXIT_ENV;
	}
	/* getopt permutes nothing here ('+'), but its prototype wants char *. */
	static char a_run[] = "run", a_mode[] = "--mode", a_audit[] = "audit",
	            a_profile[] = "--profile", a_door[] = "--audit", a_end[] = "--";
	int n = 0;
	rargv[n++] = a_run;
	rargv[n++] = a_mode;
	rargv[n++] = a_audit;
	rargv[n++] = a_profile;
	rargv[n++] = raw;
	if (lo.audit)
		rargv[n++] = a_door;
	rargv[n++] = a_end;
	for (int i = 0; i < nprog; i++)
		rargv[n++] = prog[i];
	optind = 0;             /* getopt starts afresh on run's arguments */
	int status = cmd_run(n, rargv);
	free(rargv);
	/* xom run refused or could not start the program: it said why, and
	 * nothing ran that could have read a page. */
	if (status == RUN_EXIT_NOTFOUND || status == RUN_EXIT_CANNOT || status == RUN_EXIT_XOM) {
		unlink(raw);
		return status;
	}

	struct profile got = { 0 }, added = { 0 };
	int bad = profile_read(raw, &got);
	unlink(raw);
	if (bad) {
		profile_free(&got);
		return XOM_EXIT_ENV;
	}
	profile_tidy(&got);
	put_command(head, sizeof head, lo.audit, prog);
	char full[sizeof head + 64];
	snprintf(full, sizeof full, "# xom profile: the code pages these programs read\n%s",
	         head);
	int wrote = lo.out ? profile_add_to_file(lo.out, &got, NULL, full, &added)
	                   : profile_add_to_folder(&got, self_key, self_path, full,
	                                           &added, where, 0);
	if (wrote == 0) {
		profile_tidy(&added);
		say("learn: %zu page%s read, %zu of them new, added to %s", got.n,
		    got.n == 1 ? "" : "s", added.n, lo.out ? lo.out : where);
		if (added.n)
			profile_show(stderr, &added);
	}
	profile_free(&got);
	profile_free(&added);
	return wrote ? XOM_EXIT_ENV : status;
}
