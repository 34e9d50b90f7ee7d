/*
 * victim.c - a small "service" with a deliberate information-leak bug, the
 * kind that gives an attacker a read primitive in a real program.
 *
 * It greets each client with a "session id" that is really the address of
 * one of its functions (a leaked code pointer, the one thing JIT-ROP needs),
 * then answers requests of the form "ADDR LEN" with the LEN bytes at ADDR,
 * in hex, without checking that ADDR points at anything it meant to share.
 *
 * Do not copy this program's protocol into anything real.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEN 4096

/*
 * The bug: it copies from a pointer the client chose.  The loop reads one
 * byte at a time through a volatile pointer, as a parser or a formatter
 * would; the read that touches code is this function's own instruction, so
 * that is the instruction xom names when it blocks the read.
 */
static __attribute__((noinline)) void copy_bytes(unsigned char *dst,
                                                 const unsigned char *src,
                                                 size_t len)
{
	const volatile unsigned char *p = src;

	for (size_t i = 0; i < len; i++)
		dst[i] = p[i];
}

static __attribute__((noinline)) int handle_request(const char *line)
{
	static unsigned char buf[MAX_LEN];
	unsigned long addr, len;

	if (sscanf(line, "%lx %lu", &addr, &len) != 2 || len == 0 || len > MAX_LEN) {
		puts("error: expected ADDR LEN");
		return 0;
	}
	copy_bytes(buf, (const unsigned char *)addr, len);
	fputs("data ", stdout);
	for (unsigned long i = 0; i < len; i++)
		printf("%02x", buf[i]);
	putchar('\n');
	return 1;
}

int main(void)
{
	char line[256];

	/* Each reply must reach the client before it asks again. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The leak: a "random" session id that is a code address. */
	printf("session %lx\n", (unsigned long)(void *)handle_request);
	while (fgets(line, sizeof line, stdin)) {
		if (!strncmp(line, "quit", 4))
			break;
		handle_request(line);
	}
	return 0;
}
