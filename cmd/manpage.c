/*
 * manpage.c - a build-time tool: copies the man page template (cmd/xom.1.in)
 * to stdout, and writes the list of XOM_OPTIONS keys where the template has
 * the line MARKER, from the runtime's own table (loader/options.def), so
 * the page lists exactly the keys and values that the runtime accepts.
 *
 *   manpage TEMPLATE > xom.1
 */
#include <stdio.h>
#include <string.h>

#include "../loader/options.h"
#include "../common/xom_exit.h"

#define MARKER ".\\\" @XOM_OPTIONS_KEYS@"

/* Text for a roff line: backslashes escaped, a leading '.' or '\'' kept
 * from reading as a request, and with minus the '-' of what is typed (a
 * hyphen in prose stays a hyphen). */
static void put_text(const char *s, int minus)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", stdout);
	for (; *s; s++)
		if (*s == '\\')
			fputs("\\e", stdout);
		else if (*s == '-' && minus)
			fputs("\\-", stdout);
		else
			putchar(*s);
}

/* A help sentence.  Its first word stays as written: it is often a value
 * ("enforce: ..."), which must read as typed. */
static void put_sentence(const char *s)
{
	put_text(s, 0);
	fputs(".\n", stdout);
}

/* "cache=DIR|off" in bold, with the upper-case placeholders in italics. */
static void put_key(const struct xom_opt_info *o)
{
	printf("\\fB%s=", o->key);
	for (const char *v = o->values; *v;) {
		size_t n = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
		if (n) {
			printf("\\fI%.*s\\fB", (int)n, v);
			v += n;
			continue;
		}
		n = strcspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
		char part[256];
		snprintf(part, sizeof part, "%.*s", (int)n, v);
		put_text(part, 1);
		v += n;
	}
	fputs("\\fR\n", stdout);
}

static void put_keys(void)
{
	for (size_t i = 0; i < xom_opt_count; i++) {
		const struct xom_opt_info *o = &xom_opt_table[i];
		fputs(".TP\n", stdout);
		put_key(o);
		put_sentence(o->help);
		if (*o->def) {
			fputs("Default: \\fB", stdout);
			put_text(o->def, 1);
			fputs("\\fR.\n", stdout);
		}
	}
}

int main(int argc, char **argv)
{
	char line[4096];
	int found = 0;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: manpage TEMPLATE > PAGE\n");
		return XOM_EXIT_USAGE;
	}
	if (!(f = fopen(argv[1], "r"))) {
		perror(argv[1]);
		return XOM_EXIT_ENV;
	}
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, MARKER, strlen(MARKER)) == 0) {
			put_keys();
			found = 1;
		} else {
			fputs(line, stdout);
		}
	}
	fclose(f);
	if (!found) {
		fprintf(stderr, "manpage: %s has no line '%s'\n", argv[1], MARKER);
		return XOM_EXIT_FAILED;
	}
	return fflush(stdout) == 0 ? XOM_EXIT_OK : XOM_EXIT_ENV;
}
