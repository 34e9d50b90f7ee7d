/*
 * settings.c - where the options come from, and when xom speaks up.
 *
 * Phase: start (xom_settings_read), then any phase but fault (xom_notice).
 *
 * The options are the table's defaults, then the lines of /etc/xom.conf
 * whose pattern matches the program, then XOM_OPTIONS.  The file counts only
 * when it and /etc are root's and writable by root alone, and the program is
 * named by the kernel (/proc/self/exe), never by a path its caller chose.
 * In a secure-execution program (set-user-ID, set-group-ID, file
 * capabilities) the environment belongs to an untrusted caller, as glibc
 * treats its own variables: only what asks for more protection, or says
 * more or less, is taken from it (xom_options_secure), and invalid items
 * there do not turn xom off.
 *
 * Notices are the lines that say xom stepped aside or left something
 * unprotected.  notice=once says the first one, then rewrites its own
 * "notice=once" in the environment's XOM_OPTIONS to "notice=done" (same
 * length, in place: the string is the process's own), so that the
 * programs it starts inherit the silence: one line per run of a shell
 * script or a make, not one per process.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"

#define CONF_PATH "/etc/xom.conf"
#define CONF_MAX (1u << 20)

/* XOM_OPTIONS, copied: options point in.  A short text (most are) goes
 * among the small variables, a long one in a page of its own. */
static char env_short[256];
static char env_long[4096] XOM_COLD;
static char *conf;              /* /etc/xom.conf, mapped: options point in */

/* The file behind fd is root's and writable by root alone, and so is its
 * directory: nobody else can have chosen what it says. */
static int root_only(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & 022);
}

/*
 * The text of /etc/xom.conf in fresh anonymous memory (NUL-ended), with
 * its length; NULL when there is none, or none to trust (after a notice).
 */
static char *read_conf(size_t *len)
{
	struct stat st, dir;
	long fd = x_open(CONF_PATH, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);

	if (fd == -ENOENT)
		return NULL;
	if (fd < 0) {
		xom_notice(CONF_PATH " ignored: cannot open it (%serrno %d)",
		           XOM_ERR((int)-fd));
		return NULL;
	}
	char *text = NULL;
	const char *why = NULL;
	if (x_fstat((int)fd, &st) != 0 || x_stat("/etc", &dir) != 0)
		why = "cannot stat it or /etc";
	else if (!S_ISREG(st.st_mode) || !root_only(&st) || !root_only(&dir))
		why = "it or /etc is not root's, or others may write it";
	else if ((size_t)st.st_size >= CONF_MAX)
		why = "it is larger than 1 MB";
	if (!why) {
		text = x_mmap(NULL, (size_t)st.st_size + 1, PROT_READ | PROT_WRITE,
		              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long n = X_MAP_FAILED(text) ? -ENOMEM
		         : x_read((int)fd, text, (size_t)st.st_size);
		if (n != st.st_size) {
			why = "cannot read it";
			if (!X_MAP_FAILED(text))
				x_munmap(text, (size_t)st.st_size + 1);
			text = NULL;
		}
	}
	x_close((int)fd);
	if (why) {
		xom_notice(CONF_PATH " ignored: %s", why);
		return NULL;
	}
	*len = (size_t)st.st_size;
	return text;
}

/* The program as the kernel names it, or NULL. */
static const char *program(char *buf, size_t cap)
{
	long n = x_readlink("/proc/self/exe", buf, cap - 1);

	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return buf;
}

/* Applies the lines of the text that match the program.  Not inlined:
 * its buffers are on the stack only when there is a file, and every stack
 * page that the warm path reaches is a page fault. */
static __attribute__((noinline)) int apply_conf(size_t len, struct xom_opts *o,
                                                int *require, char *why,
                                                size_t cap)
{
	char prog[XOM_PATH_MAX], err[512];
	unsigned line;

	if (xom_conf_apply(conf, len, program(prog, sizeof(prog)), o, require,
	                   &line, err, sizeof(err)) != 0) {
		xom_fmt(why, cap, CONF_PATH ", line %u: %s", line, err);
		return -1;
	}
	return 0;
}

/* Applies the matching lines of /etc/xom.conf.  Returns 0, or -1 with
 * why set when a matching line is invalid. */
static int read_conf_options(struct xom_opts *o, int *require, char *why,
                             size_t cap)
{
	size_t len;

	if (!(conf = read_conf(&len)))
		return 0;
	return apply_conf(len, o, require, why, cap);
}

static int open_log(char *why, size_t cap)
{
	if (!xom_opt.log)
		return 0;
	long fd = x_open(xom_opt.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	                 0600);
	if (fd < 0) {
		xom_fmt(why, cap, "XOM_OPTIONS: cannot open log file '%s' (%serrno %d)",
		        xom_opt.log, XOM_ERR((int)-fd));
		return -1;
	}
	xom_log_init((int)fd);
	return 0;
}

int xom_settings_read(int *require, char *why, size_t cap)
{
	struct xom_opts env;
	char err[512], ignored[256], conf_why[600];
	int conf_require = 0;

	xom_options_defaults(&xom_opt);
	xom_options_defaults(&env);
	const char *text = getenv("XOM_OPTIONS");
	char *env_buf = text && strlen(text) >= sizeof(env_short) ? env_long : env_short;
	size_t env_cap = env_buf == env_long ? sizeof(env_long) : sizeof(env_short);
	int env_bad = xom_options_apply(text, &env, env_buf,
	                                env_cap, require, err,
	                                sizeof(err));
	/* The environment's notice policy counts from the first line, the
	 * configuration file's own included. */
	if (env.set & XOM_OPT_BIT(notice))
		xom_opt.notice = env.notice;
	int conf_bad = read_conf_options(&xom_opt, &conf_require, conf_why,
	                                 sizeof(conf_why));
	if (env_bad && !xom_secure) {
		xom_fmt(why, cap, "XOM_OPTIONS: %s", err);
		return -1;
	}
	if (env_bad) {
		xom_notice("XOM_OPTIONS ignored in a secure-execution program (%s)",
		           err);
	} else {
		xom_options_merge(&xom_opt, &env, xom_secure, ignored,
		                  sizeof(ignored));
		if (ignored[0])
			xom_notice("XOM_OPTIONS: %s ignored in a secure-execution program",
			           ignored);
	}
	*require |= conf_require | (xom_opt.require == 1);
	if (open_log(why, cap) != 0)
		return -1;
	if (conf_bad) {
		xom_copy_str(why, cap, conf_why);
		return -1;
	}
	if (xom_opt.seal && xom_opt.mode == XOM_AUDIT) {
		xom_copy_str(why, cap, "XOM_OPTIONS: seal=1 cannot be combined with mode=audit, which must make pages readable again");
		return -1;
	}
	return 0;
}

/* Rewrites the environment's last notice=once to notice=done. */
static void mark_done(void)
{
	char *env = getenv("XOM_OPTIONS"), *last = NULL;

	for (char *p = env; p && (p = strstr(p, "notice=once")); p += 11)
		if (p == env || p[-1] == ':')
			last = p;
	if (last && (!last[11] || last[11] == ':'))
		memcpy(last + 7, "done", 4);
}

void xom_notice(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (xom_opt.notice == XOM_NOTICE_DONE || xom_opt.notice == XOM_NOTICE_OFF)
		return;
	va_start(ap, fmt);
	xom_vfmt(line, sizeof(line), fmt, ap);
	va_end(ap);
	xom_say("%s", line);
	if (xom_opt.notice == XOM_NOTICE_ONCE) {
		xom_opt.notice = XOM_NOTICE_DONE;
		mark_done();
	}
}
