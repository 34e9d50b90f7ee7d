/*
 * runner.c - times whole processes, the way a user feels them.
 *
 *   runner [-n RUNS] [-w WARMUP] [-o FILE] SPEC...
 *
 * Each SPEC is one argument, "LABEL:[VAR=VALUE ...] PROGRAM [ARG ...]",
 * split at spaces (no quoting: the benchmark's paths have none).  A token
 * "@clear=DIR" empties DIR before every run of that spec, outside the timed
 * part, which is how a cold plan cache is measured.  The programs run in
 * turn, one run of each per round and the order rotated every round, so that
 * a noisy moment on a shared machine spreads over all of them instead of
 * landing on one.  For each spec one line is printed:
 *
 *   LABEL n=RUNS median_us=... min_us=... p25_us=... p75_us=... maxrss_kb=... failed=...
 *
 * Every child starts from this process's environment without LD_PRELOAD and
 * XOM_OPTIONS, plus the spec's own assignments, so a stray setting in the
 * caller's shell cannot leak into a baseline.  The children's stdout goes to
 * FILE (default /dev/null) and their stderr to /dev/null: output costs time
 * and is not what is measured.  Exit status: 0, or 1 if any run failed (its
 * time still counts, and failed= says how many), 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_SPECS 16
#define MAX_TOKENS 64

struct spec {
	char *label;
	char *argv[MAX_TOKENS];
	char **envp;
	const char *clear;      /* directory emptied before each run, or NULL */
	double *us;             /* one time per run */
	long maxrss_kb;
	int failed;
};

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "runner: %s%s\n", msg, arg ? arg : "");
	exit(2);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int is_dropped(const char *e)
{
	return !strncmp(e, "LD_PRELOAD=", 11) || !strncmp(e, "XOM_OPTIONS=", 12);
}

/* Builds the child environment: ours minus the dropped keys, plus sets. */
static char **make_env(char **sets, int nsets)
{
	size_t n = 0, k = 0;

	while (environ[n])
		n++;
	char **env = calloc(n + (size_t)nsets + 1, sizeof(*env));
	if (!env)
		die("out of memory", NULL);
	for (size_t i = 0; i < n; i++) {
		if (is_dropped(environ[i]))
			continue;
		/* A spec's own setting replaces an inherited one. */
		int replaced = 0;
		for (int j = 0; j < nsets; j++) {
			size_t kl = (size_t)(strchr(sets[j], '=') - sets[j]) + 1;
			if (!strncmp(environ[i], sets[j], kl))
				replaced = 1;
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (int j = 0; j < nsets; j++)
		env[k++] = sets[j];
	return env;
}

static void parse_spec(struct spec *s, char *text, int runs)
{
	char *sets[MAX_TOKENS];
	int nsets = 0, nargs = 0;
	char *colon = strchr(text, ':');

	if (!colon)
		die("a spec needs 'LABEL:COMMAND', got ", text);
	*colon = '\0';
	s->label = text;
	for (char *save = NULL, *t = strtok_r(colon + 1, " ", &save); t;
	     t = strtok_r(NULL, " ", &save)) {
		if (nargs == 0 && !strncmp(t, "@clear=", 7))
			s->clear = t + 7;
		else if (nargs == 0 && strchr(t, '=') && t[0] != '/')
			sets[nsets++] = t;
		else if (nargs < MAX_TOKENS - 1)
			s->argv[nargs++] = t;
		else
			die("too many arguments in spec ", s->label);
		if (nsets == MAX_TOKENS)
			die("too many settings in spec ", s->label);
	}
	if (nargs == 0)
		die("no program in spec ", s->label);
	s->argv[nargs] = NULL;
	s->envp = make_env(sets, nsets);
	s->us = calloc((size_t)runs, sizeof(double));
	if (!s->us)
		die("out of memory", NULL);
}

static int remove_entry(const char *path, const struct stat *st, int type,
                        struct FTW *ftw)
{
	(void)st;
	(void)type;
	/* The directory itself stays, so that its mode and owner stay too. */
	if (ftw->level > 0 && remove(path) != 0 && errno != ENOENT)
		die("cannot remove ", path);
	return 0;
}

static void clear_dir(const char *dir)
{
	if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
		die("cannot empty ", dir);
}

/* Runs one spec once; returns the wall time in microseconds. */
static double run_once(struct spec *s, const char *out)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	pid_t pid;
	int status;

	if (s->clear)
		clear_dir(s->clear);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	double t0 = now_us();
	int err = posix_spawnp(&pid, s->argv[0], &fa, NULL, s->argv, s->envp);
	if (err) {
		errno = err;
		perror(s->argv[0]);
		exit(2);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			die("wait4 failed", NULL);
	double t = now_us() - t0;
	posix_spawn_file_actions_destroy(&fa);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		s->failed++;
	if (ru.ru_maxrss > s->maxrss_kb)
		s->maxrss_kb = ru.ru_maxrss;
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double quantile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;
	double f = pos - i;
	return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

int main(int argc, char **argv)
{
	struct spec specs[MAX_SPECS];
	int runs = 31, warmup = 2, nspecs = 0, opt, anyfail = 0;
	const char *out = "/dev/null";

	while ((opt = getopt(argc, argv, "n:w:o:")) != -1) {
		switch (opt) {
		case 'n': runs = atoi(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		case 'o': out = optarg; break;
		default: die("usage: runner [-n RUNS] [-w WARMUP] [-o FILE] 'LABEL:CMD'...", NULL);
		}
	}
	if (runs < 1 || warmup < 0)
		die("-n must be at least 1 and -w at least 0", NULL);
	memset(specs, 0, sizeof(specs));
	for (int i = optind; i < argc; i++) {
		if (nspecs == MAX_SPECS)
			die("too many specs", NULL);
		parse_spec(&specs[nspecs++], argv[i], runs);
	}
	if (!nspecs)
		die("no command to time", NULL);

	/* Warm-up runs fill the page cache; their times are thrown away. */
	for (int r = 0; r < warmup; r++)
		for (int i = 0; i < nspecs; i++)
			run_once(&specs[i], out);
	for (int i = 0; i < nspecs; i++)
		specs[i].failed = 0;

	for (int r = 0; r < runs; r++)
		for (int k = 0; k < nspecs; k++) {
			struct spec *s = &specs[(k + r) % nspecs];
			s->us[r] = run_once(s, out);
		}

	for (int i = 0; i < nspecs; i++) {
		struct spec *s = &specs[i];

		qsort(s->us, (size_t)runs, sizeof(double), cmp_double);
		printf("%s n=%d median_us=%.1f min_us=%.1f p25_us=%.1f p75_us=%.1f"
		       " maxrss_kb=%ld failed=%d\n", s->label, runs,
		       quantile(s->us, runs, 0.5), s->us[0],
		       quantile(s->us, runs, 0.25), quantile(s->us, runs, 0.75),
		       s->maxrss_kb, s->failed);
		anyfail |= s->failed != 0;
	}
	return anyfail;
}
