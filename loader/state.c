/*
 * state.c - the process-wide state that the runtime's phases read: the
 * options, whether xom is active, who the process is, its key and its
 * stores.
 *
 * Phase: written once by start (start.c); read by every phase, the fault
 * phase included [fault].  It calls nothing above options.c, so that every
 * file may read it and start.c stands alone on top.
 */
#include "loader.h"

/* Zero-initialised, so that it lies with the other variables that every
 * start writes, in .bss, not alone in a page of .data. */
struct xom_opts xom_opt;
int xom_active;
int xom_started;
int xom_secure;
unsigned xom_euid;

/* xom's protection key (pkey.c allocates it), 0 until allocated: key 0 is
 * the default key, which pkey_alloc never returns.  The protection calls
 * made, or counted (backend=none). */
int xom_key;
unsigned long xom_prot_calls;

/* The stores' folders, found by start (xom_store_dirs). */
struct xom_dirs xom_stores_at;

const char *xom_store_dir(int i, char *buf, size_t cap)
{
	return xom_dir_path(&xom_stores_at, i, buf, cap);
}

