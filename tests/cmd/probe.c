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
 *   probe threads N       N threads each print a sum, one after the other
 *   probe readfn          reads a byte of a function of its own that no
 *                         instruction reads (through a pointer in data)
 *   probe unprotect       makes readfn's page readable with the default key
 *                         (pkey_mprotect), then reads it
 *   probe threadread      a second thread does what readfn does
 *   probe forkread        a forked child does what readfn does; the parent
 *                         prints how the child ended
 *   probe forkexec PROG ARGS...  a forked child execs PROG; the parent
 *                         prints how it ended
 *   probe exec PROG ARGS...  execs PROG in place
 *   probe pkru            prints the thread's PKRU (0 where the CPU has none)
 *
 * Built dynamically linked, and statically linked (glibc -static and
 * -static-pie, and musl where musl-gcc is installed), which xom run
 * protects from outside.
 */
#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The signals that "probe signals" reports, by the names kill -s takes. */
static const struct { int sig; const char *line; } reported[] = {
	{ SIGUSR1, "got USR1\n" }, { SIGUSR2, "got USR2\n" },
	{ SIGALRM, "got ALRM\n" }, { SIGTERM, "got TERM\n" },
	{ SIGHUP, "got HUP\n" }, { SIGINT, "got INT\n" },
	{ SIGQUIT, "got QUIT\n" }, { SIGWINCH, "got WINCH\n" },
	{ SIGCONT, "got CONT\n" },
};

int main(int argc, char **argv);

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

static void *sum_thread(void *arg)
{
	long n = (long)arg, sum = 0;

	for (long i = 0; i <= 1000 * n; i++)
		sum += i;
	printf("thread %ld sum %ld\n", n, sum);
	return NULL;
}

/* A function of the program's own, reached through a pointer in data:
 * a direct read such as *(char *)main is a RIP-relative load of code,
 * which the scanner sees and keeps that page readable for.  It starts a
 * page of its own, so that it shares none with main, which readcode reads
 * that way. */
__attribute__((aligned(4096), noinline)) static void *code_target(void *arg)
{
	return arg;
}
static void *(*volatile own_code)(void *) = code_target;

/* Reads a byte of own_code; what it printed, if it was not stopped. */
static void read_own(const char *who)
{
	unsigned char a = *(volatile unsigned char *)(void *)own_code;
	printf("%sread own code: %02x\n", who, a);
}

static void *read_thread(void *arg)
{
	(void)arg;
	read_own("thread ");
	return NULL;
}

/* Runs fn in thread after thread, joined in turn, so that the output's
 * order is fixed. */
static int run_threads(int n, void *(*fn)(void *))
{
	for (long i = 1; i <= n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, fn, (void *)i) != 0 || pthread_join(t, NULL) != 0) {
			fprintf(stderr, "probe: cannot run thread %ld\n", i);
			return 1;
		}
	}
	printf("threads done\n");
	return 0;
}

/* Forks; the child reads code (argv NULL) or execs argv; the parent says
 * how the child ended. */
static int fork_child(char **argv)
{
	int st;

	fflush(stdout);
	pid_t c = fork();
	if (c < 0)
		return 1;
	if (c == 0) {
		if (argv) {
			execv(argv[0], argv);
			_exit(127);
		}
		read_own("child ");
		_exit(0);
	}
	if (waitpid(c, &st, 0) != c)
		return 1;
	if (WIFSIGNALED(st))
		printf("child killed by signal %d\n", WTERMSIG(st));
	else
		printf("child exit %d\n", WEXITSTATUS(st));
	return 0;
}

/* RDPKRU, where the CPU and kernel have protection keys. */
static unsigned pkru(void)
{
	unsigned a, b, c = 0, d, eax, edx, ecx = 0;

	if (__get_cpuid_max(0, NULL) < 7)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	if (!(c & 16))
		return 0;
	__asm__ volatile(".byte 0x0f, 0x01, 0xee" : "=a"(eax), "=d"(edx) : "c"(ecx));
	(void)a, (void)b, (void)d, (void)edx;
	return eax;
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
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return run_threads(atoi(argv[2]), sum_thread);
	if (argc == 2 && !strcmp(argv[1], "readfn")) {
		read_own("");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "unprotect")) {
		/* What an attacker with a call primitive would try: give the
		 * code back the default key, readable, then read it (a plain
		 * mprotect would keep the key).  Sealed code refuses. */
		uintptr_t page = (uintptr_t)(void *)own_code & ~(uintptr_t)4095;
		if (syscall(SYS_pkey_mprotect, page, 4096, PROT_READ | PROT_EXEC, 0) != 0)
			printf("unprotect failed: %s\n", strerror(errno));
		else
			printf("unprotect ok\n");
		fflush(stdout);
		read_own("");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "threadread"))
		return run_threads(1, read_thread);
	if (argc == 2 && !strcmp(argv[1], "forkread"))
		return fork_child(NULL);
	if (argc >= 3 && !strcmp(argv[1], "exec")) {
		execv(argv[2], argv + 2);
		perror("probe: exec");
		return 127;
	}
	if (argc >= 3 && !strcmp(argv[1], "forkexec"))
		return fork_child(argv + 2);
	if (argc == 2 && !strcmp(argv[1], "pkru")) {
		printf("pkru %#x\n", pkru());
		return 0;
	}
	fprintf(stderr, "usage: probe dlopen LIB | env NAME... | exit N | kill SIG | readcode | readfn | unprotect | sleep N | signals | threads N | threadread | forkread | exec PROG ARGS... | forkexec PROG ARGS... | pkru\n");
	return 2;
}
