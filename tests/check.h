/*
 * check.h - the one check of the C tests.
 *
 * CHECK(cond, fmt, ...) prints, when cond is false,
 *   FAIL <test_name>: <file>:<line>: <what> (errno N text)
 * on stdout, the line the suites' runners count (tests/lib.sh), and then
 * does what the including file defines CHECK_FAILED to do: return 1,
 * goto out, ...  test_name is the including file's: the test running now.
 *
 * The fuzz targets do not report: for them a broken rule is a crash that
 * libFuzzer keeps the input of, so they check with TRAP_UNLESS(cond).
 */
#ifndef XOM_TESTS_CHECK_H
#define XOM_TESTS_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		int e_ = errno; \
		printf("FAIL %s: %s:%d: ", test_name, __FILE__, __LINE__); \
		printf(__VA_ARGS__); \
		printf(" (errno %d %s)\n", e_, strerror(e_)); \
		fflush(stdout); \
		CHECK_FAILED; \
	} \
} while (0)

#define TRAP_UNLESS(cond) do { if (!(cond)) __builtin_trap(); } while (0)

#endif
