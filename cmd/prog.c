/*
 * prog.c - xom run's program: looked up as a shell looks it up, and checked
 * before the fork, so that a program that the runtime cannot reach is
 * refused with the reason instead of running unprotected in silence.
 *
 * The file that matters is the one the kernel runs: for a "#!" script its
 * interpreter, for a script without "#!" the /bin/sh that a shell would
 * run it with (execve fails with ENOEXEC), for an ELF program the dynamic
 * linker that reads LD_PRELOAD, or, for a statically linked one, the
 * program itself, which xom protects from outside.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cmd.h"
#include "exec.h"

/* What the check found; every verdict but RUNS comes with a reason. */
enum verdict {
	RUNS,
	BROKEN,         /* it cannot run at all, xom or not */
	REFUSED,        /* it runs, but out of the runtime's reach */
	NO_MAGIC,       /* neither ELF nor #!: vet_plain decides */
};

/* Where a shell puts a script that exec cannot run. */
#define SHELL "/bin/sh"

static enum verdict vet_file(const char *path, int depth, struct prog *p,
                             char *why, size_t len);

static enum verdict because(char *why, size_t len, enum verdict v,
                            const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static enum verdict because(char *why, size_t len, enum verdict v,
                            const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return v;
}

static const char *errno_text(int e)
{
	return e == ENOENT ? "no such file" : strerror(e);
}

/* A #! line: the kernel runs its interpreter, so that is what is checked. */
static enum verdict vet_script(const char *interp, int depth, struct prog *p,
                               char *why, size_t len)
{
	char sub[PATH_MAX + 256];

	if (depth >= MAX_INTERP_DEPTH)
		return because(why, len, BROKEN, "too many levels of #! interpreters");
	/* An empty #! line makes execve fail with ENOEXEC, and a shell runs
	 * the file with /bin/sh then. */
	if (!*interp)
		return NO_MAGIC;
	enum verdict v = vet_file(interp, depth + 1, p, sub, sizeof sub);
	if (v != RUNS)
		because(why, len, v, "its interpreter %s: %s", interp, sub);
	return v;
}

/* An ELF file: x86-64, and dynamically linked, so that a dynamic linker
 * runs and reads LD_PRELOAD. */
static enum verdict vet_elf(int fd, const unsigned char *buf, ssize_t n,
                            struct prog *p, char *why, size_t len)
{
	char interp[PATH_MAX];
	struct stat st;
	Elf64_Ehdr eh;

	if (n < (ssize_t)sizeof eh)
		return because(why, len, BROKEN, "its ELF header is cut short");
	memcpy(&eh, buf, sizeof eh);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return because(why, len, REFUSED, "not an x86-64 ELF file");
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0
	    || eh.e_phnum > 4096)
		return because(why, len, BROKEN, "its ELF program headers are malformed");
	switch (exec_pt_interp(fd, &eh, interp, sizeof interp)) {
	case -1:
		return because(why, len, BROKEN, "its ELF program headers are malformed");
	case 0:
		/* No dynamic linker runs, so LD_PRELOAD cannot reach it: xom
		 * protects it from outside (static.c). */
		p->is_static = 1;
		return RUNS;
	}
	if (stat(interp, &st) != 0)
		return because(why, len, BROKEN, "its dynamic linker %s: %s", interp,
		               errno_text(errno));
	return RUNS;
}

/* What bash calls a binary file: a NUL before the first newline in the
 * first 80 bytes.  Such a file is not a script for /bin/sh either. */
static int looks_binary(const unsigned char *buf, ssize_t n)
{
	for (ssize_t i = 0; i < n && i < 80; i++) {
		if (buf[i] == '\n')
			return 0;
		if (!buf[i])
			return 1;
	}
	return 0;
}

/* The file's mode: what makes exec fail, and what puts it out of reach of
 * LD_PRELOAD. */
static enum verdict vet_mode(const char *path, char *why, size_t len)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return because(why, len, BROKEN, "%s", errno_text(errno));
	if (S_ISDIR(st.st_mode))
		return because(why, len, BROKEN, "is a directory");
	if (!S_ISREG(st.st_mode))
		return because(why, len, BROKEN, "not a regular file");
	if (access(path, X_OK) != 0)
		return because(why, len, BROKEN, "not executable");
	/* In secure-execution mode the dynamic linker ignores LD_PRELOAD and
	 * LD_AUDIT entries with a slash, so xom could not reach the program. */
	if (st.st_mode & S_ISUID)
		return because(why, len, REFUSED, "set-user-ID programs run in secure-execution mode, where the dynamic linker ignores LD_PRELOAD");
	if (st.st_mode & S_ISGID)
		return because(why, len, REFUSED, "set-group-ID programs run in secure-execution mode, where the dynamic linker ignores LD_PRELOAD");
	if (getxattr(path, "security.capability", NULL, 0) > 0)
		return because(why, len, REFUSED, "programs with file capabilities run in secure-execution mode, where the dynamic linker ignores LD_PRELOAD");
	return RUNS;
}

/* A file that is neither ELF nor #!: exec fails with ENOEXEC, and a shell
 * (and xom) runs it with /bin/sh, so /bin/sh is what must be reachable. */
static enum verdict vet_plain(const unsigned char *buf, ssize_t n, int depth,
                              struct prog *p, char *why, size_t len)
{
	char sub[PATH_MAX + 256];

	/* The kernel does not fall back to a shell for an interpreter. */
	if (depth > 0)
		return because(why, len, BROKEN, "neither an ELF executable nor a #! script");
	if (looks_binary(buf, n))
		return because(why, len, BROKEN, "cannot execute binary file: neither ELF nor a script");
	p->as_script = 1;
	enum verdict v = vet_file(SHELL, depth + 1, p, sub, sizeof sub);
	if (v != RUNS)
		because(why, len, v, "it has no #! line, so %s runs it, and %s: %s",
		        SHELL, SHELL, sub);
	return v;
}

/* Checks the file that exec would run at path; depth counts #! levels. */
static enum verdict vet_file(const char *path, int depth, struct prog *p,
                             char *why, size_t len)
{
	char interp[EXEC_HEAD], arg[EXEC_HEAD];
	struct exec_head h;
	enum verdict v;

	if ((v = vet_mode(path, why, len)) != RUNS)
		return v;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	/* An execute-only file cannot be looked into; let exec decide. */
	if (fd < 0)
		return RUNS;
	switch (exec_head(fd, &h, interp, arg)) {
	case EXEC_SCRIPT:
		v = vet_script(interp, depth, p, why, len);
		break;
	case EXEC_ELF:
		v = vet_elf(fd, h.buf, h.n, p, why, len);
		break;
	default:
		v = NO_MAGIC;
	}
	close(fd);
	if (v == NO_MAGIC)
		v = vet_plain(h.buf, h.n, depth, p, why, len);
	return v;
}

int prog_search(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	int err = ENOENT;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *s = path;; s++) {
		size_t dl = strcspn(s, ":");
		int n = snprintf(out, len, "%.*s%s%s", (int)dl, s, dl ? "/" : "", name);
		struct stat st;
		if (n > 0 && (size_t)n < len && stat(out, &st) == 0) {
			if (S_ISREG(st.st_mode) && access(out, X_OK) == 0)
				return 0;
			/* Found but not runnable: say so if nothing later in
			 * PATH is, as a shell does. */
			err = EACCES;
		}
		s += dl;
		if (!*s)
			return err;
	}
}

int prog_find(const char *name, struct prog *p)
{
	char why[PATH_MAX + 256];
	enum verdict v;

	p->as_script = 0;
	p->is_static = 0;
	if (!*name) {
		say("the program name is empty");
		return RUN_EXIT_NOTFOUND;
	}
	/* A name with a slash is a path, as in a shell; only a bare name
	 * is a command to look up. */
	if (strchr(name, '/')) {
		if (strlen(name) >= sizeof p->path) {
			say("%s: %s", name, strerror(ENAMETOOLONG));
			return RUN_EXIT_CANNOT;
		}
		strcpy(p->path, name);
		if (access(p->path, F_OK) != 0) {
			int e = errno;
			say("%s: %s", name, errno_text(e));
			return e == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_CANNOT;
		}
	} else {
		int e = prog_search(name, p->path, sizeof p->path);
		if (e) {
			say("%s: %s", name, e == ENOENT ? "command not found" : strerror(e));
			return e == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_CANNOT;
		}
	}
	if ((v = vet_file(p->path, 0, p, why, sizeof why)) == RUNS)
		return 0;
	say("%s: %s%s", name, v == REFUSED ? "cannot run it under xom: " : "", why);
	return RUN_EXIT_CANNOT;
}

void prog_exec(const struct prog *p, char **argv)
{
	execv(p->path, argv);
	int e = errno;
	if (e == ENOEXEC && p->as_script) {
		size_t n = 0;
		while (argv[n])
			n++;
		/* "sh FILE ARGS...": argv[1..] and its NULL follow FILE. */
		char **sh = calloc(n + 2, sizeof *sh);
		if (sh) {
			sh[0] = (char *)SHELL;
			sh[1] = (char *)p->path;
			memcpy(sh + 2, argv + 1, n * sizeof *sh);
			execv(SHELL, sh);
		}
		e = errno;
	}
	say("%s: %s", argv[0], strerror(e));
	_exit(e == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_CANNOT);
}
