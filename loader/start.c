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

/* Zero-initialised, so that it lies with the other variables that every
 * start writes, in .bss, not alone in a page of .data. */
struct xom_opts xom_opt;
int xom_active;
int xom_started;
int xom_secure;
unsigned xom_euid;

static struct xom_dirs store_dirs;

/*
 * The way back from a configuration that refuses every program (require=1
 * where xom cannot protect: no PKU, a seccomp filter, missing plans):
 *   - the word xom.require=0 on the kernel command line waives require=1
 *     in every process.  Only root (the boot loader's) sets it, so a
 *     secure-execution program honours it too, while it ignores its
 *     caller's XOM_OPTIONS=require=0;
 *   - the xom command itself is never refused, so that root can still run
 *     xom disable --system or xom check.  It is named by the file the
 *     kernel runs (/proc/self/exe), which no caller can choose.
 * Both are looked at only when a refusal is due: reading /proc/cmdline at
 * every start would cost every program three system calls.
 */
#define WAIVE_WORD "xom.require=0"

/* Whether /proc/cmdline holds word, as a whole word. */
static int cmdline_has(const char *word)
{
	char text[4096];
	size_t n = strlen(word);
	long fd = x_open("/proc/cmdline", O_RDONLY | O_CLOEXEC, 0);

	if (SYS_FAILED(fd))
		return 0;
	long got = x_read((int)fd, text, sizeof(text) - 1);
	x_close((int)fd);
	if (got <= 0)
		return 0;
	text[got] = 0;
	for (const char *p = text; (p = strstr(p, word)); p += n)
		if ((p == text || p[-1] == ' ' || p[-1] == '\t')
		    && (!p[n] || p[n] == ' ' || p[n] == '\t' || p[n] == '\n'))
			return 1;
	return 0;
}

const char *xom_waiver(void)
{
	static const char *why;
	static int asked;

	if (!asked) {
		asked = 1;
		if (cmdline_has(WAIVE_WORD))
			why = "require=1 is waived by " WAIVE_WORD " on the kernel command line";
		else if (xom_own_command())
			why = "require=1 does not apply to the xom command itself";
	}
	return why;
}

void xom_refuse(const char *why)
{
	const char *waived = xom_waiver();

	if (!waived) {
		xom_say("refusing to run: %s (require=1)", why);
		x_exit_group(XOM_REFUSED_STATUS);
	}
	xom_notice("%s; running unprotected: %s", why, waived);
}

/* For the fallback folder's look at /run/user (options.c) [fault]. */
static int run_lstat(const char *path, struct stat *st)
{
	return x_lstat(path, st) == 0 ? 0 : -1;
}

const char *xom_store_dir(int i, char *buf, size_t cap)
{
	return xom_dir_path(&store_dirs, i, buf, cap);
}

void xom_populate(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p & ~(XOM_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + len + XOM_PAGE - 1) & ~(XOM_PAGE - 1);

	/* A system call costs about what two faults save. */
	if (hi - lo >= 3 * XOM_PAGE)
		sys3(SYS_madvise, (long)lo, (long)(hi - lo), 23 /* MADV_POPULATE_WRITE */);
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
	xom_store_dirs(&xom_opt, xom_secure, xom_euid, run_lstat, &store_dirs);
	xom_helper_locate();
	xom_fault_install();
	xom_active = 1;
	return 1;
}
