/*
 * start.c - start-up: the options, the key, the profile and the handler.
 *
 * Phase: start.  Runs once, in the preload constructor or in the audit
 * module's la_version, before the host's main and, for the audit module,
 * before any other object is mapped.  It may not use stdio or the host's
 * malloc: everything it keeps lives in static storage.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "loader.h"
#include "xom_loader.h"

struct xom_opts xom_opt = { .log_fd = 2 };
int xom_active;

/* XOM_OPTIONS is copied here; the option strings point into it. */
static char opt_buf[4096];

void xom_refuse(const char *why)
{
	xom_say("refusing to run: %s (require=1)", why);
	_exit(127);
}

/* The options, with the log file opened.  Returns 0, or -1 after one line
 * naming the first bad item. */
static int read_options(int *require)
{
	char err[512];

	if (xom_options_parse(getenv("XOM_OPTIONS"), &xom_opt, opt_buf,
	                      sizeof(opt_buf), require, err, sizeof(err)) != 0) {
		xom_say("XOM_OPTIONS: %s", err);
		return -1;
	}
	if (xom_opt.log) {
		int fd = open(xom_opt.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		              0600);
		if (fd < 0) {
			xom_say("XOM_OPTIONS: cannot open log file '%s'", xom_opt.log);
			return -1;
		}
		xom_opt.log_fd = fd;
	}
	return 0;
}

int xom_start(const char *who)
{
	int require = 0;

	(void)who;
	if (read_options(&require) != 0) {
		if (require)
			xom_refuse("XOM_OPTIONS is invalid");
		xom_say("XOM_OPTIONS is invalid; running unprotected");
		return 0;
	}
	if (xom_opt.mode == XOM_OFF)
		return 0;
	if (xom_opt.backend == XOM_BACKEND_PKEY && xom_key_alloc() != 0)
		return 0;
	xom_profile_load();
	xom_fault_install();
	xom_active = 1;
	return 1;
}
