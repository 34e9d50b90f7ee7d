/*
 * scan.c - xom scan: the scanner, xom-scan, under the xom command's name.
 * The scanner is its own program so that its output and exit status stay
 * the same whichever name runs it.  xom adds one thing, on stderr: that a
 * statically linked program's share is not reached by the doors.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"

const char scan_usage[] =
	"usage: xom scan [--json | --map] FILE...\n"
	"\n"
	"Runs the scanner, xom-scan, on each FILE: which pages of its executable\n"
	"segments hold only instructions (and can be made execute-only), which\n"
	"hold bytes that code reads, and why.  --map prints one character per\n"
	"page, --json the whole code map.  The output, the other options and\n"
	"the exit status are xom-scan's (xom-scan --help).  For a statically\n"
	"linked program xom adds a line on stderr: no dynamic linker loads xom\n"
	"into it, and only `xom run` applies its plan, from outside.\n";

/* Whether path is a statically linked program: no PT_INTERP, and either
 * not position-independent or a static PIE (DF_1_PIE), not a library. */
static int static_program(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	Elf64_Ehdr eh;
	Elf64_Phdr ph, dyn = { 0 };
	int interp = 0, pie = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh
	    || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64
	    || eh.e_phentsize != sizeof ph || eh.e_phnum > 4096
	    || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		close(fd);
		return 0;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			break;
		interp |= ph.p_type == PT_INTERP;
		if (ph.p_type == PT_DYNAMIC)
			dyn = ph;
	}
	for (uint64_t o = 0; !interp && eh.e_type == ET_DYN && o + sizeof(Elf64_Dyn) <= dyn.p_filesz
	     && o < (1u << 20); o += sizeof(Elf64_Dyn)) {
		Elf64_Dyn d;
		if (pread(fd, &d, sizeof d, (off_t)(dyn.p_offset + o)) != (ssize_t)sizeof d
		    || d.d_tag == DT_NULL)
			break;
		pie |= d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_PIE);
	}
	close(fd);
	return !interp && (eh.e_type == ET_EXEC || pie);
}

int cmd_scan(int argc, char **argv)
{
	char tool[PATH_MAX];

	/* Only --help is xom's own; the scanner reads the other options.
	 * getopt_long is not used here: it would have to know them all, and
	 * they belong to xom-scan. */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return show_help();
	if (!find_own("xom-scan", tool, sizeof tool)) {
		say("cannot find xom-scan beside %s or in %s/../lib/xom",
		    self_dir(), self_dir());
		return XOM_EXIT_ENV;
	}
	argv[0] = tool;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		execv(tool, argv);
		say("%s: %s", tool, strerror(errno));
		_exit(XOM_EXIT_ENV);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		say("%s: %s", tool, strerror(errno));
		return XOM_EXIT_ENV;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	/* The files: what is not an option, and all after "--". */
	for (int i = 1, files = 0; i < argc; i++) {
		if (!files && !strcmp(argv[i], "--")) {
			files = 1;
			continue;
		}
		if ((files || argv[i][0] != '-') && (i == 1 || files || strcmp(argv[i - 1], "-j"))
		    && static_program(argv[i]))
			say("%s: statically linked: LD_PRELOAD, LD_AUDIT and /etc/ld.so.preload never load xom into it, so only `xom run` applies this plan, from outside, where the CPU has keys",
			    argv[i]);
	}
	return WEXITSTATUS(status);
}
