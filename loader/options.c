/*
 * options.c - XOM_OPTIONS, parsed by the table in options.def.
 *
 * Shared by the runtime (start phase: no stdio, no allocation, so messages
 * are made with xom_fmt, fmt.c) and the xom command.  The parser has no side
 * effects: opening the log file is the caller's business.
 *
 * Phase: start, in the runtime (parsed once; xom_dir_path is also called
 * in the fault phase, and allocates nothing); any time in the command.
 */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fmt.h"
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
/* err is a + b + c: the pieces of a message, b and c possibly NULL. */
static int fail(char *err, size_t cap, const char *a, const char *b,
                const char *c)
{
	xom_fmt(err, cap, "%s%s%s", a, b ? b : "", c ? c : "");
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

/* "enforce|audit|off" as "enforce, audit or off", in buf. */
static const char *choices(const char *values, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = 0;
	for (const char *p = values; *p && n < cap;) {
		const char *bar = strchr(p, '|');
		int len = bar ? (int)(bar - p) : (int)strlen(p);
		const char *sep = !bar ? "" : strchr(bar + 1, '|') ? ", " : " or ";
		n += xom_fmt(buf + n, cap - n, "%.*s%s", len, p, sep);
		if (!bar)
			break;
		p = bar + 1;
	}
	return buf;
}

/* The decimal number at *s (at most 9 digits), moving *s past it; -1 when
 * there is none. */
static long number(const char **s)
{
	long n = 0;
	int digits = 0;

	for (; **s >= '0' && **s <= '9' && digits < 10; (*s)++, digits++)
		n = n * 10 + (**s - '0');
	return digits && digits <= 9 ? n : -1;
}

/* A decimal number within the "LO-HI" of values, or -1. */
static long in_range(const char *values, const char *v)
{
	const char *p = values;
	long lo = number(&p);
	p += *p == '-';
	long hi = number(&p);
	long n = number(&v);

	return !*v && n >= lo && n <= hi ? n : -1;
}

static int set_value(const struct entry *e, struct xom_opts *o, const char *v,
                     char *err, size_t cap)
{
	char *field = (char *)o + e->off;
	char any[200];
	int n;

	if (cap)
		err[0] = 0;
	switch (e->kind) {
	case K_ENUM:
		if ((n = enum_index(e->values, v)) >= 0) {
			memcpy(field, &n, sizeof(n));
			return 0;
		}
		xom_fmt(err, cap, "%s must be %s, got '%s'", e->key,
		        choices(e->values, any, sizeof(any)), v);
		return -1;
	case K_INT:
		if ((n = (int)in_range(e->values, v)) >= 0) {
			memcpy(field, &n, sizeof(n));
			return 0;
		}
		xom_fmt(err, cap, "%s must be a number %s, got '%s'", e->key,
		        e->values, v);
		return -1;
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

/* What a secure-execution program takes from its untrusted caller's
 * environment: require=1 and seal=1 only ask for more, verbose and notice
 * only say more or less on a descriptor that the caller owns anyway. */
static int trusted_from_caller(const struct xom_opts *env, const struct entry *e)
{
	if (!strcmp(e->key, "require"))
		return env->require == 1;
	if (!strcmp(e->key, "seal"))
		return env->seal == 1;
	return !strcmp(e->key, "verbose") || !strcmp(e->key, "notice");
}

void xom_options_merge(struct xom_opts *o, const struct xom_opts *env,
                       int secure, char *ignored, size_t cap)
{
	size_t n = 0;

	if (cap)
		ignored[0] = 0;
	for (size_t i = 0; i < xom_opt_count; i++) {
		const struct entry *e = &entries[i];
		if (!(env->set & 1ull << i))
			continue;
		if (secure && !trusted_from_caller(env, e)) {
			if (n < cap)
				n += xom_fmt(ignored + n, cap - n, "%s%s", n ? "," : "",
				             e->key);
			continue;
		}
		memcpy((char *)o + e->off, (const char *)env + e->off,
		       e->kind == K_ENUM || e->kind == K_INT ? sizeof(int)
		                                             : sizeof(char *));
		o->set |= 1ull << i;
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
	for (size_t i = 0; i < xom_opt_count; i++) {
		if (strcmp(item, entries[i].key))
			continue;
		o->set |= 1ull << i;
		return set_value(&entries[i], o, v, err, cap);
	}
	return fail(err, cap, "unknown key '", item, "'");
}

void xom_options_defaults(struct xom_opts *o)
{
	set_defaults(o);
}

/* Applies the items of buf (modified in place, and pointed into). */
static int apply_items(char *buf, struct xom_opts *o, int *require, char *err,
                       size_t errcap)
{
	int bad = 0;

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

int xom_options_apply(const char *text, struct xom_opts *o, char *buf,
                      size_t cap, int *require, char *err, size_t errcap)
{
	*require = 0;
	if (errcap)
		err[0] = 0;
	if (!text || !*text)
		return 0;
	if (strlen(text) >= cap)
		return fail(err, errcap, "too long", NULL, NULL);
	strcpy(buf, text);
	return apply_items(buf, o, require, err, errcap);
}

int xom_options_parse(const char *text, struct xom_opts *o, char *buf,
                      size_t cap, int *require, char *err, size_t errcap)
{
	set_defaults(o);
	return xom_options_apply(text, o, buf, cap, require, err, errcap);
}

/* The next line of conf (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **at, char *end)
{
	char *line = *at;

	if (line >= end)
		return NULL;
	char *nl = memchr(line, '\n', (size_t)(end - line));
	*at = nl ? nl + 1 : end;
	if (nl)
		*nl = 0;
	return line;
}

/*
 * Splits one line of the file in place: *pat the pattern, *rest its
 * options (or "off").  Returns 0 for a blank or comment line,
 * 1 for a rule, -1 for a rule with something after its options other than
 * a '#' comment (with err set): options are one ':'-separated list, as in
 * XOM_OPTIONS, and a second word would otherwise be dropped unseen.
 */
static int conf_split(char *line, char **pat, char **rest, char *err,
                      size_t errcap)
{
	line += strspn(line, " \t");
	if (!*line || *line == '#')
		return 0;
	*pat = line;
	char *r = line + strcspn(line, " \t");
	if (*r)
		*r++ = 0;
	r += strspn(r, " \t");
	char *tail = r + strcspn(r, " \t#");
	char *more = tail + strspn(tail, " \t");
	*tail = 0;
	*rest = r;
	if (*more && *more != '#')
		return fail(err, errcap, "unexpected '", more,
		            "' after the options (one ':'-separated list per line)");
	if (!*r)
		return fail(err, errcap, "expected options or off after '", *pat, "'");
	return 1;
}

int xom_conf_apply(char *conf, size_t len, const char *prog,
                   struct xom_opts *o, int *require, unsigned *lineno,
                   char *err, size_t errcap)
{
	char *at = conf, *end = conf + len, *line, *pat, *rest;

	*lineno = 0;
	*require = 0;
	while ((line = next_line(&at, end))) {
		++*lineno;
		/* A line is read past its pattern only when the pattern
		 * matches: its errors are that program's alone. */
		line += strspn(line, " \t");
		size_t plen = strcspn(line, " \t");
		char save = line[plen];
		line[plen] = 0;
		int match = *line && *line != '#' && prog && fnmatch(line, prog, 0) == 0;
		line[plen] = save;
		if (!match)
			continue;
		if (conf_split(line, &pat, &rest, err, errcap) != 1)
			return -1;
		int req = 0;
		char off[] = "mode=off";    /* apply_items copies nothing out */
		if (apply_items(strcmp(rest, "off") ? rest : off, o, &req, err,
		                errcap) != 0)
			return -1;
		*require |= req;
	}
	return 0;
}

int xom_conf_check_line(char *line, const char **pat, struct xom_opts *o,
                        int *require, char *err, size_t errcap)
{
	char *p = NULL, *rest;
	int r = conf_split(line, &p, &rest, err, errcap);

	*pat = p;
	*require = 0;
	if (r <= 0)
		return r;
	char off[] = "mode=off";
	xom_options_defaults(o);
	return apply_items(strcmp(rest, "off") ? rest : off, o, require, err,
	                   errcap) == 0 ? 1 : -1;
}

int xom_join(char *buf, size_t cap, const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);

	if (na + nb >= cap)
		return -1;
	memmove(buf, a, na);
	memcpy(buf + na, b, nb + 1);
	return 0;
}

/* The user's cache as (base, tail): cache=DIR, $XDG_CACHE_HOME/xom or
 * $HOME/.cache/xom, whichever comes first and is absolute. */
static int cache_pieces(const struct xom_opts *o, const char **base,
                        const char **tail)
{
	if (o->cache && !strcmp(o->cache, "off"))
		return XOM_CACHE_OFF;
	*tail = "";
	if ((*base = o->cache) != NULL)
		return XOM_CACHE_DIR;
	*base = getenv("XDG_CACHE_HOME");
	*tail = "/xom";
	if (!*base || (*base)[0] != '/') {
		*base = getenv("HOME");
		*tail = "/.cache/xom";
	}
	return *base && (*base)[0] == '/' ? XOM_CACHE_DIR : XOM_CACHE_NONE;
}

int xom_cache_dir(const struct xom_opts *o, char *buf, size_t cap)
{
	const char *base, *tail;
	int rc = cache_pieces(o, &base, &tail);

	if (rc == XOM_CACHE_DIR && xom_join(buf, cap, base, tail) != 0)
		return XOM_CACHE_NONE;
	return rc;
}

int xom_profile_dir(const struct xom_opts *o, char *buf, size_t cap)
{
	const char *base, *tail;

	if (o->profiles && !strcmp(o->profiles, "off"))
		return XOM_CACHE_OFF;
	if (o->profiles)
		return xom_join(buf, cap, o->profiles, "") ? XOM_CACHE_NONE : XOM_CACHE_DIR;
	base = getenv("XDG_CONFIG_HOME");
	tail = "/xom/" XOM_PROFILES_SUBDIR;
	if (!base || base[0] != '/') {
		base = getenv("HOME");
		tail = "/.config/xom/" XOM_PROFILES_SUBDIR;
	}
	if (!base || base[0] != '/' || xom_join(buf, cap, base, tail) != 0)
		return XOM_CACHE_NONE;
	return XOM_CACHE_DIR;
}

void xom_store_dirs(const struct xom_opts *o, int secure, unsigned euid,
                    xom_lstat_fn lstat_fn, struct xom_dirs *out)
{
	const char *base, *tail;

	memset(out, 0, sizeof(*out));
	out->lstat_fn = lstat_fn;
	if (o->store && strcmp(o->store, "off"))
		out->d[XOM_STORE_SYSTEM] = (struct xom_dir){ o->store, "", 0, 1 };
	if (secure || cache_pieces(o, &base, &tail) == XOM_CACHE_OFF)
		return;
	if (base && base[0] == '/')
		out->d[XOM_STORE_USER] = (struct xom_dir){ base, tail, 0, 1 };
	const char *run = getenv("XDG_RUNTIME_DIR");
	if (run && run[0] == '/')
		out->d[XOM_STORE_FALLBACK] = (struct xom_dir){ run, "/xom", 0, 1 };
	else
		out->d[XOM_STORE_FALLBACK] = (struct xom_dir){ NULL, NULL, euid, 1 };
	/* The fallback is pointless when it is the cache itself
	 * (cache=$XDG_RUNTIME_DIR/xom). */
	const struct xom_dir *u = &out->d[XOM_STORE_USER];
	if (run && u->set && !strncmp(u->base, run, strlen(run))
	    && !strcmp(u->base + strlen(run), u->tail[0] ? "" : "/xom")
	    && !strcmp(u->tail, u->tail[0] ? "/xom" : ""))
		out->d[XOM_STORE_FALLBACK].set = 0;
}

/* Whether lstat_fn shows path as a folder of uid's that nobody else may
 * write to (mode: the bits that others must not have). */
static int folder_of(xom_lstat_fn lstat_fn, const char *path, unsigned uid,
                     unsigned mode)
{
	struct stat st;

	return lstat_fn(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid
	       && !(st.st_mode & mode);
}

/*
 * Whether /run/user/UID is uid's own, private folder under root's
 * /run/user: logind makes one for each user while logged in (or
 * lingering), and nobody but root can make a folder there, so that no
 * other user can have made it first, as anyone can /tmp/xom-UID.
 */
static int run_user_dir(xom_lstat_fn lstat_fn, unsigned uid, char *buf,
                        size_t cap)
{
	size_t n = xom_fmt(buf, cap, "/run/user/%u", uid);

	return lstat_fn && n < cap - 1 && folder_of(lstat_fn, "/run/user", 0, 022)
	       && folder_of(lstat_fn, buf, uid, 077);
}

const char *xom_dir_path(const struct xom_dirs *d, int i, char *buf, size_t cap)
{
	size_t n;

	if (i < 0 || i >= XOM_NSTORES || !d->d[i].set || !cap)
		return NULL;
	if (d->d[i].base)
		n = xom_fmt(buf, cap, "%s%s", d->d[i].base, d->d[i].tail);
	else if (run_user_dir(d->lstat_fn, d->d[i].uid, buf, cap))
		n = xom_fmt(buf, cap, "/run/user/%u/xom", d->d[i].uid);
	else
		n = xom_fmt(buf, cap, "/tmp/xom-%u", d->d[i].uid);
	if (n >= cap - 1)
		return NULL;    /* cut short: not a directory to trust */
	return buf;
}

/*
 * fnmatch(pat, s, 0) for a pattern of n bytes made of '*', '?' and ASCII
 * bytes, which is what exclude patterns are: a byte at a time, as in the C
 * locale, in which a program starts (and in any locale, but for a '?'
 * where s has a character of several bytes: pattern_matches leaves those
 * to fnmatch).  glibc's fnmatch costs hundreds of
 * instructions a call, which every object of every start paid for every
 * pattern, twice; this costs what the bytes compared cost.  A '*'
 * matches any run of bytes, '/' included, and the last '*' seen is
 * where a mismatch resumes.
 */
static int glob_match(const char *pat, size_t n, const char *s)
{
	size_t i = 0, star = (size_t)-1;
	const char *resume = NULL;

	while (*s) {
		if (i < n && pat[i] == '*') {
			star = ++i;
			resume = s;
		} else if (i < n && (pat[i] == '?' || pat[i] == *s)) {
			i++;
			s++;
		} else if (resume) {
			i = star;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (i < n && pat[i] == '*')
		i++;
	return i == n;
}

/* A bit for each pair of adjacent bytes a, b: what a string holds, and
 * what a pattern's plain bytes need. */
static uint64_t pair_bit(unsigned char a, unsigned char b)
{
	return 1ull << ((a * 7u ^ b) & 63);
}

/* What a pattern needs of a string, from its n bytes at p. */
static void compile_one(const char *p, size_t n, struct xom_exclude_pat *e)
{
	e->p = p;
	e->len = (uint16_t)n;
	e->plain = 1;
	e->need = 0;
	e->qmark = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		/* Brackets, escapes and bytes past ASCII go to fnmatch. */
		if (c == '[' || c == '\\' || c >= 0x80)
			e->plain = 0;
		e->qmark |= c == '?';
		if (i && c != '*' && c != '?' && p[i - 1] != '*' && p[i - 1] != '?')
			e->need |= pair_bit((unsigned char)p[i - 1], c);
	}
}

/* The pattern after p in a list (its bytes: *n), or NULL at its end. */
static const char *next_pattern(const char *p, size_t *n)
{
	if (!p || !*p)
		return NULL;
	const char *end = p;
	while (*end && *end != ',')
		end++;
	*n = (size_t)(end - p);
	return p;
}

void xom_exclude_compile(const char *list, struct xom_exclude *x)
{
	size_t n;

	x->n = 0;
	x->rest = NULL;
	for (const char *p = list; (p = next_pattern(p, &n)); p += n + (p[n] == ',')) {
		if (!n || n >= 256)
			continue;       /* never matches */
		if (x->n == XOM_EXCLUDE_MAX) {
			x->rest = p;
			return;
		}
		compile_one(p, n, &x->pat[x->n++]);
	}
}

/*
 * Whether pattern e matches path or its last part base.  Each pair of
 * adjacent plain bytes of a pattern of '*' and '?' is matched by a pair of
 * adjacent bytes of any string that it matches, so a pattern that needs a
 * pair that the path lacks (base is its end) matches neither: a mask test
 * rules out most patterns, for each object, whatever their length.
 */
static int pattern_matches(const struct xom_exclude_pat *e, const char *path,
                           uint64_t path_pairs, int path_ascii, const char *base)
{
	char pat[256];

	/* In a multibyte locale (a program that called setlocale), fnmatch's
	 * '?' is one character of the path, which may be several bytes. */
	if (e->plain && (path_ascii || !e->qmark))
		return !(e->need & ~path_pairs)
		       && (glob_match(e->p, e->len, path)
		           || (base != path && glob_match(e->p, e->len, base)));
	memcpy(pat, e->p, e->len);
	pat[e->len] = 0;
	return !fnmatch(pat, path, 0) || !fnmatch(pat, base, 0);
}

int xom_exclude_match(const struct xom_exclude *x, const char *path)
{
	if (!x->n && !x->rest)
		return 0;
	/* One pass: the last part's start, the pairs, any byte past ASCII. */
	const unsigned char *c = (const unsigned char *)path;
	const char *base = path;
	uint64_t pairs = 0;
	unsigned high = *c, prev = *c;
	if (prev == '/')
		base = path + 1;
	for (unsigned cur; prev && (cur = *++c); prev = cur) {
		pairs |= pair_bit((unsigned char)prev, (unsigned char)cur);
		high |= cur;
		if (cur == '/')
			base = (const char *)c + 1;
	}
	int ascii = high < 0x80;
	/* Past the patterns compiled, the rest are compiled in turn. */
	struct xom_exclude more;
	for (const struct xom_exclude *e = x;; e = &more) {
		for (int i = 0; i < e->n; i++)
			if (pattern_matches(&e->pat[i], path, pairs, ascii, base))
				return 1;
		if (!e->rest)
			return 0;
		xom_exclude_compile(e->rest, &more);
	}
}

int xom_opt_excludes(const struct xom_opts *o, const char *path)
{
	struct xom_exclude x;

	xom_exclude_compile(o->exclude, &x);
	return xom_exclude_match(&x, path);
}
