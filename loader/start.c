/*
 * start.c - start-up: the settings, the stores, the key, the helper and the
 * handler.
 *
 * Phase: start.  Runs once, in the preload constructor or in the audit
 * module's la_version, before the host's main and, for the audit module,
 * before any other object is mapped.  It may not use stdio or the host's
 * malloc: everything it keeps lives in static storage.
 */
#include <stdlib.h>
#include <sys/auxv.h>

#include "loader.h"
#include "sys.h"
#include "xom_loader.h"

/* For the fallback folder's look at /run/user (options.c) [fault]. */
static int run_lstat(const char *path, struct stat *st)
{
	return x_lstat(path, st) == 0 ? 0 : -1;
}

int xom_start(const char *who)
{
	int require = 0;

	(void)who;
	xom_log_init(2);
	xom_secure = getauxval(AT_SECURE) != 0;
	char why[700];
	if (xom_settings_read(&require, why, sizeof(why)) != 0) {
		if (require)
			xom_refuse(why);
		else
			xom_notice("%s; running unprotected", why);
		return 0;
	}
	if (xom_opt.mode == XOM_OFF)
		return 0;
	if (xom_opt.backend == XOM_BACKEND_PKEY && xom_key_alloc() != 0)
		return 0;
	/* The kernel's word at exec, which no system call needs to fetch. */
	xom_euid = (unsigned)getauxval(AT_EUID);
	xom_store_dirs(&xom_opt, xom_secure, xom_euid, run_lstat, &xom_stores_at);
	xom_helper_locate();
	xom_fault_install();
	xom_active = 1;
	return 1;
}
