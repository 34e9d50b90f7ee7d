/*
 * fmt.c - xom_fmt, a small allocation-free printf for %s (with a
 * precision, %.*s), %c %d %u %x (with the l and z size modifiers and the #
 * flag for a 0x prefix), in the manner of OpenBSD's _dl_printf; and the
 * short names of the errno values that messages give.
 *
 * Phase: any, the fault handler included: stdio may allocate, take locks
 * and is not async-signal-safe.  A leaf: the runtime's messages
 * (say.c), the options' (options.c) and the xom command use it.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "fmt.h"

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

const char *xom_errname(int err)
{
	static const struct { int e; const char *s; } names[] = {
		{ ENOENT, "no such file, " }, { EACCES, "permission denied, " },
		{ ENOMEM, "out of memory or map count, " }, { EINVAL, "invalid, " },
		{ ENOSPC, "no space, " }, { ENOSYS, "not implemented, " },
		{ EPERM, "not permitted, " }, { EEXIST, "exists, " },
		{ EFBIG, "file too large, " }, { EROFS, "read-only file system, " },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].s;
	return "";
}

struct spec { int lng, hash, prec; };

static void put_arg(struct out *o, char conv, const struct spec *sp,
                    va_list *ap)
{
	unsigned long long u;
	long long s;
	int lng = sp->lng;

	switch (conv) {
	case 's': {
		const char *str = va_arg(*ap, const char *);
		str = str ? str : "(null)";
		size_t n = strlen(str);
		if (sp->prec >= 0 && (size_t)sp->prec < n)
			n = (size_t)sp->prec;
		put(o, str, n);
		return;
	}
	case 'c': {
		char c = (char)va_arg(*ap, int);
		put(o, &c, 1);
		return;
	}
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
		put_num(o, u, conv == 'x' ? 16 : 10, sp->hash && conv == 'x');
		return;
	default:
		put(o, "%", 1);
		put(o, &conv, 1);
	}
}

size_t xom_vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct out o = { buf, 0, cap };
	va_list aq;

	if (!cap)
		return 0;
	va_copy(aq, ap);
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			put(&o, f, 1);
			continue;
		}
		struct spec sp = { 0, 0, -1 };
		if (*++f == '#')
			sp.hash = 1, f++;
		if (*f == '.' && f[1] == '*') {
			sp.prec = va_arg(aq, int);
			f += 2;
		}
		while (*f == 'l' || *f == 'z')
			sp.lng = 1, f++;
		if (!*f)
			break;
		if (*f == '%')
			put(&o, "%", 1);
		else
			put_arg(&o, *f, &sp, &aq);
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
