/*
 * dlopen_loop.c - the run-time cost of dlopen and dlclose with many
 * objects loaded, which is what xom's wrappers add to Python imports,
 * plugin hosts and NSS.
 *
 *   dlopen_loop DIR N ROUNDS PER
 *
 * Loads DIR/libm000.so ... DIR/lib(N-1).so (from bench/gen_many.sh), then
 * times ROUNDS rounds of PER operations of each kind, alternating:
 *   repeat  dlopen of DIR/libm000.so, loaded already (only its count moves;
 *           the handles are closed after the round, outside the timing)
 *   cycle   dlopen and dlclose of DIR/libextra.so, which really loads and
 *           unloads it
 * and prints one line, the medians over the rounds of the time of one
 * operation:
 *   objects=LOADED repeat_ns=... cycle_ns=...
 * Exit status 0, 1 if a load failed, 2 on usage errors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_PER 4096

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int count(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	++*(int *)arg;
	return 0;
}

static void *load(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/lib%s.so", dir, name);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen_loop: %s\n", dlerror());
		exit(1);
	}
	return h;
}

int main(int argc, char **argv)
{
	static void *held[MAX_PER];
	char name[16];

	if (argc != 5) {
		fprintf(stderr, "usage: dlopen_loop DIR N ROUNDS PER\n");
		return 2;
	}
	const char *dir = argv[1];
	int n = atoi(argv[2]), rounds = atoi(argv[3]), per = atoi(argv[4]);
	if (n < 1 || rounds < 1 || per < 1 || per > MAX_PER) {
		fprintf(stderr, "dlopen_loop: bad N, ROUNDS or PER\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "m%03d", i);
		load(dir, name);
	}
	double *rep = calloc((size_t)rounds, sizeof(double));
	double *cyc = calloc((size_t)rounds, sizeof(double));
	if (!rep || !cyc)
		return 1;
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		for (int i = 0; i < per; i++)
			held[i] = load(dir, "m000");
		double t1 = now_ns();
		for (int i = 0; i < per; i++)
			dlclose(held[i]);
		double t2 = now_ns();
		for (int i = 0; i < per; i++)
			dlclose(load(dir, "extra"));
		double t3 = now_ns();
		rep[r] = (t1 - t0) / per;
		cyc[r] = (t3 - t2) / per;
	}
	qsort(rep, (size_t)rounds, sizeof(double), cmp);
	qsort(cyc, (size_t)rounds, sizeof(double), cmp);
	int objects = 0;
	dl_iterate_phdr(count, &objects);
	printf("objects=%d repeat_ns=%.0f cycle_ns=%.0f\n", objects,
	       rep[rounds / 2], cyc[rounds / 2]);
	return 0;
}
