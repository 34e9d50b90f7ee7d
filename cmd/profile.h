/*
 * profile.h - profiles as the xom command reads and writes them
 * (cmd/profile_file.c) and lists them (cmd/profile.c), for xom profile and
 * xom learn.  The text format is the
 * runtime's (loader/profile.c says it): program lines, and one page of one
 * object a line.  Internal to cmd/.
 */
#ifndef XOM_CMD_PROFILE_H
#define XOM_CMD_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One page of one object, for one program ("" for every program). */
struct prof_page {
	char *prog_key, *prog_path;     /* malloc'd, "" when absent */
	char *key, *path, *why;
	uint64_t page;
	size_t seq;                     /* the order it was added in */
};

struct profile {
	struct prof_page *p;
	size_t n, cap;
};

/* Adds file's items to pr.  0, or -1 after one line naming the file and
 * line (a line that is not a profile item, or a read error). */
int profile_read(const char *file, struct profile *pr);
/* Adds one item (the strings are copied); 0 or -1. */
int profile_add(struct profile *pr, const char *prog_key, const char *prog_path,
                const char *key, uint64_t page, const char *path,
                const char *why);
/* Sorts by program, object and page and drops repeats (keeping the first
 * reason); returns how many were dropped. */
size_t profile_tidy(struct profile *pr);
/* Writes pr to f, after the comment lines in head (may be NULL). */
void profile_write(FILE *f, const struct profile *pr, const char *head);
/* Writes pr to path through a temporary file and a rename; 0 or -1 after
 * one line. */
int profile_save(const char *path, const struct profile *pr, const char *head);
/* 1 when pr has the item. */
int profile_has(const struct profile *pr, const struct prof_page *q);
void profile_free(struct profile *pr);

/* Adds the items of got for program key prog (NULL: all) to the profile
 * file path (created if need be); the new ones are added to added too.
 * 0, or -1 after one line. */
int profile_add_to_file(const char *path, const struct profile *got,
                        const char *prog, const char *head,
                        struct profile *added);
/* The same into the profile folder dir (made if need be, 0700): each
 * program's items into the file named by its key (shared: the folder is
 * made 0755, for the system store).  When self_key is not
 * "" and got has nothing for it, that program gets an empty profile (its
 * program line alone) unless it has one. */
int profile_add_to_folder(const struct profile *got, const char *self_key,
                          const char *self_path, const char *head,
                          struct profile *added, const char *dir, int shared);

/* The file in folder dir that holds the profile of the program whose
 * profile key is prog_key (its build-id; else its path, then named by the
 * file's identity).  0 with the name in out, or -1. */
int profile_file_name(const char *prog_key, char *out, size_t len);

/* The user's profile folder as the runtime finds it (profiles=,
 * XDG_CONFIG_HOME, HOME), and the system store's; 0, or -1 with none. */
int profile_user_dir(char *out, size_t len);
int profile_system_dir(char *out, size_t len);

/* XOM_OPTIONS as the runtime reads it (the defaults when it is invalid). */
struct xom_opts;
void profile_options(struct xom_opts *o, char *buf, size_t cap);

/* Prints the listing of pr (xom profile show) to f: per program and
 * object, the pages, why each was read, and the share of the object's
 * code pages that stays execute-only, from its plan where a store has
 * it. */
void profile_show(FILE *f, const struct profile *pr);

#endif
