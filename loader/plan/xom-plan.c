/*
 * xom-plan FILE - scans FILE and writes its plan (xom_plan.h) to stdout.
 * The runtime runs it on a plan-cache miss, so that Capstone and libelf are
 * loaded only in this short-lived process, never in the host.
 * Exit status: 0 plan written, 1 the file could not be analysed, 2 usage or
 * output error.  Messages are one line on stderr, prefixed "xom: ".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../scan/xom_scan.h"
#include "build.h"

int main(int argc, char **argv)
{
	char err[256];
	const char *why;
	struct xom_map *m;

	if (argc != 2) {
		fprintf(stderr, "usage: xom-plan FILE\n");
		return 2;
	}
	if (xom_scan_file(argv[1], &m, err, sizeof(err)) != 0) {
		fprintf(stderr, "xom: %s: %s\n", argv[1], err);
		return 1;
	}
	struct xom_plan_head *h = xom_plan_build(m, &why);
	xom_map_free(m);
	if (!h) {
		fprintf(stderr, "xom: %s: %s\n", argv[1], why);
		return 1;
	}
	if (xom_plan_write(1, h) != 0) {
		fprintf(stderr, "xom: %s: cannot write the plan: %s\n", argv[1],
		        strerror(errno));
		return 2;
	}
	free(h);
	return 0;
}
