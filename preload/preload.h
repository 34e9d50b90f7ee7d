/*
 * preload.h - the parts of the LD_PRELOAD door (libxom.so): the wrappers
 * (preload.c) and the search that keeps dlopen's caller the program's
 * (search.c).
 */
#ifndef XOM_PRELOAD_H
#define XOM_PRELOAD_H

#include <link.h>
#include <stddef.h>

/* Start-up: libxom.so's own link map and libc's, whose layout says
 * whether the names an object was loaded by can be read. */
void xom_search_init(struct link_map *self, struct link_map *libc);

/* What the wrapper called from return address ret hands glibc instead of
 * file, so that glibc finds what it would have found for that caller:
 * file itself, or a path written into buf.  new_ns: the name is for a new
 * namespace of dlmopen, where nothing is loaded yet.  Changes errno. */
const char *xom_search_name(const char *file, const void *ret, int new_ns,
                            char *buf, size_t cap);

/* After glibc loaded the path that xom_search_name gave for file: the
 * object also answers to file, as it would had glibc found it itself. */
void xom_search_found(void *handle, const char *file, const char *used);

#endif
