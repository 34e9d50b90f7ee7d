/*
 * xomtest.h - what the parts of xomtest share: the table of modes and the
 * CHECK macro.  xomtest is run by the runtime's suites (native.sh and
 * vm-enforce.sh), under xom or as a launcher; each mode is one small
 * function.  A mode that checks something itself prints "PASS name" or
 * "FAIL name: file:line: what (values, errno)"; a mode that only acts
 * (reads code, say) lets the suite judge its exit status and stderr.
 */
#ifndef XOMTEST_H
#define XOMTEST_H

#include "../check.h"

extern const char *test_name;

/* A failed check ends the test: its function returns 1. */
#define CHECK_FAILED return 1

#define PASS(...) do { \
	printf("PASS %s", test_name); \
	printf(" " __VA_ARGS__); \
	putchar('\n'); \
	fflush(stdout); \
	return 0; \
} while (0)

struct mode {
	const char *name, *args, *about;
	int (*fn)(int argc, char **argv);  /* argv[0] is the mode */
};

/* 1: the byte at p cannot be read as data (execute-only), 0: readable,
 * -1: could not tell.  The kernel honours PKRU when it copies from user
 * memory, so write(2) from a protected page fails with EFAULT: a probe
 * that does not fault. */
int is_xom(const void *p);
/* Protected and total pages of the executable segments of the loaded
 * object whose path contains name (the main program for ""). */
int object_xom_pages(const char *name, int *xom, int *total);

int xom_test_target(int x);
extern int (*volatile self_fn)(int);

extern const struct mode core_modes[], fault_modes[], harden_modes[];

#endif
