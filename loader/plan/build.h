/*
 * build.h - making plans, for the xom-plan helper (the scanner side).
 */
#ifndef XOM_PLAN_BUILD_H
#define XOM_PLAN_BUILD_H

#include "xom_plan.h"

struct xom_map;

/* A sealed, checked plan for the map, from malloc; NULL with why set. */
struct xom_plan_head *xom_plan_build(const struct xom_map *m, const char **why);

#endif
