/*
 * options.c - XOM_OPTIONS, parsed by the table in options.def.
 *
 * Shared by the runtime (start phase: no stdio, no allocation, so messages
 * are built by hand here) and the xom command.  The parser has no side
 * effects: opening the log file is the caller's business.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

enum kind { K_ENUM, K_INT, K_PATH, K_DIR_OFF, K_LIST };

struct entry {
	const char *key;
	enum kind kind;
	size_t off;             /* of the field in struct xom_opts */
	const char *def, *values;
};

static const struct entry entries[] = {
#define XOM_OPT(key, kind, def, values, help) \
	{ #key, K_##kind, offsetof(struct xom_opts, key), def, values },
#include "options.def"
#undef XOM_OPT
};

const struct xom_opt_info xom_opt_table[] = {
#define XOM_OPT(key, kind, def, values, help) { #key, #kind, def, values, help },
#include "options.def"
#undef XOM_OPT
};
const size_t xom_opt_count = sizeof(entries) / sizeof(entries[0]);

/* A message buffer that never overflows and always ends in NUL. */
struct text { char *p; size_t n, cap; };

static void put(struct text *t, const char *s, size_t n)
{
	if (!t->cap)
		return;
	if (n > t->cap - 1 - t->n)
		n = t->cap - 1 - t->n;
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = 0;
}

static void puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

static int fail(char *err, size_t cap, const char *a, const char *b,
                const char *c)
{
	struct text t = { err, 0, cap };

	if (cap)
		err[0] = 0;
	puts_(&t, a);
	puts_(&t, b ? b : "");
	puts_(&t, c ? c : "");
	return -1;
}

/* The index of v among the '|'-separated values, or -1. */
static int enum_index(const char *values, const char *v)
{
	size_t vl = strlen(v);
	int i = 0;

	for (const char *p = values;; i++) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == vl && !memcmp(p, v, n))
			return i;
		if (!bar)
			return -1;
		p = bar + 1;
	}
}

/* "enforce|audit|off" as "enforce, audit or off". */
static void put_choices(struct text *t, const char *values)
{
	for (const char *p = values; *p;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		put(t, p, n);
		if (!bar)
			break;
		p = bar + 1;
		puts_(t, strchr(p, '|') ? ", " : " or ");
	}
}

/* A decimal number within the "LO-HI" of values, or -1. */
static long in_range(const char *values, const char *v)
{
	char *end;
	long lo = strtol(values, &end, 10);
	long hi = strtol(end + 1, NULL, 10);

	if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 9)
		return -1;
	long n = strtol(v, NULL, 10);
	return n >= lo && n <= hi ? n : -1;
}

static int set_value(const struct entry *e, struct xom_opts *o, const char *v,
                     char *err, size_t cap)
{
	char *field = (char *)o + e->off;
	struct text t = { err, 0, cap };
	int n;

	if (cap)
		err[0] = 0;
	switch (e->kind) {
	case K_ENUM:
		if ((n = enum_index(e->values, v)) >= 0) {
			memcpy(field, &n, sizeof(n));
			return 0;
		}
		puts_(&t, e->key);
		puts_(&t, " must be ");
		put_choices(&t, e->values);
		break;
	case K_INT:
		if ((n = (int)in_range(e->values, v)) >= 0) {
			memcpy(field, &n, sizeof(n));
			return 0;
		}
		puts_(&t, e->key);
		puts_(&t, " must be a number ");
		puts_(&t, e->values);
		break;
	case K_PATH:
	case K_DIR_OFF:
		if (!*v)
			return fail(err, cap, e->key, e->kind == K_PATH
			            ? " needs a path" : " needs a directory or off", NULL);
		memcpy(field, &v, sizeof(v));
		return 0;
	case K_LIST:
		memcpy(field, &v, sizeof(v));
		return 0;
	}
	puts_(&t, ", got '");
	puts_(&t, v);
	puts_(&t, "'");
	return -1;
}

static void set_default(struct xom_opts *o, const struct entry *e)
{
	char *field = (char *)o + e->off;

	if (e->kind == K_ENUM || e->kind == K_INT) {
		int n = e->kind == K_ENUM ? enum_index(e->values, e->def)
		        : (int)in_range(e->values, e->def);
		memcpy(field, &n, sizeof(n));
	} else {
		const char *v = *e->def ? e->def : NULL;
		memcpy(field, &v, sizeof(v));
	}
}

static void set_defaults(struct xom_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->log_fd = 2;
	for (size_t i = 0; i < xom_opt_count; i++)
		set_default(o, &entries[i]);
}

/* Whether the value of e in o differs from the default in a way that an
 * untrusted caller must not choose: every path, and every value that can
 * leave code readable.  require=1 and seal=1 only ask for more, and
 * verbose only says more. */
static int untrusted(const struct xom_opts *o, const struct entry *e)
{
	struct xom_opts d;
	const char *f = (const char *)o + e->off;

	set_defaults(&d);
	if (!strcmp(e->key, "require") || !strcmp(e->key, "seal")
	    || !strcmp(e->key, "verbose"))
		return 0;
	return memcmp(f, (const char *)&d + e->off,
	              e->kind == K_ENUM || e->kind == K_INT ? sizeof(int)
	                                                    : sizeof(char *)) != 0;
}

void xom_options_secure(struct xom_opts *o, char *ignored, size_t cap)
{
	struct text t = { ignored, 0, cap };

	if (cap)
		ignored[0] = 0;
	for (size_t i = 0; i < xom_opt_count; i++) {
		if (!untrusted(o, &entries[i]))
			continue;
		if (t.n)
			puts_(&t, ",");
		puts_(&t, entries[i].key);
		set_default(o, &entries[i]);
	}
}

size_t xom_opt_item(const char *text, size_t *keylen)
{
	size_t n = strcspn(text, ":");
	const char *eq = memchr(text, '=', n);

	*keylen = eq ? (size_t)(eq - text) : n;
	return n;
}

/* item is one NUL-terminated item whose key is keylen bytes long. */
static int parse_pair(struct xom_opts *o, char *item, size_t keylen,
                      char *err, size_t cap)
{
	if (!item[keylen] || !keylen)
		return fail(err, cap, "expected key=value, got '", item, "'");
	item[keylen] = 0;
	const char *v = item + keylen + 1;
	for (size_t i = 0; i < xom_opt_count; i++)
		if (!strcmp(item, entries[i].key))
			return set_value(&entries[i], o, v, err, cap);
	return fail(err, cap, "unknown key '", item, "'");
}

int xom_options_parse(const char *text, struct xom_opts *o, char *buf,
                      size_t cap, int *require, char *err, size_t errcap)
{
	int bad = 0;

	set_defaults(o);
	*require = 0;
	if (errcap)
		err[0] = 0;
	if (!text || !*text)
		return 0;
	if (strlen(text) >= cap)
		return fail(err, errcap, "too long", NULL, NULL);
	strcpy(buf, text);
	for (char *s = buf, *next; s; s = next) {
		size_t kl, n = xom_opt_item(s, &kl);
		next = s[n] ? s + n + 1 : NULL;
		s[n] = 0;
		if (!n)
			continue;
		if (!strcmp(s, "require=1"))
			*require = 1;
		if (!bad && parse_pair(o, s, kl, err, errcap) != 0)
			bad = 1;
	}
	return bad ? -1 : 0;
}

static int join(char *buf, size_t cap, const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);

	if (na + nb >= cap)
		return -1;
	memcpy(buf, a, na);
	memcpy(buf + na, b, nb + 1);
	return 0;
}

int xom_cache_dir(const struct xom_opts *o, char *buf, size_t cap)
{
	if (o->cache && !strcmp(o->cache, "off"))
		return XOM_CACHE_OFF;
	if (o->cache)
		return join(buf, cap, o->cache, "") ? XOM_CACHE_NONE : XOM_CACHE_DIR;
	const char *base = getenv("XDG_CACHE_HOME");
	const char *tail = "/xom";
	if (!base || base[0] != '/') {
		base = getenv("HOME");
		tail = "/.cache/xom";
	}
	if (!base || base[0] != '/' || join(buf, cap, base, tail) != 0)
		return XOM_CACHE_NONE;
	return XOM_CACHE_DIR;
}

int xom_opt_excludes(const struct xom_opts *o, const char *path)
{
	const char *base = strrchr(path, '/');
	char pat[256];

	base = base ? base + 1 : path;
	for (const char *p = o->exclude; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = 0;
			if (!fnmatch(pat, path, 0) || !fnmatch(pat, base, 0))
				return 1;
		}
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}
