/*
 * system.c - xom enable --system and xom disable --system: xom for every
 * dynamically linked program, through the dynamic linker's
 * /etc/ld.so.preload.
 *
 * The library listed is the libxom.so this xom belongs to (beside it in a
 * build tree, ../lib/xom/libxom.so in an installation: find_own), by its
 * real path.  Before listing it, enable checks that every program could load
 * it: the file and every folder above it are root's and writable by nobody
 * else (every process, set-user-ID ones included, will map it), and a
 * dynamically linked cat(1) run with it preloaded maps it, prints its own
 * /proc/self/maps and exits 0, with no line from the dynamic linker.  A
 * line from xom itself (no protection keys, say) would then be printed by
 * every process on the machine, so it stops enable too, unless --force;
 * and so does the runtime's refusal of cat (a require=1 rule of
 * /etc/xom.conf where xom cannot protect), which every program the rule
 * matches would meet.
 *
 * The file is rewritten whole, by rename of a temporary file in the same
 * folder, so that a program starting meanwhile reads either the old list
 * or the new one.  Other entries, comments and the line layout are kept;
 * disable removes only the entries whose base name is libxom.so, and the
 * file itself when nothing but white space is left (the state before
 * enable on a machine that had no such file).
 *
 * --file PATH works on another file named ld.so.preload (a chroot's or a
 * container image's /etc, or a test's), never on anything else.  These
 * are root's commands; the runtime reads no such option.
 */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../formats/xom_plan.h"
#include "cmd.h"

#define PRELOAD_FILE "/etc/ld.so.preload"
#define PRELOAD_MAX (1 << 20)

const char enable_usage[] =
	"usage: xom enable --system [--force] [--file PATH]\n"
	"\n"
	"Lists libxom.so (the one installed with this xom) in /etc/ld.so.preload,\n"
	"so that the dynamic linker loads it into every dynamically linked\n"
	"program, set-user-ID ones included.  First checks that the library and\n"
	"every folder above it are root's alone, and that a dynamically linked\n"
	"cat runs with it preloaded and maps it; other entries of the file stay,\n"
	"and it is written by rename.  Root only.\n"
	"\n"
	"  --system     required: the change is for every program on the machine\n"
	"  --force      enable even when the test run prints xom: lines (for\n"
	"               example on a CPU without protection keys, where every\n"
	"               program would then print one), or is refused by a\n"
	"               require=1 rule of /etc/xom.conf (every program it\n"
	"               matches would be)\n"
	"  --file PATH  another file named ld.so.preload (a chroot's or an\n"
	"               image's /etc) instead of /etc/ld.so.preload\n"
	"\n"
	"Says on stderr what it did; running it again says \"already enabled\".\n"
	"Exit status: 0 enabled (or already), 1 a check failed, 2 the file\n"
	"could not be written or not root, 64 usage.\n";

const char disable_usage[] =
	"usage: xom disable --system [--file PATH]\n"
	"\n"
	"Removes xom's entries (those whose base name is libxom.so) from\n"
	"/etc/ld.so.preload and keeps the rest; removes the file when nothing\n"
	"but white space is left.  Written by rename.  Root only.\n"
	"\n"
	"Says on stderr what it did; running it again says \"already disabled\".\n"
	"Exit status: 0 disabled (or already), 2 the file could not be written\n"
	"or not root, 64 usage.\n";

struct sys_opts {
	int force;
	const char *file;
};

/* Returns -1 with o filled, or the exit status (help, usage). */
static int parse_system(int argc, char **argv, struct sys_opts *o, int enable)
{
	enum { OPT_SYSTEM = 256, OPT_FORCE, OPT_FILE };
	static const struct option longopts[] = {
		{ "system", no_argument, NULL, OPT_SYSTEM },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, system = 0;

	memset(o, 0, sizeof *o);
	o->file = PRELOAD_FILE;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': return show_help();
		case OPT_SYSTEM: system = 1; break;
		case OPT_FORCE:
			if (!enable)
				return usage_error("unknown option '--force'");
			o->force = 1;
			break;
		case OPT_FILE: o->file = optarg; break;
		default: return option_error(c, argv, longopts);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!system)
		return usage_error("--system is required: the change is for every program on this machine");
	const char *base = strrchr(o->file, '/');
	base = base ? base + 1 : o->file;
	if (strcmp(base, "ld.so.preload") != 0 || o->file[0] != '/')
		return usage_error("--file takes an absolute path to a file named ld.so.preload, not '%s'",
		                   o->file);
	if (geteuid() != 0) {
		say("%s --system: only root can change %s", enable ? "enable" : "disable",
		    o->file);
		return XOM_EXIT_ENV;
	}
	return -1;
}

/* ---- the file's text ------------------------------------------------------ */

struct text {
	char *s;
	size_t n;
	int exists;
	struct stat st;
};

/* Reads path into t (exists 0 when there is none).  0, or -1 after a line. */
static int read_text(const char *path, struct text *t)
{
	memset(t, 0, sizeof *t);
	if (lstat(path, &t->st) != 0) {
		if (errno == ENOENT)
			return (t->s = calloc(1, 1)) ? 0 : -1;
		say("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(t->st.st_mode)) {
		say("%s is not a regular file (a link?): leaving it alone", path);
		return -1;
	}
	if (t->st.st_size >= PRELOAD_MAX) {
		say("%s is larger than 1 MB: leaving it alone", path);
		return -1;
	}
	FILE *f = fopen(path, "re");
	if (!f || !(t->s = malloc((size_t)t->st.st_size + 1))) {
		say("cannot read %s: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	t->n = fread(t->s, 1, (size_t)t->st.st_size, f);
	int bad = ferror(f);
	fclose(f);
	if (bad || t->n != (size_t)t->st.st_size) {
		say("cannot read %s", path);
		return -1;
	}
	t->s[t->n] = 0;
	t->exists = 1;
	return 0;
}

/* The dynamic linker's separators: white space and ':'; '#' to the end of
 * the line is a comment.  Calls each(entry, len) for every entry; stops
 * early when each returns non-zero, and returns that. */
static int each_entry(const char *s, size_t n, const char **at, size_t *len,
                      int (*each)(const char *e, size_t len, const void *arg),
                      const void *arg)
{
	for (size_t i = 0; i < n;) {
		if (s[i] == '#') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (isspace((unsigned char)s[i]) || s[i] == ':') {
			i++;
			continue;
		}
		size_t j = i;
		while (j < n && !isspace((unsigned char)s[j]) && s[j] != ':' && s[j] != '#')
			j++;
		int r = each(s + i, j - i, arg);
		if (r) {
			if (at)
				*at = s + i, *len = j - i;
			return r;
		}
		i = j;
	}
	return 0;
}

static int is_path(const char *e, size_t len, const void *arg)
{
	const char *path = arg;
	return len == strlen(path) && !memcmp(e, path, len);
}

/* xom's own entries: any libxom.so, wherever it was installed. */
static int is_xom(const char *e, size_t len, const void *arg)
{
	(void)arg;
	static const char name[] = "libxom.so";
	size_t k = sizeof name - 1;
	return len >= k && !memcmp(e + len - k, name, k)
	       && (len == k || e[len - k - 1] == '/');
}

/* Writes text to path by rename of a temporary file beside it, owned as
 * the old file was (root's when there was none), mode 0644.  0, or -1
 * after a line. */
static int write_text(const char *path, const struct text *old,
                      const char *s, size_t n)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof tmp, "%s.xom-XXXXXX", path) >= (int)sizeof tmp) {
		say("%s: path too long", path);
		return -1;
	}
	int fd = mkstemp(tmp);
	if (fd < 0) {
		say("cannot write beside %s: %s", path, strerror(errno));
		return -1;
	}
	uid_t uid = old->exists ? old->st.st_uid : 0;
	gid_t gid = old->exists ? old->st.st_gid : 0;
	int ok = fchown(fd, uid, gid) == 0 && fchmod(fd, 0644) == 0;
	for (size_t done = 0; ok && done < n;) {
		ssize_t w = write(fd, s + done, n - done);
		if (w <= 0)
			ok = 0;
		else
			done += (size_t)w;
	}
	ok = ok && fsync(fd) == 0;
	int e = errno;
	if (close(fd) != 0 && ok)
		ok = 0, e = errno;
	if (ok && rename(tmp, path) != 0)
		ok = 0, e = errno;
	if (!ok) {
		unlink(tmp);
		say("cannot write %s: %s", path, strerror(e));
		return -1;
	}
	return 0;
}

/* ---- the checks before enabling ------------------------------------------ */

/* 1 when path is an ELF file with a PT_INTERP: a dynamically linked
 * program, which the dynamic linker will preload into. */
static int dynamic_program(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int found = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	if (fread(&eh, sizeof eh, 1, f) == 1 && !memcmp(eh.e_ident, ELFMAG, SELFMAG)
	    && eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof ph) {
		for (unsigned i = 0; i < eh.e_phnum && !found; i++) {
			if (fseek(f, (long)(eh.e_phoff + i * sizeof ph), SEEK_SET) != 0
			    || fread(&ph, sizeof ph, 1, f) != 1)
				break;
			found = ph.p_type == PT_INTERP;
		}
	}
	fclose(f);
	return found;
}

/* Runs "cat /proc/self/maps" with lib preloaded and an environment without
 * xom's or the dynamic linker's variables; out and err get what it wrote.
 * Returns its wait status, or -1. */
static int test_run(const char *cat, const char *lib, const char *out,
                    const char *err)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_TRUNC | O_CLOEXEC);
		int e = open(err, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(127);
		unsetenv("XOM_OPTIONS");
		unsetenv("LD_AUDIT");
		unsetenv("LD_LIBRARY_PATH");
		setenv("LD_PRELOAD", lib, 1);
		execl(cat, cat, "/proc/self/maps", (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* Prints up to a few lines of file path after a prefix; returns how many
 * lines it has. */
static int show_lines(const char *path, const char *prefix, int max)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (n++ < max)
			fprintf(stderr, "%s%s\n", prefix, line);
	}
	fclose(f);
	return n;
}

/* 1 when file f mentions lib as a whole word (a mapping's path). */
static int file_has(const char *path, const char *lib)
{
	char line[PATH_MAX + 128];
	int found = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		size_t n = strlen(line), k = strlen(lib);
		found = n >= k && !strcmp(line + n - k, lib);
	}
	fclose(f);
	return found;
}

/* 1 when file path has a line that starts with prefix. */
static int file_has_line(const char *path, const char *prefix)
{
	char line[1024];
	int found = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof line, f))
		found = !strncmp(line, prefix, strlen(prefix));
	fclose(f);
	return found;
}

/* The checks; 0 when lib may be listed, or the exit status after a line. */
static int check_library(const char *lib, int force)
{
	static const char *const cats[] = { "/usr/bin/cat", "/bin/cat" };
	char out[] = "/tmp/xom-enable-out-XXXXXX", err[] = "/tmp/xom-enable-err-XXXXXX";
	struct stat st;

	if (stat(lib, &st) != 0 || !S_ISREG(st.st_mode)) {
		say("enable: %s: not a file", lib);
		return XOM_EXIT_FAILED;
	}
	if (!root_alone(lib, &st)) {
		say("enable: %s: it or a folder above it is not root's alone; every program, set-user-ID ones included, would load it (install xom as root: make install)",
		    lib);
		return XOM_EXIT_FAILED;
	}
	const char *cat = NULL;
	for (size_t i = 0; i < sizeof cats / sizeof cats[0] && !cat; i++)
		if (dynamic_program(cats[i]))
			cat = cats[i];
	if (!cat) {
		say("enable: no dynamically linked cat (/usr/bin/cat, /bin/cat) to test %s with",
		    lib);
		return XOM_EXIT_FAILED;
	}
	int fo = mkstemp(out), fe = mkstemp(err);
	if (fo < 0 || fe < 0) {
		say("enable: cannot make a temporary file: %s", strerror(errno));
		if (fo >= 0)
			close(fo), unlink(out);
		if (fe >= 0)
			close(fe), unlink(err);
		return XOM_EXIT_ENV;
	}
	close(fo);
	close(fe);
	int rc = XOM_EXIT_OK;
	int ws = test_run(cat, lib, out, err);
	int mapped = file_has(out, lib);
	/* The runtime's own refusal (require=1 where it cannot protect, from
	 * /etc/xom.conf): every program it applies to would be refused so,
	 * shells and this command's callers included. */
	int refused = ws >= 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 126
	              && file_has_line(err, "xom: refusing to run: ");
	if (refused) {
		say("enable: %s with %s preloaded was refused (exit 126):", cat, lib);
		show_lines(err, "  | ", 5);
		if (!force) {
			say("enable: every program that require=1 applies to would be refused so, no new shell or login included; not enabling (--force to enable anyway; the way back is in xom(1), RECOVERY)");
			rc = XOM_EXIT_FAILED;
		} else {
			say("enable: --force: enabling all the same");
		}
	} else if (ws < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || !mapped) {
		if (ws >= 0 && WIFSIGNALED(ws))
			say("enable: %s with %s preloaded died by signal %d; not enabling",
			    cat, lib, WTERMSIG(ws));
		else if (ws >= 0 && WIFEXITED(ws) && WEXITSTATUS(ws) != 0)
			say("enable: %s with %s preloaded exited %d; not enabling", cat,
			    lib, WEXITSTATUS(ws));
		else
			say("enable: %s with %s preloaded did not map it; not enabling",
			    cat, lib);
		show_lines(err, "  | ", 5);
		rc = XOM_EXIT_FAILED;
	} else if (show_lines(err, "  | ", 0) > 0) {
		say("enable: %s with %s preloaded ran, but printed:", cat, lib);
		show_lines(err, "  | ", 5);
		if (!force) {
			say("enable: every program would print that; not enabling (--force to enable anyway)");
			rc = XOM_EXIT_FAILED;
		}
	} else {
		say("checked: %s runs with %s preloaded and maps it", cat, lib);
	}
	unlink(out);
	unlink(err);
	return rc;
}

/* ---- the commands ----------------------------------------------------------- */

int cmd_enable(int argc, char **argv)
{
	struct sys_opts o;
	struct text t;
	char lib[PATH_MAX];
	int r;

	if ((r = parse_system(argc, argv, &o, 1)) >= 0)
		return r;
	if (!find_own("libxom.so", lib, sizeof lib)) {
		say("enable: libxom.so not found beside %s or in %s/../lib/xom",
		    self_dir(), self_dir());
		return XOM_EXIT_FAILED;
	}
	if (read_text(o.file, &t) != 0)
		return XOM_EXIT_ENV;
	if (each_entry(t.s, t.n, NULL, NULL, is_path, lib)) {
		say("already enabled: %s lists %s", o.file, lib);
		free(t.s);
		return XOM_EXIT_OK;
	}
	const char *other;
	size_t olen;
	if (each_entry(t.s, t.n, &other, &olen, is_xom, NULL))
		say("note: %s already lists another libxom.so, %.*s: xom disable --system removes both",
		    o.file, (int)olen, other);
	if ((r = check_library(lib, o.force)) != 0) {
		free(t.s);
		return r;
	}
	/* The new entry on a line of its own at the end. */
	size_t n = t.n, cap = t.n + strlen(lib) + 3;
	char *s = malloc(cap);
	if (!s) {
		free(t.s);
		say("out of memory");
		return XOM_EXIT_ENV;
	}
	memcpy(s, t.s, n);
	if (n && s[n - 1] != '\n')
		s[n++] = '\n';
	n += (size_t)sprintf(s + n, "%s\n", lib);
	r = write_text(o.file, &t, s, n);
	free(s);
	free(t.s);
	if (r != 0)
		return XOM_EXIT_ENV;
	say("enabled: %s %s %s; programs started from now on load it (xom status --system shows them)",
	    o.file, t.exists ? "now lists" : "created, listing", lib);
	/* Under systemd, PID 1 and every service started before keep
	 * running without it: say how to bring them in. */
	if (!strcmp(o.file, PRELOAD_FILE) && access("/run/systemd/system", F_OK) == 0)
		say("systemd and the services already running stay unprotected until 'systemctl daemon-reexec' and a restart of each service");
	return XOM_EXIT_OK;
}

int cmd_disable(int argc, char **argv)
{
	struct sys_opts o;
	struct text t;
	int r;

	if ((r = parse_system(argc, argv, &o, 0)) >= 0)
		return r;
	if (read_text(o.file, &t) != 0)
		return XOM_EXIT_ENV;
	if (!each_entry(t.s, t.n, NULL, NULL, is_xom, NULL)) {
		say("already disabled: %s %s", o.file,
		    t.exists ? "lists no libxom.so" : "does not exist");
		free(t.s);
		return XOM_EXIT_OK;
	}
	/* Cut each of xom's entries out, and the line break after it when it
	 * had the line to itself. */
	char *s = malloc(t.n + 1);
	size_t n = 0;
	if (!s) {
		free(t.s);
		say("out of memory");
		return XOM_EXIT_ENV;
	}
	for (size_t i = 0; i < t.n;) {
		const char *e;
		size_t len;
		if (!each_entry(t.s + i, t.n - i, &e, &len, is_xom, NULL)) {
			memcpy(s + n, t.s + i, t.n - i);
			n += t.n - i;
			break;
		}
		size_t at = (size_t)(e - t.s);
		say("removed %.*s from %s", (int)len, e, o.file);
		memcpy(s + n, t.s + i, at - i);
		n += at - i;
		i = at + len;
		int alone = (n == 0 || s[n - 1] == '\n') && (i == t.n || t.s[i] == '\n');
		if (alone && i < t.n)
			i++;
	}
	s[n] = 0;
	int empty = 1;
	for (size_t i = 0; i < n && empty; i++)
		empty = isspace((unsigned char)s[i]) != 0;
	if (empty) {
		r = unlink(o.file) == 0 ? 0 : -1;
		if (r == 0)
			say("disabled: removed %s, which listed nothing else", o.file);
		else
			say("cannot remove %s: %s", o.file, strerror(errno));
	} else if ((r = write_text(o.file, &t, s, n)) == 0) {
		say("disabled: %s keeps its other entries; programs started from now on run without xom",
		    o.file);
	}
	free(s);
	free(t.s);
	return r == 0 ? XOM_EXIT_OK : XOM_EXIT_ENV;
}
