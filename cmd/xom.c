/*
 * xom.c - the xom command's front: the table of subcommands, from which
 * `xom --help`, "unknown command" and `xom help COMMAND` all come, and the
 * dispatch of the verbs of those that have them (xom cache build).  What
 * the subcommands share is cmd.c's, below all of them.
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

/* What xom says when no command runs yet: its own usage, as a command of
 * no name (cmd.c's usage_error). */
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

static const struct xom_command top = { NULL, NULL, main_usage, NULL, NULL };

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
	const struct xom_command *c;

	if (argc > 2)
		return usage_error("help: one command at a time");
	if (argc < 2) {
		list_commands();
		return XOM_EXIT_OK;
	}
	if (!(c = find_command(argv[1])))
		return unknown_command(argv[1]);
	cmd_enter(c);
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
	cmd_enter(&top);
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		if (c == 'h') {
			list_commands();
			return XOM_EXIT_OK;
		}
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
	const struct xom_command *cmd = find_command(argv[0]);
	if (!cmd)
		return unknown_command(argv[0]);
	cmd_enter(cmd);
	/* Each command parses its own options, from a fresh start: 0 makes
	 * getopt read the new option string's '+' too. */
	optind = 0;
	if (cmd->verbs)
		return run_verb(cmd->verbs, argc, argv);
	return cmd->run(argc, argv);
}
