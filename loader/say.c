/*
 * say.c - xom's one-line messages: "xom: ...\n" on the log descriptor.
 *
 * Phase: any, the fault handler included.  The formatter is a small,
 * allocation-free printf for %s %c %d %u %x (with the l and z size
 * modifiers and the # flag for a 0x prefix) and %m (errno's name and
 * number), in the manner of OpenBSD's _dl_printf: stdio may allocate, take
 * locks and is not async-signal-safe.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"

struct out { char *p; size_t n, cap; };

static void put(struct out *o, const char *s, size_t n)
{
	if (n > o->cap - 1 - o->n)
		n = o->cap - 1 - o->n;
	memcpy(o->p + o->n, s, n);
	o->n += n;
}

static void put_num(struct out *o, unsigned long long v, unsigned base,
                    int prefix)
{
	char d[24];
	int i = sizeof(d);

	do
		d[--i] = "0123456789abcdef"[v % base];
	while (v /= base);
	if (prefix)
		put(o, "0x", 2);
	put(o, d + i, sizeof(d) - (size_t)i);
}

/* strerror may allocate and is not async-signal-safe; name the common
 * errors here and give the number always. */
static void put_errno(struct out *o, int err)
{
	static const struct { int e; const char *s; } names[] = {
		{ ENOENT, "no such file" }, { EACCES, "permission denied" },
		{ ENOMEM, "out of memory or map count" }, { EINVAL, "invalid" },
		{ ENOSPC, "no space" }, { ENOSYS, "not implemented" },
		{ EPERM, "not permitted" }, { EEXIST, "exists" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err) {
			put(o, names[i].s, strlen(names[i].s));
			put(o, ", ", 2);
			break;
		}
	put(o, "errno ", 6);
	put_num(o, (unsigned)err, 10, 0);
}

static void put_arg(struct out *o, char conv, int lng, int hash, int err,
                    va_list *ap)
{
	unsigned long long u;
	long long s;

	switch (conv) {
	case 's': {
		const char *str = va_arg(*ap, const char *);
		str = str ? str : "(null)";
		put(o, str, strlen(str));
		return;
	}
	case 'c': {
		char c = (char)va_arg(*ap, int);
		put(o, &c, 1);
		return;
	}
	case 'm':
		put_errno(o, err);
		return;
	case 'd':
		s = lng ? va_arg(*ap, long) : va_arg(*ap, int);
		if (s < 0)
			put(o, "-", 1);
		put_num(o, s < 0 ? -(unsigned long long)s : (unsigned long long)s,
		        10, 0);
		return;
	case 'u':
	case 'x':
		u = lng ? va_arg(*ap, unsigned long) : va_arg(*ap, unsigned);
		put_num(o, u, conv == 'x' ? 16 : 10, hash && conv == 'x');
		return;
	default:
		put(o, "%", 1);
		put(o, &conv, 1);
	}
}

size_t xom_vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct out o = { buf, 0, cap };
	int err = errno;
	va_list aq;

	if (!cap)
		return 0;
	va_copy(aq, ap);
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			put(&o, f, 1);
			continue;
		}
		int hash = 0, lng = 0;
		if (*++f == '#')
			hash = 1, f++;
		while (*f == 'l' || *f == 'z')
			lng = 1, f++;
		if (!*f)
			break;
		if (*f == '%')
			put(&o, "%", 1);
		else
			put_arg(&o, *f, lng, hash, err, &aq);
	}
	va_end(aq);
	buf[o.n] = 0;
	return o.n;
}

size_t xom_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	size_t n = xom_vfmt(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

void xom_say(const char *fmt, ...)
{
	char line[1024];
	int saved = errno;
	va_list ap;

	memcpy(line, "xom: ", 5);
	va_start(ap, fmt);
	size_t n = 5 + xom_vfmt(line + 5, sizeof(line) - 6, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	ssize_t r;
	do
		r = write(xom_opt.log_fd, line, n);
	while (r < 0 && errno == EINTR);
	errno = saved;
}
