/*
 * capstone_decode.c - the baseline for the scanner's speed: a bare Capstone
 * decode, with CS_OPT_DETAIL, of the same bytes that xom-scan disassembles
 * (every SHF_EXECINSTR section), and nothing else.
 *
 *   capstone_decode [-q] [-r REPEAT] FILE...
 *
 * With -q the handle's text printer is turned off first, exactly as the
 * scanner's sweep does it (x86_quiet() in scan/x86.c): the same Capstone
 * calls on both sides of a comparison with the scanner's quiet sweep.
 * Without it this is Capstone's ordinary detail decode, text included.
 *
 * It is written the way Capstone's own cstool uses the API: one handle, one
 * cs_malloc'd instruction, cs_disasm_iter over each section, and one byte
 * skipped where decoding fails, as the scanner does.  For each file it prints
 *
 *   FILE code_bytes=... insns=... best_s=... mb_per_s=...
 *
 * where best_s is the fastest of REPEAT in-process decodes (default 1).  The
 * whole-process time, which is what compares fairly with a run of xom-scan,
 * is taken from outside by the runner.  Exit status: 0, 1 if a file could not
 * be read or is not a 64-bit ELF file, 2 on usage or Capstone errors.
 */
#include <capstone/capstone.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../scan/x86.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The section headers, checked against the file size, or NULL. */
static const Elf64_Shdr *section_headers(const unsigned char *p, size_t size,
                                         size_t *count)
{
	const Elf64_Ehdr *eh = (const void *)p;
	uint64_t end;

	if (size < sizeof(*eh) || memcmp(p, ELFMAG, SELFMAG)
	    || p[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr))
		return NULL;
	if (__builtin_mul_overflow((uint64_t)eh->e_shnum, sizeof(Elf64_Shdr), &end)
	    || __builtin_add_overflow(end, eh->e_shoff, &end) || end > size)
		return NULL;
	*count = eh->e_shnum;
	return (const void *)(p + eh->e_shoff);
}

static uint64_t decode(csh h, cs_insn *insn, const uint8_t *code, size_t len,
                       uint64_t addr)
{
	uint64_t n = 0;

	while (len) {
		if (cs_disasm_iter(h, &code, &len, &addr, insn)) {
			n++;
			continue;
		}
		/* Data or an encoding Capstone does not know: step over it. */
		code++;
		len--;
		addr++;
	}
	return n;
}

static int decode_file(csh h, cs_insn *insn, const char *path, int repeat)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	size_t size = (size_t)st.st_size;
	const unsigned char *p = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0)
	                              : MAP_FAILED;
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "%s: cannot map the file\n", path);
		return 1;
	}

	size_t nsh = 0;
	const Elf64_Shdr *sh = section_headers(p, size, &nsh);
	if (!sh) {
		fprintf(stderr, "%s: not a 64-bit ELF file with section headers\n", path);
		munmap((void *)p, size);
		return 1;
	}

	uint64_t bytes = 0, insns = 0;
	double best = 1e30;
	for (int r = 0; r < repeat; r++) {
		bytes = insns = 0;
		double t0 = now_s();
		for (size_t i = 0; i < nsh; i++) {
			uint64_t end;
			if (sh[i].sh_type != SHT_PROGBITS || !(sh[i].sh_flags & SHF_EXECINSTR))
				continue;
			if (__builtin_add_overflow(sh[i].sh_offset, sh[i].sh_size, &end)
			    || end > size)
				continue;
			insns += decode(h, insn, p + sh[i].sh_offset, sh[i].sh_size,
			                sh[i].sh_addr);
			bytes += sh[i].sh_size;
		}
		double t = now_s() - t0;
		if (t < best)
			best = t;
	}
	printf("%s code_bytes=%llu insns=%llu best_s=%.6f mb_per_s=%.2f\n", path,
	       (unsigned long long)bytes, (unsigned long long)insns, best,
	       best > 0 ? (double)bytes / 1e6 / best : 0.0);
	munmap((void *)p, size);
	return 0;
}

int main(int argc, char **argv)
{
	int repeat = 1, i = 1, status = 0;
	bool quiet = false;
	csh h;

	if (argc > i && !strcmp(argv[i], "-q")) {
		quiet = true;
		i++;
	}
	if (argc > i + 1 && !strcmp(argv[i], "-r")) {
		repeat = atoi(argv[i + 1]);
		i += 2;
	}
	if (i >= argc || repeat < 1) {
		fprintf(stderr, "usage: capstone_decode [-q] [-r REPEAT] FILE...\n");
		return 2;
	}
	cs_err e = cs_open(CS_ARCH_X86, CS_MODE_64, &h);
	if (e != CS_ERR_OK) {
		fprintf(stderr, "capstone_decode: cs_open: %s\n", cs_strerror(e));
		return 2;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	cs_insn *insn = cs_malloc(h);
	if (!insn) {
		fprintf(stderr, "capstone_decode: cs_malloc failed\n");
		return 2;
	}
	if (quiet && !x86_quiet(h, insn)) {
		fprintf(stderr, "capstone_decode: -q: this Capstone cannot be quieted\n");
		return 2;
	}
	for (; i < argc; i++)
		status |= decode_file(h, insn, argv[i], repeat);
	cs_free(insn, 1);
	cs_close(&h);
	return status;
}
