/*
 * dlopen_cycle.c - the instructions and system calls of one dlopen and
 * dlclose cycle, with many objects loaded: what callgrind and strace count
 * for it, which the machine's load does not move.
 *
 *   dlopen_cycle DIR N CYCLES
 *
 * Loads DIR/libm000.so ... DIR/lib(N-1).so, then makes CYCLES cycles of
 * dlopen and dlclose of DIR/libextra.so, which really loads and unloads
 * it.  Run at two values of CYCLES, the difference of the counts divided
 * by the difference of the cycles is the cost of one cycle, without the
 * start-up and the loads before.  Prints nothing; exit status 0, 1 if a
 * load failed, 2 on usage errors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *load(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/lib%s.so", dir, name);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen_cycle: %s\n", dlerror());
		exit(1);
	}
	return h;
}

int main(int argc, char **argv)
{
	char name[16];

	if (argc != 4) {
		fprintf(stderr, "usage: dlopen_cycle DIR N CYCLES\n");
		return 2;
	}
	int n = atoi(argv[2]), cycles = atoi(argv[3]);
	if (n < 0 || n > 999 || cycles < 0) {
		fprintf(stderr, "dlopen_cycle: bad N or CYCLES\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "m%03d", i);
		load(argv[1], name);
	}
	for (int i = 0; i < cycles; i++)
		if (dlclose(load(argv[1], "extra")) != 0) {
			fprintf(stderr, "dlopen_cycle: %s\n", dlerror());
			return 1;
		}
	return 0;
}
