/*
 * libctor.so: its constructor opens libraries by a bare name and by
 * $ORIGIN (its RUNPATH names sub/ and sub2/), before a preloaded
 * library's constructor has run; dltest's constructor case reads what it
 * found.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

int ctor_bare = -1, ctor_origin = -1;

static int value_of(void *h)
{
	int (*f)(void) = h ? (int (*)(void))dlsym(h, "plug_value") : 0;
	return f ? f() : -1;
}

__attribute__((constructor)) static void open_early(void)
{
	void *a = dlopen("libplug.so", RTLD_NOW);
	void *b = dlopen("$ORIGIN/sub2/libplug2.so", RTLD_NOW);
	ctor_bare = value_of(a);
	ctor_origin = value_of(b);
	if (a)
		dlclose(a);
	if (b)
		dlclose(b);
}
