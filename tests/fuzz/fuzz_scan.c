/*
 * fuzz_scan.c - libFuzzer target for the scanner.  Every input, however
 * broken, must give either a map or an error code with a message; the
 * sanitizers turn any out-of-bounds read, overflow or leak into a crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../scan/xom_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xom_map *map = NULL;
	char err[256];

	err[0] = '\0';
	if (xom_scan_mem(data, size, &map, err, sizeof err) == XOM_SCAN_OK) {
		/* Touch what a caller would read, so that a map that points
		 * outside its own arrays is caught here. */
		volatile uint64_t sink = 0;
		for (size_t i = 0; i < map->npages; i++)
			sink += map->page_addr[i] + map->page_kind[i];
		for (size_t i = 0; i < map->nreadable; i++)
			sink += map->readable[i].end - map->readable[i].start;
		for (size_t i = 0; i < map->ndata; i++)
			sink += map->data[i].start + map->data[i].reason +
				(uint64_t)strlen(xom_reason_name(map->data[i].reason));
		for (size_t i = 0; i < map->ngadgets; i++)
			sink += map->gadgets[i].addr;
		(void)sink;
		xom_map_free(map);
	} else if (err[0] == '\0' || !memchr(err, '\0', sizeof err)) {
		/* Every failure must say why. */
		__builtin_trap();
	}
	return 0;
}
