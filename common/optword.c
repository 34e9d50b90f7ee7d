/*
 * optword.c - getopt_long that also says which word of argv it read
 * (optword.h).
 */
#include <string.h>

#include "optword.h"

int getopt_word(int argc, char *const argv[], const char *optstring,
                const struct option *longopts, const char **word)
{
	/* getopt_long moves optind past a word only when it is done with it,
	 * so the word it reads is the one that optind names before the call
	 * (0 asks it to start again, from 1). */
	int at = optind ? optind : 1;
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, optstring, longopts, NULL);
	*word = at < argc ? argv[at] : "";
	/* Stopped at an operand, not after "--": a lone "-" is no file. */
	if (c == -1 && optind == at && at < argc && !strcmp(argv[at], "-"))
		return '?';
	return c;
}
