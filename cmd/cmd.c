/*
 * cmd.c - what the xom command's subcommands share (cmd.h): its messages,
 * usage errors and help for the command that runs, the option errors of
 * getopt_long in xom's words, and where xom's own files are.  Below every
 * subcommand and the front (xom.c), and calling none of them: the command
 * that runs is handed down (cmd_enter), not looked up in the front's table.
 *
 * This is an ordinary program, not code that runs inside a host process, so
 * it uses stdio freely.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../formats/xom_plan.h"
#include "cmd.h"

/* The command that runs: the front's own (no name) while main reads its
 * options, then the subcommand. */
static const struct xom_command *current;

void cmd_enter(const struct xom_command *c)
{
	current = c;
}

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
	const char *usage = current->usage;
	va_list ap;

	fputs("xom: ", stderr);
	if (current->name)
		fprintf(stderr, "%s: ", current->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	/* The first line of the usage is the reminder; --help has the rest. */
	fprintf(stderr, "\n%.*s\n", (int)strcspn(usage, "\n"), usage);
	return XOM_EXIT_USAGE;
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
	if (current->verbs)
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
