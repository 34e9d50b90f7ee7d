/*
 * xom.c - the xom command: one front door to the runtime (xom run), the
 * scanner (xom scan), the machine (xom check) and a running process
 * (xom status).
 *
 * This is an ordinary program, not code that runs inside a host process, so
 * it uses stdio freely.  Exit status: 64 for a usage error everywhere; the
 * other codes are listed per subcommand in cmd/xom.1.
 */
#include <cpuid.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../scan/xom_scan.h"

#define XOM_VERSION "0.1.0"

enum {
	EX_USAGE_ = 64,         /* bad command line, in every subcommand */
	EX_XOM = 125,           /* xom run itself failed (libraries, fork) */
	EX_CANNOT = 126,        /* PROG exists but cannot run under xom */
	EX_NOTFOUND = 127,      /* PROG not found */
};

static const char usage_main[] =
	"usage: xom COMMAND [ARGS...]\n"
	"\n"
	"Makes the code of dynamically linked x86-64 programs execute-only with\n"
	"Intel memory protection keys, so that a memory-read bug cannot read it.\n"
	"\n"
	"Commands:\n"
	"  run [OPTIONS] -- PROG [ARGS...]   run PROG with its code execute-only\n"
	"  scan [--json | --map] FILE...     show which code pages can be protected\n"
	"  check                             can this machine enforce execute-only?\n"
	"  status PID | --self               which code of a process is protected\n"
	"\n"
	"  xom COMMAND --help    help for one command\n"
	"  xom --version         the version\n"
	"\n"
	"The runtime reads XOM_OPTIONS (see xom(1)).\n";

static const char usage_run[] =
	"usage: xom run [OPTIONS] [--] PROG [ARGS...]\n"
	"\n"
	"Runs PROG (looked up in PATH) with libxom.so preloaded, and with the\n"
	"libxom-audit.so audit module too under --audit, and exits with PROG's\n"
	"exit status.  A death by signal is reported on stderr and gives\n"
	"128 + the signal number.\n"
	"\n"
	"Options:\n"
	"  --audit              add the LD_AUDIT module (also protects\n"
	"                       libraries that libc loads itself, e.g. NSS, iconv)\n"
	"  --mode MODE          enforce (default): a read of protected code kills\n"
	"                       the program; audit: log the read and go on;\n"
	"                       off: leave the program alone\n"
	"  --profile FILE       pages listed in FILE stay readable; audit mode\n"
	"                       appends the pages that were read\n"
	"  --require            refuse to run PROG when it cannot be protected\n"
	"  -v, --verbose        say what is set up; repeat for more detail\n"
	"  -h, --help           this text\n"
	"\n"
	"Other XOM_OPTIONS keys already in the environment are kept.\n"
	"Exit status: PROG's status; 128+N when PROG died by signal N; 64 usage;\n"
	"125 xom failed (e.g. its libraries are missing); 126 PROG cannot run\n"
	"under xom (statically linked, set-user-ID or set-group-ID, file\n"
	"capabilities, not executable); 127 PROG not found.\n";

static const char usage_check[] =
	"usage: xom check\n"
	"\n"
	"Says, one line each, whether execute-only code can be enforced here:\n"
	"the CPU's PKU and OSPKE flags, pkey_alloc, the glibc version, the free\n"
	"protection keys, the runtime libraries and the plan cache.\n"
	"Exit status: 0 enforcement works here, 1 it does not, 64 usage.\n";

static const char usage_status[] =
	"usage: xom status PID | --self\n"
	"\n"
	"Reads /proc/PID/smaps and prints, for each mapped file with code, how\n"
	"many code pages are execute-only (mapped --x with a protection key) and\n"
	"how many are still readable.\n"
	"Exit status: 0 shown, 1 the process cannot be read, 64 usage.\n";

static const char usage_scan[] =
	"usage: xom scan [--json | --map] FILE...\n"
	"\n"
	"Runs the scanner, xom-scan, on each FILE: the same output and exit\n"
	"status (0 all files analysed, 2 some file could not be, 64 usage).\n";

static int verbose;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("xom: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fputs("xom: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	/* The first line of the usage is the reminder; --help has the rest. */
	fprintf(stderr, "\n%.*s\n", (int)strcspn(usage, "\n"), usage);
	return EX_USAGE_;
}

static int is_help(const char *a)
{
	return !strcmp(a, "-h") || !strcmp(a, "--help");
}

/* ---- where xom's own files are ---------------------------------------- */

/*
 * The directory that holds this program.  In a build tree the libraries lie
 * beside it; in an installation they are in ../lib/xom.
 */
static const char *self_dir(void)
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

/* Finds one of xom's files; returns 1 and its path in out, or 0. */
static int find_own(const char *name, char *out, size_t len)
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

/* ---- xom run ---------------------------------------------------------- */

/* Looks PROG up the way execvp does; returns 0 and the path, or an errno. */
static int resolve_prog(const char *prog, char *out, size_t len)
{
	if (strchr(prog, '/')) {
		if (strlen(prog) >= len)
			return ENAMETOOLONG;
		strcpy(out, prog);
		return access(out, F_OK) == 0 ? 0 : errno;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int err = ENOENT;
	for (const char *p = path; ; ) {
		const char *e = strchrnul(p, ':');
		size_t dl = (size_t)(e - p);
		int n = snprintf(out, len, "%.*s%s%s", (int)dl, p,
		                 dl ? "/" : "", prog);
		if (n > 0 && (size_t)n < len) {
			struct stat st;
			if (stat(out, &st) == 0) {
				if (S_ISREG(st.st_mode) && access(out, X_OK) == 0)
					return 0;
				/* Found but not runnable: say so if nothing
				 * later in PATH is, as a shell does. */
				err = EACCES;
			}
		}
		if (!*e)
			break;
		p = e + 1;
	}
	return err;
}

/*
 * Decides whether the dynamic linker will honour LD_PRELOAD for the file at
 * path.  Returns NULL if so, or why not.  depth bounds the "#!" chain: the
 * kernel runs a script's interpreter, so that is the file that matters.
 */
static const char *why_unprotectable(const char *path, int depth)
{
	static char why[PATH_MAX + 64];
	struct stat st;

	if (stat(path, &st) != 0) {
		snprintf(why, sizeof why, "%s", strerror(errno));
		return why;
	}
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (access(path, X_OK) != 0)
		return "not executable";
	/* In secure-execution mode the dynamic linker ignores LD_PRELOAD and
	 * LD_AUDIT entries with a slash, so xom could not reach the program. */
	if (st.st_mode & (S_ISUID | S_ISGID))
		return st.st_mode & S_ISUID
			? "set-user-ID programs run in secure-execution mode, where the dynamic linker ignores LD_PRELOAD"
			: "set-group-ID programs run in secure-execution mode, where the dynamic linker ignores LD_PRELOAD";
	if (getxattr(path, "security.capability", NULL, 0) > 0)
		return "programs with file capabilities run in secure-execution mode, where the dynamic linker ignores LD_PRELOAD";

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* Execute-only files cannot be inspected; let exec decide. */
		return NULL;
	}
	unsigned char buf[4096];
	ssize_t n = pread(fd, buf, sizeof buf, 0);
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		close(fd);
		if (depth > 4)
			return "too many levels of #! interpreters";
		buf[n == (ssize_t)sizeof buf ? n - 1 : n] = 0;
		char *s = (char *)buf + 2;
		s += strspn(s, " \t");
		s[strcspn(s, " \t\n")] = 0;
		if (!*s)
			return "a #! script without an interpreter";
		const char *w = why_unprotectable(s, depth + 1);
		if (w && w != why) {
			snprintf(why, sizeof why, "its interpreter %s: %s", s, w);
			return why;
		}
		return w;
	}

	Elf64_Ehdr eh;
	if (n < (ssize_t)sizeof eh) {
		close(fd);
		return "not an ELF executable";
	}
	memcpy(&eh, buf, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		close(fd);
		return "not an ELF executable or #! script";
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		close(fd);
		return "not an x86-64 ELF file";
	}
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0
	    || eh.e_phnum > 4096) {
		close(fd);
		return "its ELF program headers are malformed";
	}
	int interp = 0;
	for (unsigned i = 0; i < eh.e_phnum && !interp; i++) {
		Elf64_Phdr ph;
		off_t off = (off_t)eh.e_phoff + (off_t)i * (off_t)sizeof ph;
		if (eh.e_phoff > (uint64_t)INT64_MAX / 2
		    || pread(fd, &ph, sizeof ph, off) != (ssize_t)sizeof ph) {
			close(fd);
			return "its ELF program headers are malformed";
		}
		interp = ph.p_type == PT_INTERP;
	}
	close(fd);
	if (!interp)
		return "it is statically linked (no PT_INTERP): no dynamic linker runs, so LD_PRELOAD cannot reach it";
	return NULL;
}

/* Appends item to a ':'-separated list in buf (capacity len); 0 or -1. */
static int list_add(char *buf, size_t len, const char *item)
{
	size_t used = strlen(buf), il = strlen(item);

	if (used + il + 2 > len)
		return -1;
	if (used)
		buf[used++] = ':';
	memcpy(buf + used, item, il + 1);
	return 0;
}

/*
 * Builds the child's XOM_OPTIONS: the user's pairs, in order, minus the keys
 * that the command line sets, then the command line's.  Returns 0 or -1.
 */
static int compose_options(char *out, size_t len, const char *const set[][2],
                           size_t nset)
{
	const char *env = getenv("XOM_OPTIONS");
	char *copy = strdup(env ? env : "");

	if (!copy)
		return -1;
	out[0] = 0;
	for (char *s = copy, *next; s; s = next) {
		next = strchr(s, ':');
		if (next)
			*next++ = 0;
		if (!*s)
			continue;
		size_t kl = strcspn(s, "=");
		int overridden = 0;
		for (size_t i = 0; i < nset; i++)
			if (set[i][0] && strlen(set[i][0]) == kl
			    && !strncmp(s, set[i][0], kl))
				overridden = 1;
		if (!overridden && list_add(out, len, s) != 0) {
			free(copy);
			return -1;
		}
	}
	free(copy);
	for (size_t i = 0; i < nset; i++) {
		char pair[PATH_MAX + 32];
		if (!set[i][0])
			continue;
		snprintf(pair, sizeof pair, "%s=%s", set[i][0], set[i][1]);
		if (list_add(out, len, pair) != 0)
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

static pid_t child_pid;

/* Termination requests for xom are meant for the program it runs. */
static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* Reports a death by signal the way a shell does, and gives 128 + sig. */
static int report_status(const char *prog, int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (!WIFSIGNALED(status))
		return EX_XOM;
	int sig = WTERMSIG(status);
	const char *name = sigabbrev_np(sig);
	/* Like bash, stay quiet about an interrupt and a broken pipe: the user
	 * or the pipeline caused them. */
	if (sig != SIGINT && sig != SIGPIPE) {
		const char *base = strrchr(prog, '/');
		fprintf(stderr, "xom: %s: killed by SIG%s%s\n", base ? base + 1 : prog,
		        name ? name : "?", WCOREDUMP(status) ? " (core dumped)" : "");
	}
	return 128 + sig;
}

static int cmd_run(int argc, char **argv)
{
	int audit = 0, require = 0, i;
	const char *mode = NULL, *profile = NULL;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (is_help(a)) {
			fputs(usage_run, stdout);
			return 0;
		} else if (!strcmp(a, "--audit")) {
			audit = 1;
		} else if (!strcmp(a, "--require")) {
			require = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose++;
		} else if (!strcmp(a, "-vv")) {
			verbose += 2;
		} else if (!strcmp(a, "--mode") || !strncmp(a, "--mode=", 7)) {
			mode = a[6] ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
			if (!mode)
				return usage_error(usage_run, "run: --mode needs a value");
			if (strcmp(mode, "enforce") && strcmp(mode, "audit")
			    && strcmp(mode, "off"))
				return usage_error(usage_run, "run: --mode must be enforce, audit or off, not '%s'", mode);
		} else if (!strcmp(a, "--profile") || !strncmp(a, "--profile=", 10)) {
			profile = a[9] ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
			if (!profile || !*profile)
				return usage_error(usage_run, "run: --profile needs a file");
			if (strchr(profile, ':'))
				return usage_error(usage_run, "run: the profile path cannot contain ':' (XOM_OPTIONS separates keys with it)");
		} else {
			return usage_error(usage_run, "run: unknown option '%s'", a);
		}
	}
	if (i >= argc)
		return usage_error(usage_run, "run: no program given");
	const char *prog = argv[i];
	char **pargv = argv + i;

	char path[PATH_MAX];
	int err = resolve_prog(prog, path, sizeof path);
	if (err) {
		say("%s: %s", prog, err == ENOENT ? "command not found" : strerror(err));
		return err == ENOENT ? EX_NOTFOUND : EX_CANNOT;
	}
	const char *why = why_unprotectable(path, 0);
	if (why) {
		say("%s: cannot run it under xom: %s", prog, why);
		return EX_CANNOT;
	}

	/* With --audit the preload library comes along too: the audit module
	 * does the protecting, and the preload library's sigaction() wrapper
	 * keeps xom's SIGSEGV handler first when the program installs its own
	 * (the audit module alone cannot interpose on the program's calls). */
	char lib[PATH_MAX], plib[PATH_MAX];
	const char *libname = audit ? "libxom-audit.so" : "libxom.so";
	if (!find_own(libname, lib, sizeof lib) ||
	    !find_own("libxom.so", plib, sizeof plib)) {
		say("cannot find %s beside %s or in %s/../lib/xom",
		    find_own(libname, lib, sizeof lib) ? "libxom.so" : libname,
		    self_dir(), self_dir());
		return EX_XOM;
	}

	char vbuf[16];
	snprintf(vbuf, sizeof vbuf, "%d", verbose);
	const char *const set[][2] = {
		{ mode ? "mode" : NULL, mode },
		{ profile ? "profile" : NULL, profile },
		{ require ? "require" : NULL, "1" },
		{ verbose ? "verbose" : NULL, vbuf },
	};
	char opts[8192];
	if (compose_options(opts, sizeof opts, set, sizeof set / sizeof set[0]) != 0) {
		say("XOM_OPTIONS is too long");
		return EX_XOM;
	}
	if (prepend_env("LD_PRELOAD", plib) != 0 ||
	    (audit && prepend_env("LD_AUDIT", lib) != 0))
		return EX_XOM;
	if (opts[0])
		setenv("XOM_OPTIONS", opts, 1);
	else
		unsetenv("XOM_OPTIONS");
	if (verbose)
		say("running %s with LD_PRELOAD=%s%s%s XOM_OPTIONS=%s", path,
		    getenv("LD_PRELOAD"), audit ? " LD_AUDIT=" : "",
		    audit ? getenv("LD_AUDIT") : "", opts);

	/* xom waits instead of exec'ing in place so that it can say how the
	 * program died: a blocked read of code ends in SIGSEGV, and the shell
	 * above would otherwise print only "Segmentation fault". */
	struct sigaction ign = { .sa_handler = SIG_IGN }, fwd = { .sa_handler = forward_signal };
	struct sigaction old_int, old_quit;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	fflush(NULL);
	child_pid = fork();
	if (child_pid < 0) {
		say("fork: %s", strerror(errno));
		return EX_XOM;
	}
	if (child_pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		execv(path, pargv);
		int e = errno;
		say("%s: %s", prog, strerror(e));
		_exit(e == ENOENT ? EX_NOTFOUND : EX_CANNOT);
	}
	sigaction(SIGTERM, &fwd, NULL);
	sigaction(SIGHUP, &fwd, NULL);
	int status;
	while (waitpid(child_pid, &status, 0) < 0) {
		if (errno != EINTR) {
			say("waitpid: %s", strerror(errno));
			return EX_XOM;
		}
	}
	return report_status(prog, status);
}

/* ---- xom scan --------------------------------------------------------- */

static int cmd_scan(int argc, char **argv)
{
	char tool[PATH_MAX];

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (is_help(argv[i])) {
			fputs(usage_scan, stdout);
			return 0;
		}
	if (!find_own("xom-scan", tool, sizeof tool)) {
		say("cannot find xom-scan beside %s or in %s/../lib/xom",
		    self_dir(), self_dir());
		return 2;
	}
	/* The scanner is its own program so that its output and exit status
	 * stay identical whichever name runs it. */
	argv[0] = tool;
	fflush(NULL);
	execv(tool, argv);
	say("%s: %s", tool, strerror(errno));
	return 2;
}

/* ---- xom check -------------------------------------------------------- */

static int line_ok = 1;

static void check_line(int good, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check_line(int good, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%-12s %s  ", what, good > 0 ? "ok  " : good == 0 ? "FAIL" : "note");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (good == 0)
		line_ok = 0;
}

/* The plan cache folder, as the runtime chooses it (loader/core.c). */
static const char *cache_dir(char *buf, size_t len)
{
	const char *opts = getenv("XOM_OPTIONS");

	if (opts) {
		const char *p = opts, *hit = NULL;
		/* The last cache= wins, as in the runtime. */
		while ((p = strstr(p, "cache=")) != NULL) {
			if (p == opts || p[-1] == ':')
				hit = p + 6;
			p += 6;
		}
		if (hit) {
			size_t n = strcspn(hit, ":");
			if (n == 3 && !strncmp(hit, "off", 3))
				return NULL;
			snprintf(buf, len, "%.*s", (int)n, hit);
			return buf;
		}
	}
	const char *base = getenv("XDG_CACHE_HOME");
	if (base && base[0] == '/') {
		snprintf(buf, len, "%s/xom", base);
		return buf;
	}
	base = getenv("HOME");
	if (!base || base[0] != '/')
		return "";
	snprintf(buf, len, "%s/.cache/xom", base);
	return buf;
}

static void check_cache(void)
{
	char buf[PATH_MAX];
	const char *dir = cache_dir(buf, sizeof buf);
	struct stat st;

	if (!dir) {
		check_line(-1, "cache", "off (cache=off in XOM_OPTIONS): every object is scanned at every start");
		return;
	}
	if (!*dir) {
		check_line(-1, "cache", "none: neither XDG_CACHE_HOME nor HOME is an absolute path; every start rescans");
		return;
	}
	if (lstat(dir, &st) != 0) {
		check_line(errno == ENOENT ? 1 : -1, "cache", "%s: %s", dir,
		           errno == ENOENT ? "not there yet (the first run creates it, mode 0700)"
		                           : strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		check_line(-1, "cache", "%s: not a directory, so plans cannot be cached", dir);
		return;
	}
	unsigned entries = 0;
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL)
			if (e->d_name[0] != '.')
				entries++;
		closedir(d);
	}
	int mine = st.st_uid == geteuid();
	int mode_ok = (st.st_mode & 07777) == 0700;
	check_line(mine && mode_ok ? 1 : -1, "cache",
	           "%s: owner uid %u%s, mode %04o%s, %u entr%s%s", dir,
	           (unsigned)st.st_uid, mine ? " (you)" : " (NOT you)",
	           (unsigned)(st.st_mode & 07777), mode_ok ? "" : " (should be 0700)",
	           entries, entries == 1 ? "y" : "ies",
	           mine && mode_ok ? "" : "; the runtime will not trust it");
}

static int cmd_check(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			fputs(usage_check, stdout);
			return 0;
		}
		return usage_error(usage_check, "check: unknown argument '%s'", argv[i]);
	}

	unsigned a, b, c = 0, d, max = __get_cpuid_max(0, NULL);
	if (max >= 7)
		__cpuid_count(7, 0, a, b, c, d);
	(void)a; (void)b; (void)d;
	int pku = (c >> 3) & 1, ospke = (c >> 4) & 1;
	check_line(pku, "cpu pku", pku ? "yes: the CPU has protection keys (CPUID.7.0:ECX bit 3)"
	           : "no: the CPU has no protection keys (CPUID.7.0:ECX bit 3 is clear); most cloud VMs hide them");
	check_line(ospke, "cpu ospke", ospke ? "yes: the kernel has enabled protection keys (CR4.PKE)"
	           : pku ? "no: the kernel has not enabled protection keys (booted with nopku?)"
	                 : "no: the kernel cannot enable protection keys without pku");

	int key = pkey_alloc(0, PKEY_DISABLE_ACCESS);
	int alloc_errno = errno;
	if (key >= 0)
		check_line(1, "pkey_alloc", "works (got key %d)", key);
	else
		check_line(0, "pkey_alloc", "fails: %s", strerror(alloc_errno));

	check_line(1, "glibc", "%s %s", gnu_get_libc_version(), gnu_get_libc_release());

	if (key >= 0) {
		/* Keys are a per-process budget of 15 (key 0 is the default);
		 * count by taking them all, then give them back. */
		int keys[16], n = 0;
		keys[n++] = key;
		while (n < 16 && (keys[n] = pkey_alloc(0, 0)) >= 0)
			n++;
		for (int i = 0; i < n; i++)
			pkey_free(keys[i]);
		check_line(1, "free keys", "%d of 15 in a new process (xom needs 1)", n);
	} else {
		check_line(0, "free keys", "none: pkey_alloc fails");
	}

	char lib[PATH_MAX];
	int have = find_own("libxom.so", lib, sizeof lib);
	check_line(have, "libxom.so", "%s", have ? lib : "not found beside xom or in ../lib/xom");
	have = find_own("libxom-audit.so", lib, sizeof lib);
	check_line(have, "audit module", "%s", have ? lib : "not found beside xom or in ../lib/xom");
	have = find_own("xom-plan", lib, sizeof lib);
	check_line(have, "xom-plan", "%s", have ? lib : "not found: the runtime cannot scan what is not cached");

	check_cache();

	if (line_ok)
		printf("verdict      ok    xom can make code execute-only here\n");
	else
		printf("verdict      FAIL  xom cannot enforce execute-only code here: %s\n",
		       !pku ? "the CPU has no pku" : !ospke ? "the kernel has not enabled ospke"
		       : key < 0 ? "pkey_alloc fails" : "the runtime is not installed");
	return line_ok ? 0 : 1;
}

/* ---- xom status ------------------------------------------------------- */

struct obj_pages {
	char name[PATH_MAX];
	unsigned long xo, readable;
	unsigned keys;          /* bit k: some --xp mapping has key k */
};

static int cmd_status(int argc, char **argv)
{
	const char *who = NULL;

	for (int i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			fputs(usage_status, stdout);
			return 0;
		}
		if (who)
			return usage_error(usage_status, "status: one process at a time");
		if (!strcmp(argv[i], "--self"))
			who = "self";
		else if (argv[i][strspn(argv[i], "0123456789")] == 0 && argv[i][0])
			who = argv[i];
		else
			return usage_error(usage_status, "status: '%s' is not a process ID", argv[i]);
	}
	if (!who)
		return usage_error(usage_status, "status: which process? (PID or --self)");

	char path[64], line[PATH_MAX + 256];
	snprintf(path, sizeof path, "/proc/%s/smaps", who);
	FILE *f = fopen(path, "re");
	if (!f) {
		say("%s: %s", path, strerror(errno));
		return 1;
	}
	struct obj_pages *objs = NULL;
	size_t nobj = 0;
	struct obj_pages *cur = NULL;
	unsigned long cur_pages = 0;
	int cur_xo = 0, saw_key_field = 0, pending = 0;
	long page = sysconf(_SC_PAGESIZE);

	/* A mapping's key comes after its header line, so each mapping is
	 * counted when the next header or the end arrives. */
	for (;;) {
		int eof = !fgets(line, sizeof line, f);
		unsigned long start, end;
		char perms[8];
		int pos = 0;
		int header = !eof && sscanf(line, "%lx-%lx %7s %*s %*s %*s %n",
		                            &start, &end, perms, &pos) == 3;
		if (!eof && !header) {
			unsigned k;
			if (sscanf(line, "ProtectionKey: %u", &k) == 1) {
				saw_key_field = 1;
				if (pending && cur_xo && k)
					cur->keys |= 1u << (k & 15);
				else if (pending && cur_xo)
					cur_xo = 0;   /* --x without a key stays readable on x86 */
			}
			continue;
		}
		if (pending) {
			if (cur_xo && saw_key_field)
				cur->xo += cur_pages;
			else
				cur->readable += cur_pages;
			pending = 0;
		}
		if (eof)
			break;
		if (perms[2] != 'x')
			continue;
		const char *name = line + pos;
		line[pos + (int)strcspn(line + pos, "\n")] = 0;
		if (!*name)
			name = "[anonymous]";
		size_t j;
		for (j = 0; j < nobj && strcmp(objs[j].name, name); j++)
			;
		if (j == nobj) {
			struct obj_pages *n = realloc(objs, (nobj + 1) * sizeof *objs);
			if (!n) {
				say("out of memory");
				return 1;
			}
			objs = n;
			memset(&objs[nobj], 0, sizeof objs[nobj]);
			snprintf(objs[nobj].name, sizeof objs[nobj].name, "%s", name);
			nobj++;
		}
		cur = &objs[j];
		cur_pages = (end - start) / (unsigned long)page;
		/* Execute-only needs both no read permission and a key whose
		 * access-disable bit is set; without the key x86 lets every
		 * executable page be read. */
		cur_xo = perms[0] == '-';
		pending = 1;
	}
	fclose(f);

	unsigned long txo = 0, tread = 0;
	char comm[64] = "?";
	snprintf(path, sizeof path, "/proc/%s/comm", who);
	if ((f = fopen(path, "re")) != NULL) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	printf("process %s (%s)\n", strcmp(who, "self") ? who : "self", comm);
	printf("%10s %10s  %-6s %s\n", "exec-only", "readable", "keys", "object (code pages)");
	for (size_t j = 0; j < nobj; j++) {
		char keys[40] = "-";
		size_t kl = 0;
		for (unsigned k = 1; k < 16; k++)
			if (objs[j].keys & (1u << k))
				kl += (size_t)snprintf(keys + kl, sizeof keys - kl, "%s%u",
				                       kl ? "," : "", k);
		printf("%10lu %10lu  %-6s %s\n", objs[j].xo, objs[j].readable, keys,
		       objs[j].name);
		txo += objs[j].xo;
		tread += objs[j].readable;
	}
	printf("total: %lu code pages execute-only, %lu readable, in %zu objects\n",
	       txo, tread, nobj);
	if (!saw_key_field)
		printf("note: this kernel shows no ProtectionKey in smaps: it does not use protection keys, so no code is execute-only\n");
	free(objs);
	return 0;
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage_error(usage_main, "no command given");
	const char *cmd = argv[1];

	if (is_help(cmd) || !strcmp(cmd, "help")) {
		fputs(usage_main, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("xom %s (scanner version %d)\n", XOM_VERSION, XOM_SCAN_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "scan"))
		return cmd_scan(argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(cmd, "status"))
		return cmd_status(argc - 1, argv + 1);
	if (cmd[0] == '-')
		return usage_error(usage_main, "unknown option '%s'", cmd);
	return usage_error(usage_main, "unknown command '%s'", cmd);
}
