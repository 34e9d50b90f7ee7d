/*
 * elfq - facts about a valid x86-64 ELF file that the scanner tests compare
 * against, read straight from the headers without libelf so that they do
 * not share the scanner's mistakes.
 *
 *   elfq FILE find HEXBYTES   the virtual address of every occurrence of the
 *                             bytes inside an executable PT_LOAD, one a line
 *   elfq FILE execpages       how many 4 KiB pages the executable PT_LOADs
 *                             cover
 *   elfq FILE section NAME    the address of the named section
 *
 * Exit status: 0 answered (find may print nothing), 2 bad input or usage.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char *img;
static size_t img_len;

static void die(const char *what)
{
	fprintf(stderr, "elfq: %s\n", what);
	exit(2);
}

/* Each header table must lie inside the file; these are test inputs, but a
 * helper that crashes on a bad one would only confuse the report. */
static const void *at(uint64_t off, uint64_t len)
{
	if (off > img_len || len > img_len - off)
		die("header outside the file");
	return img + off;
}

static const Elf64_Phdr *phdr(const Elf64_Ehdr *eh, unsigned i)
{
	return at(eh->e_phoff + (uint64_t)i * sizeof(Elf64_Phdr),
		  sizeof(Elf64_Phdr));
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int cmd_find(const Elf64_Ehdr *eh, const char *hex)
{
	unsigned char pat[256];
	size_t n = 0;

	for (const char *p = hex; *p; p += 2) {
		if (n == sizeof pat || hexval(p[0]) < 0 || hexval(p[1]) < 0)
			die("bad hex pattern");
		pat[n++] = (unsigned char)(hexval(p[0]) << 4 | hexval(p[1]));
	}
	if (!n)
		die("empty pattern");
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = phdr(eh, i);
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		const unsigned char *seg = at(ph->p_offset, ph->p_filesz);
		for (size_t off = 0; off + n <= ph->p_filesz; off++) {
			const unsigned char *hit =
				memmem(seg + off, ph->p_filesz - off, pat, n);
			if (!hit)
				break;
			off = (size_t)(hit - seg);
			printf("%#" PRIx64 "\n", ph->p_vaddr + off);
		}
	}
	return 0;
}

static int cmd_execpages(const Elf64_Ehdr *eh)
{
	uint64_t pages = 0;

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = phdr(eh, i);
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
			continue;
		uint64_t lo = ph->p_vaddr & ~4095ull;
		uint64_t hi = (ph->p_vaddr + ph->p_memsz + 4095) & ~4095ull;
		pages += (hi - lo) / 4096;
	}
	printf("%" PRIu64 "\n", pages);
	return 0;
}

static int cmd_section(const Elf64_Ehdr *eh, const char *name)
{
	const Elf64_Shdr *sh = at(eh->e_shoff,
				  (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr));
	if (eh->e_shstrndx >= eh->e_shnum)
		die("no section names");
	const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
	const char *names = at(strs->sh_offset, strs->sh_size);

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= strs->sh_size)
			continue;
		if (strncmp(names + sh[i].sh_name, name,
			    strs->sh_size - sh[i].sh_name) == 0) {
			printf("%#" PRIx64 "\n", (uint64_t)sh[i].sh_addr);
			return 0;
		}
	}
	fprintf(stderr, "elfq: no section %s\n", name);
	return 2;
}

int main(int argc, char **argv)
{
	struct stat st;
	int fd;

	if (argc < 3)
		die("usage: elfq FILE find HEX|execpages|section NAME");
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		die(strerror(errno));
	img_len = (size_t)st.st_size;
	img = mmap(NULL, img_len ? img_len : 1, PROT_READ, MAP_PRIVATE, fd, 0);
	if (img == MAP_FAILED)
		die(strerror(errno));
	close(fd);

	const Elf64_Ehdr *eh = at(0, sizeof *eh);
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64)
		die("not a 64-bit x86-64 ELF file");

	if (strcmp(argv[2], "find") == 0 && argc == 4)
		return cmd_find(eh, argv[3]);
	if (strcmp(argv[2], "execpages") == 0 && argc == 3)
		return cmd_execpages(eh);
	if (strcmp(argv[2], "section") == 0 && argc == 4)
		return cmd_section(eh, argv[3]);
	die("usage: elfq FILE find HEX|execpages|section NAME");
}
