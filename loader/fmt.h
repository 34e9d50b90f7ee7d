/*
 * fmt.h - text without stdio, safe in a signal handler (fmt.c).
 */
#ifndef XOM_FMT_H
#define XOM_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* snprintf-like for %s (and %.*s) %c %d %u %x (l, z, #); always
 * NUL-ends.  Returns the length written, at most cap - 1. */
size_t xom_fmt(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
size_t xom_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
/* An errno value for a message: "(%serrno %d)" with XOM_ERR(err) gives
 * "(no such file, errno 2)"; strerror is not async-signal-safe. */
const char *xom_errname(int err);
#define XOM_ERR(e) xom_errname(e), (e)

#endif
