/*
 * cmd.h - what the xom command's subcommands share (cmd.c defines it): the
 * shape of the table that main dispatches on (xom.c), the message and
 * usage helpers, and where xom's own files are.  Internal to cmd/.
 */
#ifndef XOM_CMD_H
#define XOM_CMD_H

#include <getopt.h>
#include <limits.h>
#include <stddef.h>

#include "../common/xom_exit.h"

/* One verb of a subcommand that has them (xom cache build, xom profile
 * show); xom NAME --help lists each with its summary. */
struct xom_verb {
	const char *name, *summary;
	int (*run)(int argc, char **argv);     /* argv[0] is the verb */
};

/* A subcommand's verbs, and the words of its message for an unknown one,
 * "unknown NOUN 'VERB' (HINTa, b or c)", which each has always had. */
struct xom_verbs {
	const struct xom_verb *verb;
	size_t n;
	const char *noun, *hint;
};

/* One subcommand.  usage's first line is "usage: xom NAME ..."; xom --help
 * lists that line's tail and the summary, xom NAME --help prints usage
 * (and the verbs, for one that has them). */
struct xom_command {
	const char *name, *summary, *usage;
	int (*run)(int argc, char **argv);     /* argv[0] is the name; NULL
	                                          for one that has verbs */
	const struct xom_verbs *verbs;         /* NULL: it has none */
};

int cmd_run(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_enable(int argc, char **argv);
int cmd_disable(int argc, char **argv);
int cmd_learn(int argc, char **argv);
extern const char run_usage[], scan_usage[], check_usage[], status_usage[],
	cache_usage[], enable_usage[], disable_usage[], learn_usage[], profile_usage[];
extern const struct xom_verbs cache_verbs, profile_verbs;

/* The command that runs from now on, for the messages and help below
 * (main, before it runs one). */
void cmd_enter(const struct xom_command *c);

/* "xom: " + the message + a newline, on stderr. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "xom: CMD: message" and the command's usage line on stderr; returns
 * XOM_EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The running command's usage on stdout (its --help); returns XOM_EXIT_OK. */
int show_help(void);

/* The usage error for what getopt_long returned as c ('?' or ':'), in
 * xom's words (getopt's own messages are off: opterr = 0). */
int option_error(int c, char *const argv[], const struct option *longopts);

/* The folder that holds this program.  In a build tree xom's libraries lie
 * beside it; in an installation they are in ../lib/xom. */
const char *self_dir(void);

/* Finds one of xom's own files there; 1 and its clean path in out, or 0. */
int find_own(const char *name, char *out, size_t len);

/* Whether the file at path (st: its stat) and every folder above it are
 * root's and writable by nobody else: what only root can change, and so
 * may be loaded into every program, or listed by root. */
struct stat;
int root_alone(const char *path, const struct stat *st);

/* ---- xom run's program (prog.c) --------------------------------------- */

/* xom run's own exit codes; PROG's status passes through beside them, as a
 * shell's does, and these are the shell's. */
enum {
	RUN_EXIT_XOM = 125,       /* xom run itself failed: libraries, fork */
	RUN_EXIT_CANNOT = 126,    /* PROG cannot run, or not under xom; also
	                             the runtime's refusal under require=1 */
	RUN_EXIT_NOTFOUND = 127,  /* PROG not found */
	RUN_EXIT_SIGNAL = 128,    /* + N: PROG died by signal N */
};

struct prog {
	char path[PATH_MAX];      /* the file that exec runs */
	int as_script;            /* no #! and no ELF: /bin/sh runs it when
	                             exec fails with ENOEXEC, as in a shell */
	int is_static;            /* what exec runs is statically linked: no
	                             dynamic linker loads the runtime into it */
};

/* Looks name up as a shell does and checks that the runtime can reach
 * what exec will run.  Returns 0, or the exit status after one line that
 * says why not. */
int prog_find(const char *name, struct prog *p);

/* Looks name up in PATH as execvp does: 0 with the path in out, or an
 * errno (ENOENT: not found; EACCES: found, but not runnable). */
int prog_search(const char *name, char *out, size_t len);

/* execs p with argv (in the child); on failure says why and _exits. */
void prog_exec(const struct prog *p, char **argv) __attribute__((noreturn));

#endif
