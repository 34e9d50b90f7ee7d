/*
 * optword.h - getopt_long for xom-scan and xom profile install, whose
 * options were read by hand before, so that their messages still quote
 * the whole word an option came from ("unknown option '-xyz'").
 */
#ifndef XOM_OPTWORD_H
#define XOM_OPTWORD_H

#include <getopt.h>

/*
 * getopt_long (with getopt's own messages off), and in *word the word of
 * argv that it read the option from.  A lone "-" before the operands is
 * refused as an unknown option ('?'), as the hand parsers refused it:
 * neither tool reads standard input.
 */
int getopt_word(int argc, char *const argv[], const char *optstring,
                const struct option *longopts, const char **word);

#endif
