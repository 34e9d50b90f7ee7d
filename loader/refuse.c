/*
 * refuse.c - require=1: refusing a process that xom cannot protect, and
 * the two ways back from a configuration that refuses every program.
 *
 * Phase: start or object: a refusal is due when start-up or a batch finds
 * what it cannot protect.
 */
#include "loader.h"
#include "sys.h"

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

