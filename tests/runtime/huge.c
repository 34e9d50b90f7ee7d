/*
 * huge.c - the parts of hugeprog, a program that starts with more than
 * 1,100 objects (tests/runtime/native.sh): built with -DHUGE_LIB, the one
 * small library that the test copies 1,100 times, each copy a file of
 * its own; without it, the program, which needs every copy.  Its
 * arguments are libraries that it loads afterwards, one by one.
 */
#ifdef HUGE_LIB
/* Code, so that each copy has an executable segment to plan; the copies
 * are linked without the C library, and without a build-id, so that each
 * is keyed by its own file. */
int huge_one(int x);
int huge_one(int x)
{
	return x * 3 + 1;
}
#else
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!dlopen(argv[i], RTLD_NOW)) {
			printf("dlopen %s: %s\n", argv[i], dlerror());
			return 1;
		}
	printf("huge %d\n", argc - 1);
	return 0;
}
#endif
