/*
 * A tiny library for pkey_kernel's dlopen test: its text is protected after
 * it is loaded, and its one function must still run, including a call back
 * into libc through the PLT.
 */
#include <string.h>

int pkdl_answer(const char *s);

__attribute__((visibility("default"))) int pkdl_answer(const char *s)
{
	return (int)strlen(s) * 3 + 1;
}
