/*
 * xom.c - the xom command's front: the table of subcommands, from which
 * `xom --help`, "unknown command" and `xom COMMAND --help` all come, the
 * dispatch of the verbs of those that have them (xom cache build), and
 * the helpers that the subcommands share (cmd.h).
 *
 * This is an ordinary program, not code that runs inside a host process, so
 * it uses stdio freely.  Exit codes: common/xom_exit.h, and cmd/run.c's own
 * for xom run.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../formats/xom_plan.h"
#include "../scan/xom_scan.h"
#include "cmd.h"

#define XOM_VERSION "0.1.0"

static const struct xom_command commands[] = {
	{ "run", "run PROG with its code execute-only", run_usage, cmd_run, NULL },
	{ "scan", "show which code pages can be protected", scan_usage, cmd_scan,
	  NULL },
	{ "check", "can this machine enforce execute-only code?", check_usage,
	  cmd_check, NULL },
	{ "status", "which code of a process is execute-only", status_usage,
	  cmd_status, NULL },
	{ "cache", "build, show or prune the plans of programs", cache_usage,
	  NULL, &cache_verbs },
	{ "enable", "load xom into every program (/etc/ld.so.preload)",
	  enable_usage, cmd_enable, NULL },
	{ "disable", "stop loading xom into every program", disable_usage,
	  cmd_disable, NULL },
	{ "learn", "run PROG and learn which code pages it reads", learn_usage,
	  cmd_learn, NULL },
	{ "profile", "show, merge or install profiles of pages kept readable",
	  profile_usage, NULL, &profile_verbs },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* The subcommand being run; NULL while main reads its own options. */
static const struct xom_command *current;

static const char main_usage[] =
	"usage: xom COMMAND [ARGS...]\n"
	"\n"
	"Makes the code of dynamically linked x86-64 programs execute-only with\n"
	"Intel memory protection keys, so that a memory-read bug cannot read it.\n";

static const char main_tail[] =
	"\n"
	"  xom COMMAND --help    help for one command (also: xom help COMMAND)\n"
	"  xom --version         the version\n"
	"\n"
	"The runtime reads XOM_OPTIONS; `xom check` shows the values in force\n"
	"and man xom lists the keys.\n";

void say(const char *fmt, ...)
{
	va_list ap;

	fputs("xom: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int usage_error(const char *fmt, ...)
{
	const char *usage = current ? current->usage : main_usage;
	va_list ap;

	fputs("xom: ", stderr);
	if (current)
		fprintf(stderr, "%s: ", current->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	/* The first line of the usage is the reminder; --help has the rest. */
	fprintf(stderr, "\n%.*s\n", (int)strcspn(usage, "\n"), usage);
	return XOM_EXIT_USAGE;
}

static void list_commands(void)
{
	fputs(main_usage, stdout);
	fputs("\nCommands:\n", stdout);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		/* The synopsis is the usage without "usage: xom ", up to its
		 * first empty line, whole (profile's runs over two lines); the
		 * summary goes below it, so that no line grows too wide. */
		const char *syn = commands[i].usage + strlen("usage: xom ");
		for (int first = 1; *syn && *syn != '\n'; first = 0) {
			if (!first)
				syn += strspn(syn, " ");
			int n = (int)strcspn(syn, "\n");
			printf("  %*s%.*s\n", first ? 0 : (int)strlen(commands[i].name) + 1, "", n, syn);
			syn += n + (syn[n] == '\n');
		}
		printf("      %s\n", commands[i].summary);
	}
	fputs(main_tail, stdout);
}

/* A subcommand's help with its verbs from its table: the synopsis (the
 * usage up to its first empty line), the verbs, then the rest. */
static void list_verbs(const struct xom_command *c)
{
	const char *rest = strstr(c->usage, "\n\n");
	int head = rest ? (int)(rest - c->usage) + 1 : (int)strlen(c->usage);

	printf("%.*s\nVerbs:\n", head, c->usage);
	for (size_t i = 0; i < c->verbs->n; i++)
		printf("  %-8s %s\n", c->verbs->verb[i].name, c->verbs->verb[i].summary);
	fputs(c->usage + head, stdout);
}

int show_help(void)
{
	if (!current)
		list_commands();
	else if (current->verbs)
		list_verbs(current);
	else
		fputs(current->usage, stdout);
	return XOM_EXIT_OK;
}

/* The long option that getopt_long reports as val, or NULL. */
static const struct option *long_by_val(const struct option *lo, int val)
{
	for (; lo && lo->name; lo++)
		if (!lo->flag && lo->val == val)
			return lo;
	return NULL;
}

int option_error(int c, char *const argv[], const struct option *longopts)
{
	/* getopt_long leaves in optopt the short option, or the val of a long
	 * option that lacks its value or was given one it does not take, or 0
	 * for a long option that it does not know (optind is past it then). */
	const char *arg = argv[optind - 1];
	const struct option *lo = optopt ? long_by_val(longopts, optopt) : NULL;

	if (c == ':')
		return usage_error("option '%s' needs a value", arg);
	if (!optopt)
		return usage_error("unknown option '%.*s'", (int)strcspn(arg, "="),
		                   arg);
	if (lo)
		return usage_error("option '--%s' takes no value", lo->name);
	return usage_error("unknown option '-%c'", optopt);
}

const char *self_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	if (n <= 0) {
		strcpy(dir, ".");
		return dir;
	}
	dir[n] = 0;
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	return dir;
}

int find_own(const char *name, char *out, size_t len)
{
	static const char *const rel[] = { "", "/../lib/xom" };

	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		int n = snprintf(out, len, "%s%s/%s", self_dir(), rel[i], name);
		if (n > 0 && (size_t)n < len && access(out, F_OK) == 0) {
			char real[PATH_MAX];
			/* The dynamic linker records the path as given; a clean one
			 * reads better in xom's messages and in /proc/PID/maps. */
			if (realpath(out, real) && strlen(real) < len)
				strcpy(out, real);
			return 1;
		}
	}
	return 0;
}

int root_alone(const char *path, const struct stat *st)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	return slash && st->st_uid == 0 && !(st->st_mode & 022)
	       && xom_store_dir_shared(dir, lstat);
}

static const struct xom_command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* Adds the i-th of count names to the list in buf (len so far), worded
 * "a, b or c" for messages. */
static void list_name(char *buf, size_t cap, size_t *len, size_t i,
                      size_t count, const char *name)
{
	if (*len < cap)
		*len += (size_t)snprintf(buf + *len, cap - *len, "%s%s",
		                         i == 0 ? "" : i + 1 < count ? ", " : " or ",
		                         name);
}

static int unknown_command(const char *name)
{
	char names[128] = "";
	size_t n = 0;

	for (size_t i = 0; i < NCOMMANDS; i++)
		list_name(names, sizeof names, &n, i, NCOMMANDS, commands[i].name);
	return usage_error("unknown command '%s' (try %s)", name, names);
}

/* Runs the verb that argv[1] names (argv[0] is the subcommand) with the
 * rest, or says that there is none or what it is: the subcommand's help
 * for -h or --help, a usage error when it is missing or unknown. */
static int run_verb(const struct xom_verbs *vs, int argc, char **argv)
{
	char names[128] = "";
	size_t n = 0;

	/* The verb comes first: its options follow it. */
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return show_help();
	for (size_t i = 0; i < vs->n; i++)
		list_name(names, sizeof names, &n, i, vs->n, vs->verb[i].name);
	if (argc < 2)
		return usage_error("%s?", names);
	for (size_t i = 0; i < vs->n; i++)
		if (!strcmp(vs->verb[i].name, argv[1]))
			return vs->verb[i].run(argc - 1, argv + 1);
	return usage_error("unknown %s '%s' (%s%s)", vs->noun, argv[1], vs->hint,
	                   names);
}

/* xom help [COMMAND] */
static int help_command(int argc, char **argv)
{
	if (argc > 2)
		return usage_error("help: one command at a time");
	if (argc == 2 && !(current = find_command(argv[1])))
		return unknown_command(argv[1]);
	return show_help();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const char optstring[] = "+:hV";
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		if (c == 'h')
			return show_help();
		if (c == 'V') {
			printf("xom %s (scanner version %d)\n", XOM_VERSION,
			       XOM_SCAN_VERSION);
			return XOM_EXIT_OK;
		}
		return option_error(c, argv, longopts);
	}
	if (optind >= argc)
		return usage_error("no command given");
	argc -= optind;
	argv += optind;
	if (!strcmp(argv[0], "help"))
		return help_command(argc, argv);
	if (!(current = find_command(argv[0])))
		return unknown_command(argv[0]);
	/* Each command parses its own options, from a fresh start: 0 makes
	 * getopt read the new option string's '+' too. */
	optind = 0;
	if (current->verbs)
		return run_verb(current->verbs, argc, argv);
	return current->run(argc, argv);
}
