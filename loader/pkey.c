/*
 * pkey.c - the protection key and the calls that apply it.
 *
 * Phases: xom_key_alloc runs at start; the protection calls in the object
 * phase.  xom_key is read by the fault handler.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "loader.h"

int xom_key = -1;
unsigned long xom_prot_calls;

int xom_key_alloc(void)
{
	long k = syscall(SYS_pkey_alloc, 0ul, (unsigned long)PKEY_DISABLE_ACCESS);
	if (k >= 0) {
		xom_key = (int)k;
		return 0;
	}
	const char *why;
	switch (errno) {
	case EINVAL: why = "protection keys are not supported by this CPU or kernel"; break;
	case ENOSPC: why = "all protection keys are already in use"; break;
	case ENOSYS: why = "the kernel has no pkey_alloc"; break;
	default: why = "pkey_alloc failed"; break;
	}
	if (xom_opt.require)
		xom_refuse(why);
	xom_say("%s; running unprotected", why);
	return -1;
}

int xom_protect(uintptr_t a, size_t len)
{
	xom_prot_calls++;
	if (xom_opt.backend == XOM_BACKEND_NONE)
		return 0;
	return (int)syscall(SYS_pkey_mprotect, a, len, PROT_EXEC, xom_key);
}

void xom_unprotect(uintptr_t a, size_t len, int prot)
{
	if (xom_opt.backend == XOM_BACKEND_NONE)
		return;
	syscall(SYS_pkey_mprotect, a, len, prot, 0);
}
