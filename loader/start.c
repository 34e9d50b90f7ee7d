/*
 * start.c - start-up: the options, the stores, the key, the helper and the
 * handler.
 *
 * Phase: start.  Runs once, in the preload constructor or in the audit
 * module's la_version, before the host's main and, for the audit module,
 * before any other object is mapped.  It may not use stdio or the host's
 * malloc: everything it keeps lives in static storage.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "loader.h"
#include "xom_loader.h"

struct xom_opts xom_opt = { .log_fd = 2 };
int xom_active;
int xom_started;
int xom_secure;

/* XOM_OPTIONS is copied here; the option strings point into it. */
static char opt_buf[4096];
static char user_dir[XOM_PATH_MAX], fallback_dir[XOM_PATH_MAX];
static const char *store_dirs[XOM_NSTORES];

void xom_refuse(const char *why)
{
	xom_say("refusing to run: %s (require=1)", why);
	_exit(XOM_REFUSED_STATUS);
}

const char *xom_store_dir(int i)
{
	return i >= 0 && i < XOM_NSTORES ? store_dirs[i] : NULL;
}

/* The user's stores: the cache directory the options choose, and a
 * private directory to fall back on when that cannot be written
 * ($XDG_RUNTIME_DIR/xom, else /tmp/xom-UID).  None for a secure-execution
 * program, whose user's files it must not trust. */
static void choose_stores(void)
{
	if (xom_opt.store && strcmp(xom_opt.store, "off"))
		store_dirs[XOM_STORE_SYSTEM] = xom_opt.store;
	if (xom_secure || xom_cache_dir(&xom_opt, user_dir, sizeof(user_dir))
	                  == XOM_CACHE_OFF)
		return;
	if (user_dir[0] == '/')
		store_dirs[XOM_STORE_USER] = user_dir;
	const char *run = getenv("XDG_RUNTIME_DIR");
	if (run && run[0] == '/')
		xom_fmt(fallback_dir, sizeof(fallback_dir), "%s/xom", run);
	else
		xom_fmt(fallback_dir, sizeof(fallback_dir), "/tmp/xom-%u",
		        (unsigned)geteuid());
	if (!store_dirs[XOM_STORE_USER]
	    || strcmp(fallback_dir, store_dirs[XOM_STORE_USER]))
		store_dirs[XOM_STORE_FALLBACK] = fallback_dir;
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
		xom_log_init(fd);
	}
	if (xom_opt.seal && xom_opt.mode == XOM_AUDIT) {
		xom_say("XOM_OPTIONS: seal=1 cannot be combined with mode=audit, which must make pages readable again");
		return -1;
	}
	return 0;
}

/*
 * In secure-execution mode the environment belongs to an untrusted caller,
 * as glibc treats its own variables: every option that names a path or can
 * weaken the protection is ignored, and invalid options do not turn xom
 * off.  Returns 0 to go on, or -1 when xom should stay off.
 */
static int read_secure_options(void)
{
	int require = 0;
	char err[512], ignored[256];

	if (xom_options_parse(getenv("XOM_OPTIONS"), &xom_opt, opt_buf,
	                      sizeof(opt_buf), &require, err, sizeof(err)) != 0) {
		xom_options_parse(NULL, &xom_opt, opt_buf, sizeof(opt_buf), &require,
		                  err, sizeof(err));
		xom_say("XOM_OPTIONS ignored in a secure-execution program (%s)", err);
		return 0;
	}
	xom_options_secure(&xom_opt, ignored, sizeof(ignored));
	if (ignored[0])
		xom_say("XOM_OPTIONS: %s ignored in a secure-execution program",
		        ignored);
	return 0;
}

int xom_start(const char *who)
{
	int require = 0;

	(void)who;
	xom_log_init(2);
	xom_secure = getauxval(AT_SECURE) != 0;
	if (xom_secure) {
		read_secure_options();
	} else if (read_options(&require) != 0) {
		if (require)
			xom_refuse("XOM_OPTIONS is invalid");
		xom_say("XOM_OPTIONS is invalid; running unprotected");
		return 0;
	}
	if (xom_opt.mode == XOM_OFF)
		return 0;
	if (xom_opt.backend == XOM_BACKEND_PKEY && xom_key_alloc() != 0)
		return 0;
	choose_stores();
	xom_helper_locate();
	xom_fault_install();
	xom_active = 1;
	return 1;
}
