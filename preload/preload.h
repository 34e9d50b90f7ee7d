/*
 * preload.h - the parts of the LD_PRELOAD door (libxom.so): the wrappers
 * (preload.c), the search that keeps dlopen's caller the program's
 * (search.c), and the sync of the runtime's objects with the dynamic
 * linker's list (sync.c).
 */
#ifndef XOM_PRELOAD_H
#define XOM_PRELOAD_H

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

/* What a wrapper hands glibc instead of the name it was given. */
struct xom_name {
	const char *file;       /* as given */
	const char *name;       /* for glibc: file or a path */
	const char *why;        /* not NULL: fail, with this dlerror text */
	char *buf;              /* a mapping that holds name, or NULL */
	int bare;               /* file has no '/' */
};

/* The size of xom_name's buffer: a path and, in its second half, an
 * origin of up to PATH_MAX. */
#define XOM_NAME_BUF 16384

/* dlopen's namespace: the caller's (dlmopen names its own). */
#define XOM_NS_CALLER (-3)

/* Fills r for the wrapper called from return address ret, so that glibc
 * finds what it would have found for that caller.  lmid: XOM_NS_CALLER,
 * or dlmopen's.  Changes errno.  Then xom_search_done. */
void xom_search_name(struct xom_name *r, const char *file, const void *ret,
                     Lmid_t lmid);
void xom_search_done(struct xom_name *r);

/* After glibc loaded r->name: the object also answers to the bare name
 * r->file, as it would had glibc found it itself. */
void xom_search_found(void *handle, const struct xom_name *r);

/* Protects what dl_iterate_phdr shows that is new and forgets what was
 * unloaded; as xom_batch_run for the result. */
int xom_sync_objects(void);

#endif
