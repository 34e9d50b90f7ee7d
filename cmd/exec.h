/*
 * exec.h - what exec runs for a file: its #! interpreter, or for an ELF
 * program the dynamic linker that PT_INTERP names (cmd/exec.c).  xom run
 * (prog.c) checks that chain before it forks; xom cache build
 * (cache/files.c) makes plans for each file on it.  Internal to cmd/.
 */
#ifndef XOM_CMD_EXEC_H
#define XOM_CMD_EXEC_H

#include <elf.h>
#include <stddef.h>
#include <sys/types.h>

/* The kernel follows at most this many #! interpreters. */
#define MAX_INTERP_DEPTH 4

/* The kernel reads a #! line from the first this many bytes. */
#define EXEC_HEAD 256

/* How exec treats a file, by its first bytes. */
enum exec_kind {
	EXEC_SCRIPT,    /* a #! line; its interpreter may be "" (then execve
	                   fails with ENOEXEC, as for EXEC_NEITHER) */
	EXEC_ELF,       /* ELF magic: exec_pt_interp says which linker runs */
	EXEC_NEITHER,   /* execve fails with ENOEXEC */
};

/* The first bytes of a file, NUL-terminated, as exec_head read them. */
struct exec_head {
	unsigned char buf[EXEC_HEAD + 1];
	ssize_t n;                      /* 0 when the read failed */
};

/*
 * Reads the first bytes of the file open at fd into h and says how exec
 * treats it.  For EXEC_SCRIPT, interp gets the #! line's interpreter and
 * arg its first argument (each "" when there is none; EXEC_HEAD bytes
 * each hold any).
 */
enum exec_kind exec_head(int fd, struct exec_head *h, char interp[EXEC_HEAD],
                         char arg[EXEC_HEAD]);

/* Finds the first PT_INTERP of the ELF file open at fd, whose header eh
 * the caller checked (e_phentsize, a bounded e_phnum): 1 with its path in
 * out, 0 when there is none (statically linked), -1 when the program
 * headers or the path, which must end in its NUL, cannot be read. */
int exec_pt_interp(int fd, const Elf64_Ehdr *eh, char *out, size_t len);

#endif
