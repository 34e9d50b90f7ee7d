/*
 * swap.c - two builds of one library without a build-id (SWAP_VALUE 1 and
 * 2): the same layout, different code bytes.  The runtime finds a plan for
 * such a file by its identity, and must notice when the file it stats is
 * no longer the one mapped: with XOM_SWAP_FROM and XOM_SWAP_TO set, the
 * constructor renames one over the other, between the dynamic linker's
 * mapping and xom's look at the file; with XOM_SWAP_UNLINK, it removes
 * that file, so that xom cannot even stat it.
 */
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>

int xom_swap_value(void);
int xom_swap_value(void)
{
	return SWAP_VALUE * 1000 + 7;
}

__attribute__((constructor)) static void swap_files(void)
{
	const char *from = getenv("XOM_SWAP_FROM"), *to = getenv("XOM_SWAP_TO");

	if (from && to)
		rename(from, to);
	if ((from = getenv("XOM_SWAP_UNLINK")))
		unlink(from);
}
