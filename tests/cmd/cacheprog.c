/*
 * cacheprog.c - a program for the xom cache tests: it needs a library that
 * only its RUNPATH ($ORIGIN/lib) finds, so that a build of its closure must
 * resolve libraries the way the dynamic linker does.
 */
#include <stdio.h>

int cache_value(void);

int main(void)
{
	printf("cache value %d\n", cache_value());
	return 0;
}
