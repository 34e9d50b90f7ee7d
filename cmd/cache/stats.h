/*
 * stats.h - xom cache stats (cmd/cache/stats.c).  Internal to cmd/.
 */
#ifndef XOM_CMD_CACHE_STATS_H
#define XOM_CMD_CACHE_STATS_H

/* xom cache stats over the store at store (NULL: every store the runtime
 * reads), one JSON object per store with json, one line per plan with
 * list: a common/xom_exit.h status. */
int cache_stats(const char *store, int json, int list);

#endif
