/*
 * elffile.h - what an ELF file is, for xom cache (cmd/cache/elffile.c).
 * Internal to cmd/.
 */
#ifndef XOM_CMD_CACHE_ELFFILE_H
#define XOM_CMD_CACHE_ELFFILE_H

#include <stddef.h>
#include <stdint.h>

enum elf_kind {
	ELF_DYNAMIC,    /* the runtime meets it: a shared object or a
	                   dynamically linked program, with code */
	ELF_STATIC,     /* a statically linked program (static-pie too) */
	ELF_NO_CODE,    /* no executable segment with bytes in the file */
	ELF_OTHER,      /* not ELF, not x86-64, not loadable (object files) */
};

/*
 * What the file behind fd (of size bytes) is; interp, when not NULL, gets
 * its PT_INTERP (empty when there is none); *audit, when not NULL, whether
 * it names audit modules; *program, when not NULL, whether it is a
 * program (with PT_INTERP, and not a library that can also run, as libc
 * can: an executable, or a PIE).
 */
enum elf_kind elf_kind(int fd, uint64_t size, char *interp, size_t cap,
                       int *audit, int *program);

/* The folders that obj's DT_RPATH and DT_RUNPATH name, ':'-separated, in
 * buf (empty when it names none); 0, or -1 when obj cannot be read or the
 * list does not fit. */
int elf_run_paths(const char *obj, char *buf, size_t cap);

#endif
