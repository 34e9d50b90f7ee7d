/*
 * eu-search.c - the search-tree functions that elfutils 0.192's static
 * libelf.a calls but does not contain.  elfutils keeps them in its internal
 * library libeu, which it links into libelf.so but leaves out of libelf.a,
 * and Debian ships no libeu (elfutils bug 32293,
 * https://sourceware.org/bugzilla/show_bug.cgi?id=32293).  The static
 * xom-plan links this file only when a link without it reports these
 * symbols missing (loader/loader.mk); with an older or a fixed libelf.a it
 * is not even compiled.
 *
 * elfutils' search_tree holds the tree's root first and, in builds with
 * thread safety, a lock after it.  These functions use only the root, and
 * one lock of their own for every tree, so they are right whatever the
 * layout of the rest: the lock is never touched by libelf outside these
 * functions.
 */
#include <pthread.h>
#include <search.h>

/* What elfutils' lib/eu-search.h declares; the tree is passed as the
 * address of its root, which is its first member. */
typedef int (*eu_compare)(const void *, const void *);
void eu_search_tree_init(void **tree);
void eu_search_tree_fini(void **tree, void (*free_node)(void *));
void *eu_tsearch(const void *key, void **tree, eu_compare compare);
void *eu_tfind(const void *key, void **tree, eu_compare compare);
void *eu_tdelete(const void *key, void **tree, eu_compare compare);
void eu_tdestroy(void **tree, void (*free_node)(void *));

/* One lock for all trees: libelf may search the trees of different Elf
 * handles from several threads, and xom-plan's scans run in threads. */
static pthread_mutex_t tree_lock = PTHREAD_MUTEX_INITIALIZER;

void eu_search_tree_init(void **tree)
{
	*tree = NULL;
}


void *eu_tsearch(const void *key, void **tree, eu_compare compare)
{
	pthread_mutex_lock(&tree_lock);
	void *node = tsearch(key, tree, compare);
	pthread_mutex_unlock(&tree_lock);
	return node;
}

void *eu_tfind(const void *key, void **tree, eu_compare compare)
{
	pthread_mutex_lock(&tree_lock);
	void *node = tfind(key, tree, compare);
	pthread_mutex_unlock(&tree_lock);
	return node;
}

void *eu_tdelete(const void *key, void **tree, eu_compare compare)
{
	pthread_mutex_lock(&tree_lock);
	void *parent = tdelete(key, tree, compare);
	pthread_mutex_unlock(&tree_lock);
	return parent;
}

void eu_tdestroy(void **tree, void (*free_node)(void *))
{
	pthread_mutex_lock(&tree_lock);
	tdestroy(*tree, free_node);
	*tree = NULL;
	pthread_mutex_unlock(&tree_lock);
}

/* elf_end hands the function that frees each node. */
void eu_search_tree_fini(void **tree, void (*free_node)(void *))
{
	eu_tdestroy(tree, free_node);
}
