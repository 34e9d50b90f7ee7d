/*
 * scan_time.c - times the scanner inside one process, without the process
 * start-up and output that a run of xom-scan adds, for the scale benchmark.
 *
 *   scan_time [-r REPEAT] FILE...
 *
 * For each file it prints
 *
 *   FILE code_bytes=... best_s=... mb_per_s=... exec_pages=... xom_pages=...
 *
 * where code_bytes is what the scanner handed to the disassembler and best_s
 * the fastest of REPEAT scans.  Exit status: 0, 1 if a file could not be
 * scanned (with the scanner's reason on stderr), 2 on usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../scan/xom_scan.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int repeat = 1, i = 1, status = 0;
	char err[256];

	if (argc > 2 && !strcmp(argv[1], "-r")) {
		repeat = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc || repeat < 1) {
		fprintf(stderr, "usage: scan_time [-r REPEAT] FILE...\n");
		return 2;
	}
	for (; i < argc; i++) {
		struct xom_map *m = NULL;
		double best = 1e30;
		int rc = 0;

		for (int r = 0; r < repeat && rc == 0; r++) {
			if (m)
				xom_map_free(m);
			m = NULL;
			double t0 = now_s();
			rc = xom_scan_file(argv[i], &m, err, sizeof(err));
			double t = now_s() - t0;
			if (t < best)
				best = t;
		}
		if (rc != 0) {
			fprintf(stderr, "%s: %s\n", argv[i], err);
			status = 1;
			continue;
		}
		printf("%s code_bytes=%llu best_s=%.6f mb_per_s=%.2f exec_pages=%zu"
		       " xom_pages=%zu\n", argv[i], (unsigned long long)m->code_bytes,
		       best, best > 0 ? (double)m->code_bytes / 1e6 / best : 0.0,
		       m->exec_pages, m->xom_pages);
		xom_map_free(m);
	}
	return status;
}
