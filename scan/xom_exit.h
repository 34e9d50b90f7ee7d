/*
 * xom_exit.h - the exit codes of xom's programs (xom, xom-scan, xom-plan),
 * one set for all, in the manner of elfutils' elfclassify.  `xom run`
 * passes its program's own status through and adds the codes of
 * cmd/run.c; the runtime's refusal under require=1 is its own.
 */
#ifndef XOM_EXIT_H
#define XOM_EXIT_H

enum {
	XOM_EXIT_OK = 0,        /* done, or the check passed */
	XOM_EXIT_FAIL = 1,      /* the check failed: a file could not be analysed,
	                           the machine cannot enforce, the process is gone */
	XOM_EXIT_ENV = 2,       /* the environment failed: cannot read, no memory,
	                           cannot write the output */
	XOM_EXIT_USAGE = 64,    /* a bad command line */
};

#endif
