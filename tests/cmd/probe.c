/*
 * probe.c - a tiny program that xom's command tests run under `xom run`:
 *
 *   probe dlopen LIB      loads LIB with dlopen, then exits 0 (1 if it fails)
 *   probe env NAME...     prints NAME=value (or NAME unset) for each NAME
 *   probe exit N          exits with status N
 *   probe kill SIG        kills itself with signal number SIG
 *   probe readcode        reads a byte of its own code, then of libc's
 *   probe sleep N         prints its process ID, then sleeps N seconds
 *   probe signals         prints "ready PID", then "got NAME" for each signal
 *                         it receives of those below; exits 0 after SIGTERM
 *
 * Built twice: dynamically linked, and statically linked (which xom run
 * must refuse).
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The signals that "probe signals" reports, by the names kill -s takes. */
static const struct { int sig; const char *line; } reported[] = {
	{ SIGUSR1, "got USR1\n" }, { SIGUSR2, "got USR2\n" },
	{ SIGALRM, "got ALRM\n" }, { SIGTERM, "got TERM\n" },
	{ SIGHUP, "got HUP\n" }, { SIGINT, "got INT\n" },
	{ SIGQUIT, "got QUIT\n" }, { SIGWINCH, "got WINCH\n" },
	{ SIGCONT, "got CONT\n" },
};

static volatile sig_atomic_t got_term;

/* write() only: a handler may not use stdio. */
static void report(int sig)
{
	for (size_t i = 0; i < sizeof reported / sizeof reported[0]; i++)
		if (reported[i].sig == sig) {
			ssize_t r = write(1, reported[i].line, strlen(reported[i].line));
			(void)r;
		}
	if (sig == SIGTERM)
		got_term = 1;
}

static int report_signals(void)
{
	struct sigaction sa = { .sa_handler = report };

	for (size_t i = 0; i < sizeof reported / sizeof reported[0]; i++)
		sigaction(reported[i].sig, &sa, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!got_term)
		pause();
	return 0;
}

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
	if (argc == 3 && !strcmp(argv[1], "dlopen"))
		return dlopen(argv[2], RTLD_NOW) ? 0 : 1;
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
	if (argc == 2 && !strcmp(argv[1], "signals"))
		return report_signals();
	if (argc == 2 && !strcmp(argv[1], "readcode")) {
		/* The volatile reads make these data loads of code bytes. */
		unsigned char a = *(volatile unsigned char *)(void *)main;
		printf("read own code: %02x\n", a);
		unsigned char b = *(volatile unsigned char *)(void *)memcpy;
		printf("read libc code: %02x\n", b);
		return 0;
	}
	fprintf(stderr, "usage: probe dlopen LIB | env NAME... | exit N | kill SIG | readcode | sleep N | signals\n");
	return 2;
}
