/*
 * xom-scan - prints the code map of ELF files: which executable pages xom
 * can make execute-only, which stay readable and why, and the WRPKRU/XRSTOR
 * byte sequences that could switch protection keys off.
 *
 * It uses the scanner only through the exported functions of xom_scan.h.
 * Exit status: the codes of common/xom_exit.h, as the usage text below states them.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/json.h"
#include "../common/optword.h"
#include "xom_scan.h"
#include "xom_scan_exit.h"

enum fmt { FMT_TEXT, FMT_JSON, FMT_MAP };

/* Human output lists this many data ranges and gadgets; --json lists all. */
#define TEXT_LIMIT 24

static const char usage[] =
	"usage: xom-scan [--json | --map] [-j N] FILE...\n"
	"\n"
	"Shows which pages of each x86-64 ELF file's executable segments hold only\n"
	"instructions (and can be made execute-only), and which hold bytes that\n"
	"code reads as data, with the reason and the instruction that reads them.\n"
	"\n"
	"  (default)  a summary per file: pages, coverage, data ranges, gadgets\n"
	"  --map      one character per executable page:\n"
	"               .  execute-only   D  data read by code\n"
	"               H  headers or non-code sections   W  whole file readable\n"
	"  --json     one JSON object per file per line (link-time addresses)\n"
	"  -j N, -jN  disassemble a large file on N threads (the same answer)\n"
	"  -h, --help this text\n"
	"\n"
	"Exit status: 0 every file analysed; 1 some file could not be, because it\n"
	"is unsupported or malformed; 2 some file could not be read, or memory,\n"
	"the disassembler or stdout failed (2 wins over 1); 64 usage.\n";

static void print_where(const struct xom_map *m, uint64_t a)
{
	uint64_t off;
	const char *sym = xom_map_symbol(m, a, &off);

	if (sym)
		printf(" (%s+%#" PRIx64 ")", sym, off);
}

static double coverage(const struct xom_map *m)
{
	return m->exec_pages ? 100.0 * (double)m->xom_pages / (double)m->exec_pages : 0;
}

static void print_text(const char *file, const struct xom_map *m)
{
	size_t nw = 0, nx = 0, aw = 0, ax = 0;

	printf("%s: %zu exec pages, %zu execute-only (%.1f%%), %zu readable\n",
	       file, m->exec_pages, m->xom_pages, coverage(m),
	       m->exec_pages - m->xom_pages);
	printf("  readable executable bytes: %" PRIu64 ", ret gadget candidates: %" PRIu64 "\n",
	       m->readable_bytes, m->ret_gadgets);
	if (m->whole_reason)
		printf("  whole file readable: %s\n", xom_reason_name(m->whole_reason));
	for (size_t i = 0; i < m->nreadable; i++)
		printf("  readable %#" PRIx64 "-%#" PRIx64 " (%" PRIu64 " pages)\n",
		       m->readable[i].start, m->readable[i].end,
		       (m->readable[i].end - m->readable[i].start) / XOM_PAGE_SIZE);
	for (size_t i = 0; i < m->ndata && i < TEXT_LIMIT; i++) {
		const struct xom_data *d = &m->data[i];

		printf("  data %#" PRIx64 "-%#" PRIx64 " %-8s", d->start, d->end,
		       xom_reason_name(d->reason));
		print_where(m, d->start);
		if (d->has_ref) {
			printf(" read by %#" PRIx64, d->ref);
			print_where(m, d->ref);
		}
		putchar('\n');
	}
	if (m->ndata > TEXT_LIMIT)
		printf("  ... %zu more data ranges (--json lists all)\n",
		       m->ndata - TEXT_LIMIT);
	for (size_t i = 0; i < m->ngadgets; i++) {
		bool w = m->gadgets[i].kind == XOM_G_WRPKRU;
		nw += w, nx += !w;
		aw += w && m->gadgets[i].aligned, ax += !w && m->gadgets[i].aligned;
	}
	printf("  gadgets: %zu wrpkru (%zu aligned), %zu xrstor (%zu aligned)\n",
	       nw, aw, nx, ax);
	for (size_t i = 0; i < m->ngadgets && i < TEXT_LIMIT; i++) {
		const struct xom_gadget *g = &m->gadgets[i];

		printf("    %#" PRIx64 " %s %s", g->addr,
		       g->kind == XOM_G_WRPKRU ? "wrpkru" : "xrstor",
		       g->aligned ? "aligned" : "unaligned");
		print_where(m, g->addr);
		putchar('\n');
	}
	if (m->ngadgets > TEXT_LIMIT)
		printf("    ... %zu more (--json lists all)\n", m->ngadgets - TEXT_LIMIT);
}

static void print_map(const char *file, const struct xom_map *m)
{
	static const char glyph[] = { '.', 'D', 'H', 'W' };
	const unsigned per_line = 64;

	printf("%s: %zu exec pages, %zu execute-only (%.1f%%)\n", file,
	       m->exec_pages, m->xom_pages, coverage(m));
	for (size_t p = 0; p < m->npages; p++) {
		/* A new line at every 64 pages and wherever the pages jump. */
		if (p % per_line == 0 ||
		    m->page_addr[p] != m->page_addr[p - 1] + XOM_PAGE_SIZE) {
			if (p)
				putchar('\n');
			printf("  %#10" PRIx64 " ", m->page_addr[p]);
		}
		putchar(glyph[m->page_kind[p] & 3]);
	}
	if (m->npages)
		putchar('\n');
}

static void print_json(const char *file, const struct xom_map *m)
{
	printf("{\"file\": ");
	json_put_str(file);
	printf(", \"exec_pages\": %zu, \"xom_pages\": %zu, \"readable_bytes\": %" PRIu64
	       ", \"ret_gadgets\": %" PRIu64 ", \"section_level\": {\"readable_bytes\": %"
	       PRIu64 ", \"ret_gadgets\": %" PRIu64 "}, \"readable\": [",
	       m->exec_pages, m->xom_pages, m->readable_bytes, m->ret_gadgets,
	       m->section_readable_bytes, m->section_ret_gadgets);
	for (size_t i = 0; i < m->nreadable; i++)
		printf("%s[%" PRIu64 ", %" PRIu64 "]", i ? ", " : "",
		       m->readable[i].start, m->readable[i].end);
	printf("], \"data\": [");
	for (size_t i = 0; i < m->ndata; i++) {
		const struct xom_data *d = &m->data[i];

		printf("%s{\"start\": %" PRIu64 ", \"end\": %" PRIu64
		       ", \"reason\": \"%s\", \"ref\": ", i ? ", " : "",
		       d->start, d->end, xom_reason_name(d->reason));
		if (d->has_ref)
			printf("%" PRIu64 "}", d->ref);
		else
			printf("null}");
	}
	printf("], \"gadgets\": [");
	for (size_t i = 0; i < m->ngadgets; i++)
		printf("%s{\"addr\": %" PRIu64 ", \"kind\": \"%s\", \"aligned\": %s}",
		       i ? ", " : "", m->gadgets[i].addr,
		       m->gadgets[i].kind == XOM_G_WRPKRU ? "wrpkru" : "xrstor",
		       m->gadgets[i].aligned ? "true" : "false");
	printf("]}\n");
}

/* -j's value: 1 to 64 threads, or 0. */
static unsigned threads_arg(const char *v)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	return *v && !*end && n >= 1 && n <= 64 ? (unsigned)n : 0;
}

/*
 * Reads the options into *fmt and *threads; -1 with optind at the first
 * file, else the exit status.  Options stop at the first file ("+"), and
 * the messages are xom-scan's own, quoting the whole word.
 */
static int read_options(int argc, char **argv, enum fmt *fmt, unsigned *threads)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "map", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *word;
	int c;

	while ((c = getopt_word(argc, argv, "+:hj:", longopts, &word)) != -1) {
		switch (c) {
		case 'J': *fmt = FMT_JSON; break;
		case 'M': *fmt = FMT_MAP; break;
		case 'j':       /* -j N, or -jN as make takes it */
			if (!(*threads = threads_arg(optarg))) {
				fprintf(stderr, "xom-scan: -j wants 1 to 64\n%s", usage);
				return XOM_EXIT_USAGE;
			}
			break;
		case 'h':
			/* -h alone: "-hx" is an unknown option, not help */
			if (word[1] == '-' || !word[2]) {
				fputs(usage, stdout);
				return 0;
			}
			/* fall through */
		default:        /* unknown, or -j without its value */
			fprintf(stderr, "xom-scan: unknown option '%s'\n%s", word, usage);
			return XOM_EXIT_USAGE;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	enum fmt fmt = FMT_TEXT;
	unsigned threads = 1;
	int status = read_options(argc, argv, &fmt, &threads);

	if (status >= 0)
		return status;
	if (optind == argc) {
		fprintf(stderr, "xom-scan: no file given\n%s", usage);
		return XOM_EXIT_USAGE;
	}
	status = 0;
	for (int i = optind; i < argc; i++) {
		char err[256];
		struct xom_map *m;
		int rc = xom_scan_file_threads(argv[i], threads, &m, err, sizeof err);

		if (rc != XOM_SCAN_OK) {
			fflush(stdout);
			fprintf(stderr, "xom-scan: %s: %s\n", argv[i], err);
			status = xom_exit_worst(status, xom_exit_of_scan(rc));
			continue;
		}
		if (fmt == FMT_JSON)
			print_json(argv[i], m);
		else if (fmt == FMT_MAP)
			print_map(argv[i], m);
		else
			print_text(argv[i], m);
		xom_map_free(m);
	}
	if (fflush(stdout) != 0) {
		perror("xom-scan: stdout");
		return XOM_EXIT_ENV;
	}
	/* A write that failed when the buffer filled may leave nothing for
	 * the last fflush() to fail on. */
	if (ferror(stdout)) {
		fputs("xom-scan: stdout: write error\n", stderr);
		return XOM_EXIT_ENV;
	}
	return status;
}
