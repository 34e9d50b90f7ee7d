/*
 * run.c - xom run: finds PROG, refuses what the dynamic linker would not let
 * the runtime reach (prog.c), sets up LD_PRELOAD, LD_AUDIT and XOM_OPTIONS,
 * and runs PROG as a child that it waits for, so that it can say how PROG
 * died.  Every signal meant for PROG that reaches xom is passed on, and
 * PROG dies with xom, so that xom stands for PROG as a whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../loader/options.h"
#include "cmd.h"
#include "static.h"

const char run_usage[] =
	"usage: xom run [OPTIONS] [--] PROG [ARGS...]\n"
	"\n"
	"Runs PROG (looked up in PATH when it has no slash) with libxom.so\n"
	"preloaded, so that its code is execute-only, and exits with PROG's exit\n"
	"status.  Options end at PROG: xom run ls -l passes -l to ls.\n"
	"\n"
	"Options:\n"
	"  --audit              also load the LD_AUDIT module (libxom-audit.so),\n"
	"                       which protects the libraries that libc loads\n"
	"                       itself too (NSS, iconv); LD_PRELOAD stays\n"
	"  --mode MODE          enforce (default): a read of protected code kills\n"
	"                       the program; audit: log the read and go on;\n"
	"                       off: leave the program alone\n"
	"  --profile FILE       pages listed in FILE stay readable; audit mode\n"
	"                       appends the pages that were read\n"
	"  --require            refuse to run PROG when it cannot be protected\n"
	"  -v, --verbose        say what is set up; repeat for more detail\n"
	"  -h, --help           this text\n"
	"\n"
	"The options become XOM_OPTIONS keys; other keys already in the\n"
	"environment are kept.  Unless XOM_OPTIONS sets notice, xom adds\n"
	"notice=once: of PROG and the programs it starts, only the first to step\n"
	"aside or leave something unprotected says so.  Signals sent to xom are\n"
	"passed on to PROG, and PROG is killed if xom is.\n"
	"\n"
	"A statically linked PROG, which no dynamic linker loads libxom.so\n"
	"into, is protected from outside: xom seizes it with ptrace before it\n"
	"execs, applies its plan by injecting the key calls at its first\n"
	"instruction, and stays its tracer to name its blocked reads.\n"
	"\n"
	"Exit status: PROG's; 128+N when PROG died by signal N (one line says\n"
	"so); 64 usage; 125 xom failed (e.g. its libraries are missing); 126\n"
	"PROG cannot run, or not under xom (set-user-ID or set-group-ID, file\n"
	"capabilities, not executable, static in audit mode), or it was\n"
	"refused under --require; 127 PROG not found.\n";

struct run_opts {
	int audit, require, verbose;
	const char *mode, *profile;
	char vbuf[16];          /* verbose, as the XOM_OPTIONS value */
};

/*
 * Checks one command-line value with the runtime's own parser, so that xom
 * run accepts exactly what the runtime accepts and rejects the rest in the
 * runtime's words.  Returns -1 when it is good, else the exit status.
 */
static int check_value(const char *opt, const char *key, const char *value)
{
	char text[PATH_MAX + 32], buf[sizeof text], err[256];
	struct xom_opts o;
	int require;

	/* XOM_OPTIONS has no quoting: a ':' would start another key. */
	if (strchr(value, ':'))
		return usage_error("%s: the value cannot contain ':' (XOM_OPTIONS separates keys with it)",
		                   opt);
	if ((size_t)snprintf(text, sizeof text, "%s=%s", key, value) >= sizeof text)
		return usage_error("%s: the value is too long", opt);
	if (xom_options_parse(text, &o, buf, sizeof buf, &require, err,
	                      sizeof err) != 0)
		return usage_error("%s: %s", opt, err);
	return -1;
}

/* Returns -1 with optind at PROG, or the exit status (help, usage). */
static int parse_run(int argc, char **argv, struct run_opts *ro)
{
	enum { OPT_AUDIT = 256, OPT_MODE, OPT_PROFILE, OPT_REQUIRE };
	static const struct option longopts[] = {
		{ "audit", no_argument, NULL, OPT_AUDIT },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "require", no_argument, NULL, OPT_REQUIRE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	/* '+': the options end at PROG, whose own options are its business. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hv", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_AUDIT: ro->audit = 1; break;
		case OPT_REQUIRE: ro->require = 1; break;
		case 'v': ro->verbose++; break;
		case 'h': return show_help();
		case OPT_MODE:
			if ((r = check_value("--mode", "mode", optarg)) >= 0)
				return r;
			ro->mode = optarg;
			break;
		case OPT_PROFILE:
			if ((r = check_value("--profile", "profile", optarg)) >= 0)
				return r;
			ro->profile = optarg;
			break;
		default:
			return option_error(c, argv, longopts);
		}
	}
	if (ro->verbose) {
		snprintf(ro->vbuf, sizeof ro->vbuf, "%d", ro->verbose);
		if ((r = check_value("-v", "verbose", ro->vbuf)) >= 0)
			return r;
	}
	if (optind >= argc)
		return usage_error("no program given");
	return -1;
}

/* Appends n bytes of item to the ':'-separated list in out; 0 or -1. */
static int list_add(char *out, size_t len, const char *item, size_t n)
{
	size_t used = strlen(out);

	if (used + n + 2 > len)
		return -1;
	if (used)
		out[used++] = ':';
	memcpy(out + used, item, n);
	out[used + n] = 0;
	return 0;
}

/* A key/value that the command line sets; key NULL when it does not. */
struct pair {
	const char *key, *value;
};

/* Whether the user's XOM_OPTIONS gives key. */
static int user_sets(const char *key)
{
	const char *s = getenv("XOM_OPTIONS");
	size_t kl, n;

	for (s = s ? s : ""; *s; s += n + (s[n] == ':')) {
		n = xom_opt_item(s, &kl);
		if (kl == strlen(key) && !strncmp(s, key, kl))
			return 1;
	}
	return 0;
}

static int sets_key(const struct pair *set, size_t nset, const char *key,
                    size_t kl)
{
	for (size_t i = 0; i < nset; i++)
		if (set[i].key && strlen(set[i].key) == kl
		    && !strncmp(key, set[i].key, kl))
			return 1;
	return 0;
}

/*
 * Builds the child's XOM_OPTIONS: the user's items, in order, minus the
 * keys that the command line sets, then the command line's.  Items and
 * keys are split by the runtime's own rule (xom_opt_item).  Returns 0 or -1.
 */
static int compose_options(char *out, size_t len, const struct pair *set,
                           size_t nset)
{
	const char *s = getenv("XOM_OPTIONS");
	char pair[PATH_MAX + 32];

	out[0] = 0;
	for (s = s ? s : ""; *s; s += *s == ':') {
		size_t kl, n = xom_opt_item(s, &kl);
		if (n && !sets_key(set, nset, s, kl) && list_add(out, len, s, n))
			return -1;
		s += n;
	}
	for (size_t i = 0; i < nset; i++) {
		if (!set[i].key)
			continue;
		int n = snprintf(pair, sizeof pair, "%s=%s", set[i].key, set[i].value);
		if (n < 0 || (size_t)n >= sizeof pair
		    || list_add(out, len, pair, (size_t)n))
			return -1;
	}
	return 0;
}

/* Puts lib in front of the list in variable var (LD_PRELOAD or LD_AUDIT). */
static int prepend_env(const char *var, const char *lib)
{
	const char *old = getenv(var);
	char *v;

	/* The dynamic linker splits LD_PRELOAD at spaces and colons. */
	if (strpbrk(lib, ": \t")) {
		say("cannot use %s: the dynamic linker would split its path", lib);
		return -1;
	}
	/* Under a nested xom run the library is already there; loading it
	 * twice would only add a second, idle copy. */
	if (old) {
		size_t ll = strlen(lib);
		for (const char *p = old; (p = strstr(p, lib)) != NULL; p += ll)
			if ((p == old || strchr(": \t", p[-1]))
			    && (!p[ll] || strchr(": \t", p[ll])))
				return 0;
	}
	if (old && *old) {
		if (asprintf(&v, "%s:%s", lib, old) < 0)
			return -1;
	} else if (!(v = strdup(lib))) {
		return -1;
	}
	int r = setenv(var, v, 1);
	free(v);
	return r;
}

/*
 * Sets LD_PRELOAD, LD_AUDIT and XOM_OPTIONS for the child.  With --audit the
 * preload library comes along too: the audit module does the protecting,
 * and the preload library's sigaction() wrapper keeps xom's SIGSEGV handler
 * first when the program installs its own (the audit module alone cannot
 * interpose on the program's calls).  Returns 0, -1 after a message, or
 * the usage error's status when the options are invalid.
 */
static int set_env(const struct run_opts *ro, const char *path)
{
	char audit[PATH_MAX], preload[PATH_MAX], opts[8192];
	const char *missing = !find_own("libxom.so", preload, sizeof preload)
		? "libxom.so"
		: ro->audit && !find_own("libxom-audit.so", audit, sizeof audit)
		? "libxom-audit.so" : NULL;

	if (missing) {
		say("cannot find %s beside %s or in %s/../lib/xom", missing,
		    self_dir(), self_dir());
		return -1;
	}
	const struct pair set[] = {
		{ ro->mode ? "mode" : NULL, ro->mode },
		{ ro->profile ? "profile" : NULL, ro->profile },
		{ ro->require ? "require" : NULL, "1" },
		{ ro->verbose ? "verbose" : NULL, ro->vbuf },
		{ user_sets("notice") ? NULL : "notice", "once" },
	};
	if (compose_options(opts, sizeof opts, set, sizeof set / sizeof set[0])) {
		say("XOM_OPTIONS would be too long");
		return -1;
	}
	/* A mistyped key of the user's (mode=enfroce) that the command line
	 * does not replace would have the runtime run PROG unprotected behind
	 * one line: refused here, as a mistyped --mode is. */
	struct xom_opts o;
	char buf[sizeof opts], err[256];
	int require;
	if (xom_options_parse(opts, &o, buf, sizeof buf, &require, err, sizeof err) != 0)
		return usage_error("XOM_OPTIONS: %s", err);
	if (prepend_env("LD_PRELOAD", preload) != 0
	    || (ro->audit && prepend_env("LD_AUDIT", audit) != 0))
		return -1;
	if (opts[0] ? setenv("XOM_OPTIONS", opts, 1) : unsetenv("XOM_OPTIONS")) {
		say("setenv: %s", strerror(errno));
		return -1;
	}
	if (ro->verbose)
		say("running %s with LD_PRELOAD=%s%s%s XOM_OPTIONS=%s", path,
		    getenv("LD_PRELOAD"), ro->audit ? " LD_AUDIT=" : "",
		    ro->audit ? getenv("LD_AUDIT") : "", opts);
	return 0;
}

/* ---- the child and its signals ----------------------------------------- */

/*
 * The signals that xom forwards: every catchable one but xom's own faults
 * (the kernel sends them for xom's own instructions), SIGCHLD (how xom
 * learns PROG's fate) and SIGTTIN/SIGTTOU (they stop xom when it itself
 * uses the terminal from the background).  glibc's sigfillset already
 * leaves out the two real-time signals it keeps for itself.
 */
static void forwarded_signals(sigset_t *set)
{
	static const int kept[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP,
		SIGSYS, SIGCHLD, SIGTTIN, SIGTTOU, SIGKILL, SIGSTOP };

	sigfillset(set);
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
		sigdelset(set, kept[i]);
}

/*
 * Whether a signal that reached xom is for PROG.  Not when the terminal
 * sent it to its foreground process group: PROG is in xom's group and got
 * its own copy (a second Ctrl-C or Ctrl-Z would be a second event to
 * PROG).  Not when PROG sent it (kill(0, ...) reaches xom too), and not
 * when xom raised it with its own write (SIGPIPE, SIGXFSZ).
 */
static int for_prog(const siginfo_t *si, pid_t child)
{
	if (si->si_code == SI_KERNEL)
		return si->si_signo != SIGINT && si->si_signo != SIGQUIT
		       && si->si_signo != SIGTSTP && si->si_signo != SIGWINCH;
	return si->si_code > 0 || (si->si_pid != child && si->si_pid != getpid());
}

static void forward(const siginfo_t *si, pid_t child)
{
	if (!for_prog(si, child))
		return;
	/* sigqueue keeps the value that a queued real-time signal carries. */
	if (si->si_code == SI_QUEUE)
		sigqueue(child, si->si_signo, si->si_value);
	else
		kill(child, si->si_signo);
}

/*
 * Reaps every thread of a statically linked program that has something to
 * report (xom is their tracer, so their stops come here too, with a
 * SIGCHLD each) and lets static.c deal with it.  Returns 1 with the
 * program's status once it has ended, else 0.
 */
static int reap_traced(struct static_run *sr, int *status)
{
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, WNOHANG | __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		if (static_event(sr, r, st)) {
			*status = sr->status;
			return 1;
		}
	}
}

/*
 * Waits for the child, passing on the signals in set (blocked, so that
 * none is lost between the fork and this loop).  Forwarding and reaping
 * happen in this one loop, so a signal is never sent to the pid of a
 * child already reaped (which the kernel may have given to another).
 * Returns 0 with the child's status, or -1 after a message.
 */
static int wait_forwarding(pid_t child, const sigset_t *set, int *status,
                           struct static_run *sr)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(set, &si);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig < 0) {
			say("sigwaitinfo: %s", strerror(errno));
			return -1;
		}
		if (sig != SIGCHLD) {
			forward(&si, child);
			/* Stop with PROG, so that the shell sees the whole job
			 * stopped; SIGCONT wakes xom, which passes it on. */
			if (sig == SIGTSTP)
				raise(SIGSTOP);
			continue;
		}
		if (sr) {
			if (reap_traced(sr, status) != 0)
				return 0;
			continue;
		}
		pid_t r = waitpid(child, status, WNOHANG);
		if (r == child)
			return 0;
		if (r < 0 && errno != EINTR) {
			say("waitpid: %s", strerror(errno));
			return -1;
		}
	}
}

/* Before and after the fork: what the child gets back before exec. */
struct saved {
	sigset_t mask;
	struct sigaction chld;
	pid_t parent;
	int go, go_w;           /* the pipe that says "exec now": the child
	                           reads go and closes go_w, so that it sees
	                           the end when xom closes its own */
};

/* In the child: ties its life to xom's, gives back what xom changed, and
 * runs PROG.  Does not return. */
static void exec_child(const struct prog *p, char **argv,
                       const struct saved *sv)
{
	/* If xom dies, even by SIGKILL, PROG goes too: left alone it would
	 * be out of reach of the signals meant for it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
		say("prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
		_exit(RUN_EXIT_XOM);
	}
	/* xom may have died before the prctl took hold. */
	if (getppid() != sv->parent)
		_exit(RUN_EXIT_XOM);
	sigaction(SIGCHLD, &sv->chld, NULL);
	sigprocmask(SIG_SETMASK, &sv->mask, NULL);
	/* A static program waits here until xom has seized it (or refused
	 * it), so that the exec stops before its first instruction. */
	if (sv->go >= 0) {
		char c = 0;
		close(sv->go_w);
		while (read(sv->go, &c, 1) < 0 && errno == EINTR)
			;
		if (c != 'g')
			_exit(RUN_EXIT_CANNOT);
		close(sv->go);
	}
	prog_exec(p, argv);
}

/* Reports a death by signal the way a shell does, and gives 128 + sig. */
static int report_status(const char *prog, int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (!WIFSIGNALED(status))
		return RUN_EXIT_XOM;
	int sig = WTERMSIG(status);
	const char *name = sigabbrev_np(sig);
	/* Like bash, stay quiet about an interrupt and a broken pipe: the user
	 * or the pipeline caused them. */
	if (sig != SIGINT && sig != SIGPIPE) {
		const char *base = strrchr(prog, '/');
		fprintf(stderr, "xom: %s: killed by SIG%s%s\n", base ? base + 1 : prog,
		        name ? name : "?", WCOREDUMP(status) ? " (core dumped)" : "");
	}
	return RUN_EXIT_SIGNAL + sig;
}

/* Waits for a child that xom refused before its exec, and gives 126. */
static int refused(pid_t child)
{
	int st;

	while (waitpid(child, &st, __WALL) < 0 && errno == EINTR)
		;
	return RUN_EXIT_CANNOT;
}

/*
 * Seizes the static program's child, lets it exec, and protects it
 * (static.c).  Returns -1 to go on waiting (sr->traced: as its tracer),
 * or an exit status: the child was refused, or has already ended.
 */
static int trace_child(struct static_run *sr, pid_t child, const int go[2])
{
	char why[512];
	int seized;

	close(go[0]);
	sr->pid = child;
	seized = static_seize(child, why, sizeof why) == 0;
	if (!seized && (sr->so->o.require || !static_quiet(sr->so))) {
		say("%s: %s; %s", sr->prog, why,
		    sr->so->o.require ? "refused (require=1)" : "running it unprotected");
		if (sr->so->o.require) {
			close(go[1]);
			return refused(child);
		}
	}
	ssize_t w;
	while ((w = write(go[1], "g", 1)) < 0 && errno == EINTR)
		;
	close(go[1]);
	if (!seized)
		return -1;
	int r = static_start(sr);
	if (r < 0) {
		say("%s: lost the child while protecting it", sr->prog);
		kill(child, SIGKILL);
		refused(child);
		return RUN_EXIT_XOM;
	}
	if (r == RUN_EXIT_CANNOT)
		return refused(child);
	if (sr->done)
		return report_status(sr->prog, sr->status);
	return -1;
}

/*
 * Runs PROG and waits.  xom waits instead of exec'ing in place so that it
 * can say how PROG died: a blocked read of code ends in SIGSEGV, and the
 * shell above would otherwise print only "Segmentation fault".
 */
static int run_child(const struct prog *p, char **argv, struct static_run *sr)
{
	static const struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct saved sv = { .parent = getpid(), .go = -1 };
	int go[2] = { -1, -1 };
	sigset_t set;
	int status;

	if (sr && pipe2(go, O_CLOEXEC) != 0) {
		say("pipe: %s", strerror(errno));
		return RUN_EXIT_XOM;
	}
	sv.go = go[0];
	sv.go_w = go[1];

	forwarded_signals(&set);
	sigaddset(&set, SIGCHLD);
	/* Blocked from before the fork, the signals wait for the loop; the
	 * child has no handlers to inherit, and gets its mask back before
	 * exec. */
	sigprocmask(SIG_BLOCK, &set, &sv.mask);
	/* An inherited SIG_IGN for SIGCHLD would have the kernel reap PROG,
	 * and xom could not learn its status. */
	sigaction(SIGCHLD, &dfl, &sv.chld);
	fflush(NULL);
	pid_t child = fork();
	if (child < 0) {
		say("fork: %s", strerror(errno));
		return RUN_EXIT_XOM;
	}
	if (child == 0)
		exec_child(p, argv, &sv);
	if (sr) {
		int r = trace_child(sr, child, go);
		if (r >= 0)
			return r;
		if (!sr->traced)
			sr = NULL;
	}
	if (wait_forwarding(child, &set, &status, sr) != 0)
		return RUN_EXIT_XOM;
	return report_status(argv[0], status);
}

/* After xom itself has said that PROG runs unprotected, the programs that
 * PROG starts stay quiet, as they do after a door's line under
 * notice=once. */
static void mark_said(const struct static_opts *so)
{
	const struct pair set[] = { { "notice", "done" } };
	char opts[8192];

	if (so->o.notice == XOM_NOTICE_ONCE
	    && compose_options(opts, sizeof opts, set, 1) == 0)
		setenv("XOM_OPTIONS", opts, 1);
}

/*
 * A statically linked program: the doors cannot reach it, so xom applies
 * its plan from outside (static.c) when the machine has keys; the
 * environment is set all the same, for the dynamically linked programs it
 * runs.  Mode off runs it as it is; audit mode, which needs the runtime
 * inside the program, refuses it.
 */
static int run_static(const struct prog *p, char **argv)
{
	static struct static_opts so;
	struct static_run sr = { .so = &so, .prog = argv[0] };

	if (static_options(&so) != 0)
		return RUN_EXIT_XOM;
	char real[PATH_MAX];
	if (so.o.mode == XOM_OFF
	    || xom_opt_excludes(&so.o, realpath(p->path, real) ? real : p->path))
		return run_child(p, argv, NULL);
	if (so.o.mode == XOM_AUDIT) {
		say("%s: cannot run it under xom: it is statically linked, and audit mode needs the runtime inside the program",
		    argv[0]);
		return RUN_EXIT_CANNOT;
	}
	/* Pages that a profile keeps readable are not found for a static
	 * program yet: its pages stay execute-only, which may stop it. */
	if (so.o.profile)
		say("%s: the profile %s is not applied to statically linked programs",
		    argv[0], so.o.profile);
	if (so.why_not && so.o.backend != XOM_BACKEND_NONE) {
		if (so.o.require) {
			say("%s: cannot protect it: %s; refused (require=1)", argv[0], so.why_not);
			return RUN_EXIT_CANNOT;
		}
		if (!static_quiet(&so)) {
			say("%s: cannot protect it: %s; running it unprotected", argv[0],
			    so.why_not);
			mark_said(&so);
		}
		return run_child(p, argv, NULL);
	}
	return run_child(p, argv, &sr);
}

int cmd_run(int argc, char **argv)
{
	struct run_opts ro = { 0 };
	struct prog p;
	int r;

	if ((r = parse_run(argc, argv, &ro)) >= 0)
		return r;
	argv += optind;
	if ((r = prog_find(argv[0], &p)) != 0)
		return r;
	if ((r = set_env(&ro, p.path)) != 0)
		return r < 0 ? RUN_EXIT_XOM : r;
	if (!p.is_static)
		return run_child(&p, argv, NULL);
	return run_static(&p, argv);
}
