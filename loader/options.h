/*
 * options.h - XOM_OPTIONS, parsed by one table (options.def).  Used by the
 * runtime at start-up and by the xom command, so both apply the same rules.
 * Nothing here runs in a signal handler.
 */
#ifndef XOM_OPTIONS_H
#define XOM_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#define XOM_SYSTEM_STORE "/var/cache/xom"

enum { XOM_ENFORCE, XOM_AUDIT, XOM_OFF };       /* mode */
enum { XOM_BACKEND_PKEY, XOM_BACKEND_NONE };    /* backend */
enum { XOM_NOTICE_EACH, XOM_NOTICE_ONCE, XOM_NOTICE_DONE, XOM_NOTICE_OFF };

#define XOM_FIELD_ENUM(k) int k;
#define XOM_FIELD_INT(k) int k;
#define XOM_FIELD_PATH(k) const char *k;
#define XOM_FIELD_DIR_OFF(k) const char *k;
#define XOM_FIELD_LIST(k) const char *k;

/* Each key's index in the table, and its bit in struct xom_opts' set. */
enum {
#define XOM_OPT(key, kind, def, values, help) XOM_OPT_I_##key,
#include "options.def"
#undef XOM_OPT
	XOM_OPT_N
};
_Static_assert(XOM_OPT_N <= 64, "struct xom_opts' set has a bit per key");
#define XOM_OPT_BIT(key) (1ull << XOM_OPT_I_##key)

/* The values in force.  Strings point into the buffer given to the parser,
 * or are NULL when absent (see xom_cache_dir for the cache's default). */
struct xom_opts {
#define XOM_OPT(key, kind, def, values, help) XOM_FIELD_##kind(key)
#include "options.def"
#undef XOM_OPT
	int log_fd;             /* where the xom: lines go (the runtime's) */
	unsigned long long set; /* bit i: the table's key i was given */
};

/* The table, for the command's reports. */
struct xom_opt_info {
	const char *key, *kind, *def, *values, *help;
};
extern const struct xom_opt_info xom_opt_table[];
extern const size_t xom_opt_count;

/*
 * Parses text (XOM_OPTIONS, copied into buf, which must outlive o) into o,
 * starting from the defaults.  Returns 0, or -1 with the first bad item
 * described in err.  *require is set when require=1 appears anywhere, even
 * after a bad item, so that a caller can refuse instead of guessing.
 */
int xom_options_parse(const char *text, struct xom_opts *o, char *buf,
                      size_t cap, int *require, char *err, size_t errcap);

/* XOM_OPTIONS' one splitting rule, for the parser and for `xom run`, which
 * composes the variable: the item at text ends at the next ':' or NUL (its
 * length is returned), its key at the first '=' within it (*keylen; the
 * whole item when there is none). */
size_t xom_opt_item(const char *text, size_t *keylen);

/* Where plans are cached under o: XOM_CACHE_DIR with the directory in buf,
 * XOM_CACHE_OFF (cache=off) or XOM_CACHE_NONE (no absolute
 * XDG_CACHE_HOME or HOME). */
enum { XOM_CACHE_DIR, XOM_CACHE_OFF, XOM_CACHE_NONE };
int xom_cache_dir(const struct xom_opts *o, char *buf, size_t cap);

/* The user's profile folder under o (profiles=DIR, $XDG_CONFIG_HOME/xom/
 * profiles or $HOME/.config/xom/profiles), with the values of
 * xom_cache_dir; profiles=off is XOM_CACHE_OFF. */
int xom_profile_dir(const struct xom_opts *o, char *buf, size_t cap);
/* The folder of the system store's profiles, under the store. */
#define XOM_PROFILES_SUBDIR "profiles"
/* a then b into buf, which may be a itself; 0, or -1 when they do not fit
 * in cap bytes with the NUL.  Async-signal-safe. */
int xom_join(char *buf, size_t cap, const char *a, const char *b);

/*
 * The plan stores that a process with options o reads, in order: the
 * system store (store=, root's), the user's cache, and the private folder
 * that plans go to when the cache cannot be written: $XDG_RUNTIME_DIR/xom;
 * without it, /run/user/UID/xom when /run/user/UID is the user's own
 * private folder (logind makes it, and only root can make one there),
 * else /tmp/xom-UID, which another user can make first.  A
 * secure-execution program (secure) reads the system store only: its
 * user's files are not to be trusted.  Kept as pieces (pointers into the
 * environment and the options), so that nothing is copied at start-up;
 * xom_dir_path puts one together, and looks at /run/user with lstat_fn
 * only then (async-signal-safe, as the runtime's is).
 */
enum { XOM_STORE_SYSTEM, XOM_STORE_USER, XOM_STORE_FALLBACK, XOM_NSTORES };
struct stat;
typedef int (*xom_lstat_fn)(const char *, struct stat *);
struct xom_dir { const char *base, *tail; unsigned uid; int set; };
struct xom_dirs { struct xom_dir d[XOM_NSTORES]; xom_lstat_fn lstat_fn; };
void xom_store_dirs(const struct xom_opts *o, int secure, unsigned euid,
                    xom_lstat_fn lstat_fn, struct xom_dirs *out);
/* Store i's directory in buf, or NULL when there is none (or it would not
 * fit).  Async-signal-safe. */
const char *xom_dir_path(const struct xom_dirs *d, int i, char *buf, size_t cap);

/* The defaults of every key, and text's keys applied on top of o (as
 * xom_options_parse, without resetting o first). */
void xom_options_defaults(struct xom_opts *o);
int xom_options_apply(const char *text, struct xom_opts *o, char *buf,
                      size_t cap, int *require, char *err, size_t errcap);

/*
 * /etc/xom.conf: lines "PATTERN OPTIONS" (OPTIONS as in XOM_OPTIONS, or
 * "off"), '#' comments.  Every line whose fnmatch PATTERN matches prog
 * applies its options to o, in order.  conf is modified in place and must
 * outlive o.  Returns 0, or -1 with the line number and what is wrong with
 * it for the first invalid line that matches (a line that does not match
 * is not read past its pattern).
 */
int xom_conf_apply(char *conf, size_t len, const char *prog,
                   struct xom_opts *o, int *require, unsigned *lineno,
                   char *err, size_t errcap);

/*
 * One line of /etc/xom.conf (modified in place), read as xom_conf_apply
 * reads a matching one, for xom check: 0 blank or a comment; 1 a rule,
 * with *pat its pattern and o the defaults with its options applied; -1
 * invalid, with err set (and *pat when the line has one).
 */
int xom_conf_check_line(char *line, const char **pat, struct xom_opts *o,
                        int *require, char *err, size_t errcap);

/*
 * Copies onto o every key that env (options parsed from the defaults) was
 * given.  For a secure-execution program (secure), whose environment
 * belongs to an untrusted caller, only what asks for more (require=1,
 * seal=1) or says more or less (verbose, notice) is copied; the keys left
 * out are listed in ignored (comma-separated).
 */
void xom_options_merge(struct xom_opts *o, const struct xom_opts *env,
                       int secure, char *ignored, size_t cap);

/* 1 when path or its base name matches one of o's exclude patterns. */
int xom_opt_excludes(const struct xom_opts *o, const char *path);

/* The exclude patterns made ready once, for a process that asks about
 * each object it maps (the runtime): the same answers as
 * xom_opt_excludes, for a few instructions a pattern.  The patterns point
 * into list, which must outlive it. */
#define XOM_EXCLUDE_MAX 32
struct xom_exclude_pat {
	const char *p;
	uint16_t len;
	uint8_t plain;                  /* only '*', '?' and ASCII bytes */
	uint8_t qmark;                  /* has a '?' */
	uint64_t need;                  /* its pairs of plain bytes */
};
struct xom_exclude {
	int n;
	struct xom_exclude_pat pat[XOM_EXCLUDE_MAX];
	const char *rest;               /* the list past the first MAX, or NULL */
};
void xom_exclude_compile(const char *list, struct xom_exclude *x);
int xom_exclude_match(const struct xom_exclude *x, const char *path);

#endif
