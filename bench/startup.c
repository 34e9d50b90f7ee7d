/*
 * startup - start-up cost of LD_PRELOAD=libxom.so against an empty preload.
 *
 *   startup RUNS EMPTY.so LIBXOM.so PROGRAM [ARGS...]
 *
 * Runs PROGRAM RUNS times in each of three ways, interleaved so that drift
 * in the machine's speed hits all three alike: with no preload, with
 * LD_PRELOAD=EMPTY.so (the baseline: the cost of preloading anything), and
 * with LD_PRELOAD=LIBXOM.so and XOM_OPTIONS=backend=none (xom's whole path
 * with a warm cache, less the protection system calls, which a machine
 * without protection keys cannot make).  Prints the median wall time of
 * each and the ratio of xom to the baseline.  XOM_BENCH_OPTIONS replaces
 * backend=none, to measure one part of the path (mode=off: loading only).
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char **make_env(const char *preload, const char *options)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 3, sizeof(*env));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11)
		    && strncmp(environ[i], "XOM_OPTIONS=", 12)
		    && strncmp(environ[i], "LD_AUDIT=", 9))
			env[k++] = environ[i];
	if (preload) {
		env[k] = malloc(strlen(preload) + 12);
		sprintf(env[k++], "LD_PRELOAD=%s", preload);
	}
	if (options) {
		env[k] = malloc(strlen(options) + 13);
		sprintf(env[k++], "XOM_OPTIONS=%s", options);
	}
	return env;
}

static double run_once(char **argv, char **env)
{
	posix_spawn_file_actions_t fa;
	struct timespec a, b;
	pid_t pid;
	int st;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 1, 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, env) != 0) {
		perror("posix_spawn");
		exit(2);
	}
	waitpid(pid, &st, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	posix_spawn_file_actions_destroy(&fa);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "startup: %s failed (status %#x)\n", argv[0], st);
		exit(2);
	}
	return (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: startup RUNS EMPTY.so LIBXOM.so PROGRAM [ARGS...]\n");
		return 2;
	}
	int runs = atoi(argv[1]);
	if (runs < 1 || runs > 100000)
		return 2;
	char **env[3] = {
		make_env(NULL, NULL),
		make_env(argv[2], NULL),
		make_env(argv[3], getenv("XOM_BENCH_OPTIONS")
		                  ? getenv("XOM_BENCH_OPTIONS") : "backend=none"),
	};
	double *t[3];
	for (int k = 0; k < 3; k++)
		t[k] = calloc(runs, sizeof(double));
	for (int k = 0; k < 3; k++)     /* warm-up: caches, page cache */
		run_once(argv + 4, env[k]);
	for (int i = 0; i < runs; i++)
		for (int j = 0; j < 3; j++) {
			int k = (i + j) % 3;    /* rotate the order */
			t[k][i] = run_once(argv + 4, env[k]);
		}
	double m[3];
	for (int k = 0; k < 3; k++)
		m[k] = median(t[k], runs);
	printf("%s: %d runs each, median wall time\n", argv[4], runs);
	printf("  no preload          %8.1f us\n", m[0]);
	printf("  empty preload       %8.1f us  (baseline)\n", m[1]);
	printf("  libxom backend=none %8.1f us  ratio %.3f to baseline (+%.1f%%)\n",
	       m[2], m[2] / m[1], (m[2] / m[1] - 1) * 100);
	return 0;
}
