/*
 * str.c - the memory and string functions that the runtime uses, defined
 * here, hidden, so that the libraries import none of them from libc: each
 * import is a symbol lookup at every process start, and the compiler calls
 * memcpy and memset by itself.  Simple loops: the runtime's strings are
 * paths and its copies small.  Async-signal-safe, but for getenv, which
 * reads the environment as libc's does.
 *
 * Phase: any, the fault handler included; getenv only at start.
 */
#include <stdlib.h>

#include "sys.h"

void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *p = d;
	const unsigned char *q = s;

	while (n--)
		*p++ = *q++;
	return d;
}

void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *p = d;
	const unsigned char *q = s;

	if (p < q || p >= q + n)
		return memcpy(d, s, n);
	while (n--)
		p[n] = q[n];
	return d;
}

void *memset(void *d, int c, size_t n)
{
	unsigned char *p = d;

	while (n--)
		*p++ = (unsigned char)c;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;

	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p - *q;
	return 0;
}

void *memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;

	for (; n; n--, p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	return NULL;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++)
		if (*a != *b || !*a)
			return (unsigned char)*a - (unsigned char)*b;
	return 0;
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

char *strrchr(const char *s, int c)
{
	const char *hit = NULL;

	for (;; s++) {
		if (*s == (char)c)
			hit = s;
		if (!*s)
			return (char *)hit;
	}
}

size_t strcspn(const char *s, const char *reject)
{
	const char *p = s;

	while (*p && !strchr(reject, *p))
		p++;
	return (size_t)(p - s);
}

/* As libc's: a scan of the environment, which libc's does without a lock
 * too.  Defined here for the reason above, and one more: libc's lies on a
 * page of its code that few programs otherwise run, and a first touch of
 * it is a page fault at every start. */
char *getenv(const char *name)
{
	extern char **environ;
	size_t n = strlen(name);

	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}
