/*
 * dlopen_one.c - loads one shared object and exits.  With xom preloaded it
 * makes the runtime plan exactly that object (plus libc and the program),
 * which is how the warm- and cold-cache cost of a given library is timed.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: dlopen_one LIBRARY\n");
		return 2;
	}
	if (!dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) {
		fprintf(stderr, "dlopen_one: %s\n", dlerror());
		return 1;
	}
	return 0;
}
