/*
 * static.h - xom run for a statically linked program (static.c): the
 * program is seized before it execs, protected from outside at its exec
 * event, and watched for blocked reads.  Internal to cmd/.
 */
#ifndef XOM_CMD_STATIC_H
#define XOM_CMD_STATIC_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "../loader/options.h"
#include "../formats/xom_plan.h"

/* The options the program runs under (XOM_OPTIONS as xom run composed
 * it), and why this machine cannot give it a key (NULL when it can). */
struct static_opts {
	struct xom_opts o;
	char buf[8192];
	const char *why_not;
};

/* What xom knows of the image it protected: enough to name a place in a
 * report, and no list of readable pages. */
struct static_image {
	char path[PATH_MAX];
	uint64_t bias, lo, hi;          /* [lo, hi): its PT_LOAD segments, linked */
	struct xom_plan_key key;
	int pkey;                       /* the key in the child; 0: none */
	int is_static;
};

struct static_run {
	const struct static_opts *so;
	const char *prog;               /* the name given, for messages */
	pid_t pid;
	int traced;                     /* xom is still the child's tracer */
	int done, status;               /* the child ended, with this status */
	struct static_image im;
};

/* Reads the options and asks the CPU; 0, or -1 after one line. */
int static_options(struct static_opts *so);

/* Seizes the child, which waits before its exec.  0, or -1 with why the
 * plan cannot be applied from outside in buf. */
int static_seize(pid_t child, char *buf, size_t cap);

/* Whether notice= keeps the lines that say a program runs unprotected
 * quiet (off, or done: an earlier process of the run said one). */
int static_quiet(const struct static_opts *so);

/* Waits for the seized child's exec and protects what it exec'd.  0 (it
 * runs; sr->traced says whether xom still watches it, sr->done whether it
 * has already ended), RUN_EXIT_CANNOT when require=1 refused it (it is
 * killed), or -1 when the child was lost. */
int static_start(struct static_run *sr);

/* One waitpid result of a traced thread; 1 when the program has ended
 * (its status in sr->status). */
int static_event(struct static_run *sr, pid_t tid, int status);

#endif
