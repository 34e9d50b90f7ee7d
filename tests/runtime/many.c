/*
 * many.c - libmanyN.so (built with -DMANY=N) and manyprog (-DMANY_MAIN),
 * which links all ten: a program that starts with more objects than the
 * runtime reads plans for one by one, so that its start-up maps the
 * store's index (tests/runtime/native.sh).  Its arguments are libraries
 * that it loads afterwards, one by one: enough of them take the runtime's
 * table past the size at which it starts hashing the objects it knows.
 */
#include <dlfcn.h>
#include <stdio.h>

#ifdef MANY_MAIN
#define DECLARE(n) int many##n(int);
DECLARE(0) DECLARE(1) DECLARE(2) DECLARE(3) DECLARE(4)
DECLARE(5) DECLARE(6) DECLARE(7) DECLARE(8) DECLARE(9)

int main(int argc, char **argv)
{
	int s = many0(0) + many1(1) + many2(2) + many3(3) + many4(4) +
	        many5(5) + many6(6) + many7(7) + many8(8) + many9(9);

	for (int i = 1; i < argc; i++)
		if (!dlopen(argv[i], RTLD_NOW)) {
			printf("dlopen %s: %s\n", argv[i], dlerror());
			return 1;
		}
	printf("many %d\n", s);
	return 0;
}
#else
#define NAME2(a, b) a##b
#define NAME(a, b) NAME2(a, b)
int NAME(many, MANY)(int);
int NAME(many, MANY)(int x)
{
	return x * 2 + MANY;
}
#endif
