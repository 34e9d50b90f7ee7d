/*
 * xom_exit.h - the exit status of xom's tools: xom, xom-scan and xom-plan.
 *
 * The codes follow elfutils' elfclassify, so that a script can tell "the
 * answer is no" from "there is no answer":
 *   0   ok;
 *   1   the check failed: for xom-scan, some file could not be analysed
 *       because it is unsupported or malformed;
 *   2   the environment failed: a file cannot be read, memory ran out, the
 *       disassembler cannot start, stdout cannot be written;
 *   64  usage (EX_USAGE of sysexits.h).
 * A tool that meets both 1 and 2 exits 2: an environment failure means
 * that some answer is missing, not that it is no.
 */
#ifndef XOM_EXIT_H
#define XOM_EXIT_H

enum {
	XOM_EXIT_OK = 0,
	XOM_EXIT_FAILED = 1,
	XOM_EXIT_ENV = 2,
	XOM_EXIT_USAGE = 64,
};

/* Folds one more result into a tool's status: 2 if anything met an
 * environment failure, else 1 if anything failed, else 0. */
static inline int xom_exit_worst(int status, int code)
{
	if (status == XOM_EXIT_ENV || code == XOM_EXIT_ENV)
		return XOM_EXIT_ENV;
	if (status == XOM_EXIT_FAILED || code == XOM_EXIT_FAILED)
		return XOM_EXIT_FAILED;
	return XOM_EXIT_OK;
}

#endif
