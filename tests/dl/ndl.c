/* libndl.so: linked with -z nodefaultlib; opens a name it cannot find. */
#define _GNU_SOURCE
#include <dlfcn.h>

void *ndl_open(const char *name, int mode);
void *ndl_open(const char *name, int mode)
{
	void *h = dlopen(name, mode);
	__asm__ volatile("" ::: "memory");
	return h;
}
