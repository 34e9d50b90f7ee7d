/*
 * probe.c - a tiny program that xom's command tests run under `xom run`:
 *
 *   probe env NAME...     prints NAME=value (or NAME unset) for each NAME
 *   probe exit N          exits with status N
 *   probe kill SIG        kills itself with signal number SIG
 *   probe readcode        reads a byte of its own code, then of libc's
 *   probe sleep N         prints its process ID, then sleeps N seconds
 *
 * Built twice: dynamically linked, and statically linked (which xom run
 * must refuse).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "env")) {
		for (int i = 2; i < argc; i++) {
			const char *v = getenv(argv[i]);
			if (v)
				printf("%s=%s\n", argv[i], v);
			else
				printf("%s unset\n", argv[i]);
		}
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "exit"))
		return atoi(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "kill")) {
		signal(atoi(argv[2]), SIG_DFL);
		raise(atoi(argv[2]));
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "sleep")) {
		printf("%d\n", (int)getpid());
		fflush(stdout);
		sleep((unsigned)atoi(argv[2]));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "readcode")) {
		/* The volatile reads make these data loads of code bytes. */
		unsigned char a = *(volatile unsigned char *)(void *)main;
		printf("read own code: %02x\n", a);
		unsigned char b = *(volatile unsigned char *)(void *)memcpy;
		printf("read libc code: %02x\n", b);
		return 0;
	}
	fprintf(stderr, "usage: probe env NAME... | exit N | kill SIG | readcode | sleep N\n");
	return 2;
}
