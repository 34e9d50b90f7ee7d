/*
 * scan.c - xom scan: the scanner, xom-scan, under the xom command's name.
 * The scanner is its own program so that its output and exit status stay
 * the same whichever name runs it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

const char scan_usage[] =
	"usage: xom scan [--json | --map] FILE...\n"
	"\n"
	"Runs the scanner, xom-scan, on each FILE: which pages of its executable\n"
	"segments hold only instructions (and can be made execute-only), which\n"
	"hold bytes that code reads, and why.  --map prints one character per\n"
	"page, --json the whole code map.  The output, the other options and\n"
	"the exit status are xom-scan's (xom-scan --help).\n";

int cmd_scan(int argc, char **argv)
{
	char tool[PATH_MAX];

	/* Only --help is xom's own; the scanner reads the other options.
	 * getopt_long is not used here: it would have to know them all, and
	 * they belong to xom-scan. */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return show_help();
	if (!find_own("xom-scan", tool, sizeof tool)) {
		say("cannot find xom-scan beside %s or in %s/../lib/xom",
		    self_dir(), self_dir());
		return XOM_EXIT_ENV;
	}
	argv[0] = tool;
	fflush(NULL);
	execv(tool, argv);
	say("%s: %s", tool, strerror(errno));
	return XOM_EXIT_ENV;
}
