/*
 * A library that calls dlopen and dlmopen itself, so that it is glibc's
 * caller: built several times (HOST names the variant) with different
 * DT_RPATH and DT_RUNPATH folders.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

void *CAT(HOST, _open)(const char *name, int mode);
void *CAT(HOST, _mopen)(Lmid_t lmid, const char *name, int mode);

/* The empty asm after each call keeps the compiler from making it a
 * tail call, which would make this library's caller glibc's caller. */
void *CAT(HOST, _open)(const char *name, int mode)
{
	void *h = dlopen(name, mode);
	__asm__ volatile("" ::: "memory");
	return h;
}

void *CAT(HOST, _mopen)(Lmid_t lmid, const char *name, int mode)
{
	void *h = dlmopen(lmid, name, mode);
	__asm__ volatile("" ::: "memory");
	return h;
}
