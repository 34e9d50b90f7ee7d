/*
 * hide.c - data of xom's own under xom's key: the plan store's index that
 * stores.c keeps mapped between batches, unreadable to the program as the
 * code is, and readable to the thread that runs a batch while it runs.
 *
 * Phase: object (inside the lock, whose blocked signals keep the
 * program's code off the thread while its reads are open).  No system
 * call but the one pkey_mprotect that hides a mapping: the rights are
 * the thread's PKRU register.
 */
#include <errno.h>
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"

/* Whether xom's key stands behind the rights: with backend=none, or
 * before a key was had, PKRU is neither read nor written. */
static int key_in_use(void)
{
	return xom_opt.backend != XOM_BACKEND_NONE && xom_key > 0;
}

long xom_key_hide(const void *p, size_t len)
{
	xom_prot_calls++;
	if (xom_opt.backend == XOM_BACKEND_NONE)
		return 0;
	if (xom_key <= 0)
		return -ENOKEY;
	return sys4(SYS_pkey_mprotect, (long)p, (long)len, PROT_READ, xom_key);
}

unsigned xom_key_reads_open(void)
{
	if (!key_in_use())
		return 0;
	/* Reads only: the key's pages are not writable by their protection
	 * anyway, and its write-disable bit stays as it was. */
	unsigned old = x_rdpkru();
	x_wrpkru(old & ~(1u << (2 * xom_key)));
	return old;
}

void xom_key_reads_close(unsigned old)
{
	if (key_in_use())
		x_wrpkru(old);
}
