/*
 * options.h - XOM_OPTIONS, parsed by one table (options.def).  Used by the
 * runtime at start-up and by the xom command, so both apply the same rules.
 * Nothing here runs in a signal handler.
 */
#ifndef XOM_OPTIONS_H
#define XOM_OPTIONS_H

#include <stddef.h>

#define XOM_SYSTEM_STORE "/var/cache/xom"

enum { XOM_ENFORCE, XOM_AUDIT, XOM_OFF };       /* mode */
enum { XOM_BACKEND_PKEY, XOM_BACKEND_NONE };    /* backend */

#define XOM_FIELD_ENUM(k) int k;
#define XOM_FIELD_INT(k) int k;
#define XOM_FIELD_PATH(k) const char *k;
#define XOM_FIELD_DIR_OFF(k) const char *k;
#define XOM_FIELD_LIST(k) const char *k;

/* The values in force.  Strings point into the buffer given to the parser,
 * or are NULL when absent (see xom_cache_dir for the cache's default). */
struct xom_opts {
#define XOM_OPT(key, kind, def, values, help) XOM_FIELD_##kind(key)
#include "options.def"
#undef XOM_OPT
	int log_fd;             /* where the xom: lines go (the runtime's) */
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

/*
 * The plan stores that a process with options o reads, in order: the
 * system store (store=, root's), the user's cache, and the private folder
 * that plans go to when the cache cannot be written ($XDG_RUNTIME_DIR/xom,
 * else /tmp/xom-UID).  A secure-execution program (secure) reads the
 * system store only: its user's files are not to be trusted.  Kept as
 * pieces (pointers into the environment and the options), so that
 * nothing is copied at start-up; xom_dir_path puts one together.
 */
enum { XOM_STORE_SYSTEM, XOM_STORE_USER, XOM_STORE_FALLBACK, XOM_NSTORES };
struct xom_dir { const char *base, *tail; unsigned uid; int set; };
struct xom_dirs { struct xom_dir d[XOM_NSTORES]; };
void xom_store_dirs(const struct xom_opts *o, int secure, unsigned euid,
                    struct xom_dirs *out);
/* Store i's directory in buf, or NULL when there is none (or it would not
 * fit).  Async-signal-safe. */
const char *xom_dir_path(const struct xom_dirs *d, int i, char *buf, size_t cap);

/*
 * For a secure-execution program (set-user-ID, set-group-ID, file
 * capabilities), whose environment belongs to an untrusted caller: puts
 * back the default of every key that names a path or can weaken the
 * protection, and lists the keys it reset in ignored (comma-separated).
 */
void xom_options_secure(struct xom_opts *o, char *ignored, size_t cap);

/* 1 when path or its base name matches one of o's exclude patterns. */
int xom_opt_excludes(const struct xom_opts *o, const char *path);

#endif
