/*
 * pkey.c - the protection key and the calls that apply it.
 *
 * Phases: xom_key_alloc runs at start; the protection calls in the object
 * phase.  xom_key is read by the fault handler.  Where a seccomp filter
 * refuses the key, kernkey.c's way takes over (xom_via).
 */
#include <cpuid.h>
#include <errno.h>
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"
#include "xom_loader.h"

/* CPUID.(EAX=7,ECX=0):ECX bit 3 is PKU, bit 4 OSPKE (the kernel set CR4.PKE). */
static unsigned cpu_pkey_bits(void)
{
	unsigned a, b, c = 0, d;

	if (__get_cpuid_max(0, NULL) < 7)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	(void)a, (void)b, (void)d;
	return (c >> 3) & 3;
}

/* Why pkey_alloc failed with err.  Debian's kernel fails it with ENOSPC on
 * a CPU without PKU, the errno of "every key is taken", so the CPU is
 * asked first. */
static const char *alloc_failure(int err)
{
	unsigned bits = cpu_pkey_bits();

	if (!(bits & 1))
		return "this CPU has no memory protection keys (PKU)";
	if (!(bits & 2))
		return "the kernel has not enabled memory protection keys (no OSPKE)";
	switch (err) {
	case ENOSPC: return "all protection keys are already in use";
	case EINVAL: return "this kernel does not support protection keys";
	default: return "pkey_alloc failed";
	}
}

int xom_key_alloc(void)
{
	long k = sys2(SYS_pkey_alloc, 0, PKEY_DISABLE_ACCESS);
	if (k >= 0) {
		xom_key = (int)k;
		return 0;
	}
	/* With OSPKE set the kernel has pkey_alloc (Linux 4.9 and later), so
	 * EPERM and ENOSYS come from a seccomp filter: the kernel's own key
	 * may still be had (kernkey.c), and whether it can is known at the
	 * first run. */
	if ((cpu_pkey_bits() & 3) == 3 && (k == -EPERM || k == -ENOSYS)) {
		xom_kernel_refused("pkey_alloc", (int)-k);
		return 0;
	}
	const char *why = alloc_failure((int)-k);
	if (xom_opt.require)
		xom_refuse(why);
	else
		xom_notice("%s; running unprotected", why);
	return -1;
}

long xom_protect(uintptr_t a, size_t len)
{
	xom_prot_calls++;
	if (xom_opt.backend == XOM_BACKEND_NONE)
		return 0;
	return sys4(SYS_pkey_mprotect, (long)a, (long)len, PROT_EXEC, xom_key);
}

void xom_unprotect(uintptr_t a, size_t len, int prot)
{
	if (xom_opt.backend == XOM_BACKEND_NONE)
		return;
	sys4(SYS_pkey_mprotect, (long)a, (long)len, prot, 0);
}

int xom_key_guard(int key)
{
	static int said;

	if (!xom_active || key <= 0 || (key != xom_key && key != xom_kernel_key))
		return 0;
	if (!said++)
		xom_say("the program tried to free or change protection key %d, which xom uses; refused (EINVAL)",
		        key);
	return 1;
}

int xom_key_check(void)
{
	static int said;
	int key = xom_via == XOM_VIA_KEY ? xom_key : xom_kernel_key;

	if (!xom_active || key <= 0 || xom_opt.backend == XOM_BACKEND_NONE)
		return 0;
	if ((x_rdpkru() >> (2 * key)) & PKEY_DISABLE_ACCESS)
		return 0;
	if (!said++)
		xom_say("protection key %d no longer denies reads in this thread: the program changed its rights or freed and reused the key with raw system calls; code is readable",
		        key);
	return 1;
}
