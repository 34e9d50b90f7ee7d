/*
 * say.c - xom's one-line messages: "xom: ...\n" on the log descriptor.
 *
 * Phase: any, the fault handler included.  The lines are made by xom_fmt
 * (fmt.c): stdio may allocate, take locks and is not async-signal-safe.
 *
 * The log descriptor is a number that the host may close and reuse: a
 * daemon that closes its descriptors and opens a database would get xom's
 * lines in the database.  So the file behind it is recorded when xom starts
 * and checked before every line; a line for a file that is no longer the
 * one recorded is dropped.  A line that would pass the file-size limit is
 * dropped too: the write would raise SIGXFSZ and kill the host. *
 * Where the log descriptor of a service (INVOCATION_ID) is /dev/null or
 * closed, as StandardError=null has it (journald's own unit does), a line
 * would reach no one.  There the first line of a process, and its first report of a
 * blocked access, also go to the journal (its native socket, else syslog's
 * /dev/log) as one datagram sent without waiting: `journalctl -t xom`
 * shows them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "loader.h"
#include "sys.h"

static struct { int fd, known; dev_t dev; ino_t ino; } log_id;  /* .bss: see start.c */

/* Whether lines also go to the journal, and which kinds went already
 * (1 << XOM_SAY_*). */
static struct { int on; unsigned sent; } journal;
/* Whether this process is a systemd service: systemd sets INVOCATION_ID
 * for every unit it starts, which the caller of a secure-execution
 * program could set too, so there it is not believed. */
static int in_unit;

int xom_in_unit(void)
{
	return in_unit;
}

void xom_log_init(int fd)
{
	struct stat st;

	log_id.fd = fd;
	log_id.known = x_fstat(fd, &st) == 0;
	log_id.dev = st.st_dev;
	log_id.ino = st.st_ino;
	xom_opt.log_fd = log_id.known ? fd : -1;
	in_unit = !getauxval(AT_SECURE) && getenv("INVOCATION_ID");
	journal.on = in_unit
	             && (!log_id.known || (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)));
}

/* Sends one datagram to the AF_UNIX socket at path; 0 or -errno. */
static long send_to(const char *path, const char *msg, size_t n)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	long s = sys3(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (SYS_FAILED(s))
		return s;
	memcpy(a.sun_path, path, strlen(path) + 1);
	long r = sys6(SYS_sendto, s, (long)msg, (long)n, MSG_DONTWAIT | MSG_NOSIGNAL,
	              (long)&a, (long)sizeof(a));
	x_close((int)s);
	return r < 0 ? r : 0;
}

/* line is "xom: ...\n", n bytes with the newline. */
static void to_journal(const char *line, size_t n)
{
	char msg[1200];
	static const char head[] = "PRIORITY=4\nSYSLOG_IDENTIFIER=xom\nMESSAGE=";
	size_t k = sizeof(head) - 1;

	if (n > sizeof(msg) - k)
		n = sizeof(msg) - k;
	memcpy(msg, head, k);
	memcpy(msg + k, line, n);
	if (send_to("/run/systemd/journal/socket", msg, k + n) == 0)
		return;
	/* syslog: priority 4 (warning) of facility user (1): <12>. */
	memcpy(msg, "<12>", 4);
	memcpy(msg + 4, line, n - 1);
	send_to("/dev/log", msg, 4 + n - 1);
}

/* Whether n more bytes fit under RLIMIT_FSIZE in the file st describes. */
static int fits(const struct stat *st, size_t n)
{
	struct rlimit rl;

	if (!S_ISREG(st->st_mode) || sys2(SYS_getrlimit, RLIMIT_FSIZE, (long)&rl) != 0
	    || rl.rlim_cur == RLIM_INFINITY)
		return 1;
	return (rlim_t)st->st_size + n <= rl.rlim_cur;
}

static int checked_fd(size_t n)
{
	struct stat st;

	if (!log_id.known || x_fstat(log_id.fd, &st) != 0
	    || st.st_dev != log_id.dev || st.st_ino != log_id.ino || !fits(&st, n))
		return -1;
	return log_id.fd;
}

int xom_log_fd(void)
{
	return checked_fd(0);
}

static void vsay(int kind, const char *fmt, va_list ap)
{
	char line[1024];

	memcpy(line, "xom: ", 5);
	size_t n = 5 + xom_vfmt(line + 5, sizeof(line) - 6, fmt, ap);
	line[n++] = '\n';
	if (journal.on && !(journal.sent & (1u << kind))) {
		journal.sent |= 1u << kind;
		to_journal(line, n);
	}
	int fd = checked_fd(n);
	long r;
	do
		r = fd < 0 ? 0 : x_write(fd, line, n);
	while (r == -EINTR);
}

void xom_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(XOM_SAY_LINE, fmt, ap);
	va_end(ap);
}

void xom_say_fault(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(XOM_SAY_FAULT, fmt, ap);
	va_end(ap);
}
