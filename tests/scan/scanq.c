/*
 * scanq - answers questions about one line of `xom-scan --json` output, so
 * that the shell tests need neither jq nor python.
 *
 *   scanq FILE check          the line is valid JSON with the documented
 *                             fields, types and invariants
 *   scanq FILE get KEY        a number or string member (ngadgets: the count of
 *                             gadgets; "a.b": member b of the object a)
 *   scanq FILE page ADDR      "readable" or "xom": is ADDR in a readable range
 *   scanq FILE reason ADDR    reasons of the data ranges holding ADDR, or "none"
 *   scanq FILE ref ADDR       refs of the data ranges holding ADDR, or "none"
 *   scanq FILE gadget ADDR    "KIND aligned|unaligned" for each gadget at ADDR
 *   scanq FILE hasreason R    "yes" if any data range has reason R, else "no"
 *   scanq FILE readable       the readable ranges, one "start end" (hex) a line
 *
 * FILE holds the output of one scan; its first line is used.  ADDR may be
 * decimal or 0x-hex.  Exit status: 0 answered, 1 the check failed, 2 bad
 * input or usage.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSON value.  Only what the scanner emits is needed: objects, arrays,
 * strings without escapes beyond the simple ones, unsigned integers,
 * booleans and null. */
enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	uint64_t num;           /* J_NUM, J_BOOL */
	char *str;              /* J_STR */
	size_t n;               /* J_ARR, J_OBJ: number of items */
	struct jval *items;     /* J_ARR, J_OBJ */
	char **keys;            /* J_OBJ */
};

static const char *pos;
static const char *parse_err;

static void skip_ws(void)
{
	while (*pos == ' ' || *pos == '\t' || *pos == '\r' || *pos == '\n')
		pos++;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fputs("scanq: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

static int parse_value(struct jval *v, int depth);

static int parse_string(char **out)
{
	size_t len = 0, cap = 16;
	char *s = xrealloc(NULL, cap);

	pos++;          /* the opening quote */
	for (;;) {
		char c = *pos++;
		if (c == '\0' || (unsigned char)c < 0x20) {
			free(s);
			parse_err = "unterminated string or control character";
			return -1;
		}
		if (c == '"')
			break;
		if (c == '\\') {
			c = *pos++;
			switch (c) {
			case '"': case '\\': case '/': break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u':
				/* File names are the only strings that could need
				 * this; keep the code point's low byte, which is
				 * enough to compare ASCII names. */
				for (int i = 0; i < 4; i++) {
					if (!isxdigit((unsigned char)pos[i])) {
						free(s);
						parse_err = "bad \\u escape";
						return -1;
					}
				}
				c = (char)strtoul((char[]){ pos[2], pos[3], 0 },
						  NULL, 16);
				pos += 4;
				break;
			default:
				free(s);
				parse_err = "bad escape";
				return -1;
			}
		}
		if (len + 2 > cap)
			s = xrealloc(s, cap *= 2);
		s[len++] = c;
	}
	s[len] = '\0';
	*out = s;
	return 0;
}

static int parse_seq(struct jval *v, int depth, char close, int is_obj)
{
	size_t cap = 0;

	pos++;
	skip_ws();
	if (*pos == close) {
		pos++;
		return 0;
	}
	for (;;) {
		if (v->n == cap) {
			cap = cap ? cap * 2 : 8;
			v->items = xrealloc(v->items, cap * sizeof *v->items);
			if (is_obj)
				v->keys = xrealloc(v->keys, cap * sizeof *v->keys);
		}
		skip_ws();
		if (is_obj) {
			if (*pos != '"') {
				parse_err = "object key is not a string";
				return -1;
			}
			if (parse_string(&v->keys[v->n]) < 0)
				return -1;
			skip_ws();
			if (*pos++ != ':') {
				parse_err = "missing ':' after key";
				return -1;
			}
		}
		if (parse_value(&v->items[v->n], depth + 1) < 0)
			return -1;
		v->n++;
		skip_ws();
		if (*pos == ',') {
			pos++;
			continue;
		}
		if (*pos == close) {
			pos++;
			return 0;
		}
		parse_err = is_obj ? "expected ',' or '}'" : "expected ',' or ']'";
		return -1;
	}
}

static int parse_value(struct jval *v, int depth)
{
	memset(v, 0, sizeof *v);
	if (depth > 16) {
		parse_err = "nested too deeply";
		return -1;
	}
	skip_ws();
	switch (*pos) {
	case '{':
		v->type = J_OBJ;
		return parse_seq(v, depth, '}', 1);
	case '[':
		v->type = J_ARR;
		return parse_seq(v, depth, ']', 0);
	case '"':
		v->type = J_STR;
		return parse_string(&v->str);
	case 't':
		if (strncmp(pos, "true", 4) == 0) {
			v->type = J_BOOL, v->num = 1, pos += 4;
			return 0;
		}
		break;
	case 'f':
		if (strncmp(pos, "false", 5) == 0) {
			v->type = J_BOOL, v->num = 0, pos += 5;
			return 0;
		}
		break;
	case 'n':
		if (strncmp(pos, "null", 4) == 0) {
			v->type = J_NULL, pos += 4;
			return 0;
		}
		break;
	default:
		if (isdigit((unsigned char)*pos)) {
			char *end;
			/* Addresses are unsigned 64-bit; a leading zero, a
			 * sign, a fraction or an exponent would be wrong. */
			if (pos[0] == '0' && isdigit((unsigned char)pos[1])) {
				parse_err = "number with a leading zero";
				return -1;
			}
			errno = 0;
			v->type = J_NUM;
			v->num = strtoull(pos, &end, 10);
			if (errno || *end == '.' || *end == 'e' || *end == 'E') {
				parse_err = "number is not an unsigned 64-bit integer";
				return -1;
			}
			pos = end;
			return 0;
		}
	}
	parse_err = "unexpected character";
	return -1;
}

static const struct jval *member(const struct jval *o, const char *key)
{
	if (!o || o->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			return &o->items[i];
	return NULL;
}

static int check_fail;

static void bad(const char *what, size_t i)
{
	printf("check: %s (item %zu)\n", what, i);
	check_fail = 1;
}

static const char *const reasons[] = {
	"header", "section", "outside", "rip-load", "table", "absolute",
	"textrel", "writable", "no-sections",
};

static int known_reason(const char *r)
{
	for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
		if (strcmp(r, reasons[i]) == 0)
			return 1;
	return 0;
}

/* The documented shape, plus the invariants a correct map must keep. */
static int check(const struct jval *o)
{
	const struct jval *f = member(o, "file"), *ep = member(o, "exec_pages"),
		*xp = member(o, "xom_pages"), *rd = member(o, "readable"),
		*da = member(o, "data"), *ga = member(o, "gadgets");
	uint64_t rpages = 0, prev_end = 0;

	if (!o || o->type != J_OBJ)
		return bad("not an object", 0), 1;
	if (!f || f->type != J_STR)
		bad("file missing or not a string", 0);
	if (!ep || ep->type != J_NUM || !xp || xp->type != J_NUM)
		return bad("exec_pages/xom_pages missing or not integers", 0), 1;
	if (xp->num > ep->num)
		bad("xom_pages > exec_pages", 0);
	if (!rd || rd->type != J_ARR || !da || da->type != J_ARR ||
	    !ga || ga->type != J_ARR)
		return bad("readable/data/gadgets missing or not arrays", 0), 1;
	for (size_t i = 0; i < rd->n; i++) {
		const struct jval *r = &rd->items[i];
		if (r->type != J_ARR || r->n != 2 || r->items[0].type != J_NUM ||
		    r->items[1].type != J_NUM) {
			bad("readable item is not [start, end]", i);
			continue;
		}
		uint64_t s = r->items[0].num, e = r->items[1].num;
		if (s % 4096 || e % 4096 || s >= e)
			bad("readable range not page-aligned or empty", i);
		if (i && s < prev_end)
			bad("readable ranges unsorted or overlapping", i);
		prev_end = e;
		rpages += (e - s) / 4096;
	}
	if (rpages != ep->num - xp->num)
		bad("readable pages != exec_pages - xom_pages", rpages);
	const struct jval *rb = member(o, "readable_bytes"), *rg = member(o, "ret_gadgets");
	if (!rb || rb->type != J_NUM || !rg || rg->type != J_NUM)
		bad("readable_bytes/ret_gadgets missing or not integers", 0);
	else if (rb->num > rpages * 4096 || rg->num > rb->num)
		bad("readable_bytes above the readable pages, or more gadgets than bytes",
		    rb->num);
	const struct jval *sl = member(o, "section_level"),
		*sb = member(sl, "readable_bytes"), *sg = member(sl, "ret_gadgets");
	if (!sb || sb->type != J_NUM || !sg || sg->type != J_NUM)
		bad("section_level readable_bytes/ret_gadgets missing or not integers", 0);
	else if (rb && rg && rb->type == J_NUM && rg->type == J_NUM
	         && (sb->num > rb->num || sg->num > rg->num))
		bad("the section-level method leaves more readable than xom", sb->num);
	for (size_t i = 0; i < da->n; i++) {
		const struct jval *d = &da->items[i], *s = member(d, "start"),
			*e = member(d, "end"), *r = member(d, "reason"),
			*ref = member(d, "ref");
		if (!s || s->type != J_NUM || !e || e->type != J_NUM ||
		    !r || r->type != J_STR || !ref ||
		    (ref->type != J_NUM && ref->type != J_NULL)) {
			bad("data item lacks start/end/reason/ref", i);
			continue;
		}
		if (s->num >= e->num)
			bad("data range empty", i);
		if (!known_reason(r->str))
			bad("unknown reason", i);
	}
	for (size_t i = 0; i < ga->n; i++) {
		const struct jval *g = &ga->items[i], *a = member(g, "addr"),
			*k = member(g, "kind"), *al = member(g, "aligned");
		if (!a || a->type != J_NUM || !k || k->type != J_STR ||
		    !al || al->type != J_BOOL) {
			bad("gadget lacks addr/kind/aligned", i);
			continue;
		}
		if (strcmp(k->str, "wrpkru") && strcmp(k->str, "xrstor"))
			bad("unknown gadget kind", i);
	}
	return check_fail;
}

/* After check() has passed, every member the queries use exists. */
static const struct jval *need(const struct jval *o, const char *key)
{
	const struct jval *v = member(o, key);

	if (!v) {
		fprintf(stderr, "scanq: no member %s\n", key);
		exit(2);
	}
	return v;
}

static uint64_t parse_addr(const char *s)
{
	char *end;
	errno = 0;
	uint64_t v = strtoull(s, &end, 0);
	if (errno || *end || !*s) {
		fprintf(stderr, "scanq: bad address '%s'\n", s);
		exit(2);
	}
	return v;
}

static int usage(void)
{
	fputs("usage: scanq FILE check|get KEY|page ADDR|reason ADDR|ref ADDR|"
	      "gadget ADDR|hasreason R|readable\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static char line[1 << 22];
	/* Static: the tree stays reachable until exit, which frees it. */
	static struct jval root;
	FILE *fp;

	if (argc < 3)
		return usage();
	fp = fopen(argv[1], "r");
	if (!fp) {
		fprintf(stderr, "scanq: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (!fgets(line, sizeof line, fp)) {
		fprintf(stderr, "scanq: %s: empty\n", argv[1]);
		return 2;
	}
	fclose(fp);
	pos = line;
	if (parse_value(&root, 0) < 0) {
		printf("check: not JSON: %s at column %td\n", parse_err,
		       pos - line + 1);
		return strcmp(argv[2], "check") == 0 ? 1 : 2;
	}
	skip_ws();
	if (*pos) {
		printf("check: trailing bytes after the object\n");
		return 1;
	}

	const char *cmd = argv[2];
	if (strcmp(cmd, "check") == 0)
		return check(&root);
	if (check(&root)) {
		fputs("scanq: the line does not have the documented shape\n",
		      stderr);
		return 2;
	}
	if (strcmp(cmd, "readable") == 0) {
		const struct jval *rd = need(&root, "readable");
		for (size_t i = 0; i < rd->n; i++)
			printf("%#" PRIx64 " %#" PRIx64 "\n", rd->items[i].items[0].num,
			       rd->items[i].items[1].num);
		return 0;
	}
	if (argc != 4)
		return usage();
	if (strcmp(cmd, "get") == 0) {
		if (strcmp(argv[3], "ngadgets") == 0) {
			printf("%zu\n", need(&root, "gadgets")->n);
			return 0;
		}
		/* "a.b": member b of the object a. */
		char key[128];
		snprintf(key, sizeof key, "%s", argv[3]);
		char *dot = strchr(key, '.');
		if (dot)
			*dot++ = '\0';
		const struct jval *v = member(&root, key);
		if (dot)
			v = member(v, dot);
		if (!v)
			return usage();
		if (v->type == J_STR)
			printf("%s\n", v->str);
		else if (v->type == J_NUM)
			printf("%" PRIu64 "\n", v->num);
		else
			return usage();
		return 0;
	}
	if (strcmp(cmd, "hasreason") == 0) {
		const struct jval *da = need(&root, "data");
		for (size_t i = 0; i < da->n; i++)
			if (strcmp(need(&da->items[i], "reason")->str, argv[3]) == 0)
				return puts("yes"), 0;
		return puts("no"), 0;
	}

	uint64_t a = parse_addr(argv[3]);
	int found = 0;
	if (strcmp(cmd, "page") == 0) {
		const struct jval *rd = need(&root, "readable");
		for (size_t i = 0; i < rd->n; i++)
			if (a >= rd->items[i].items[0].num &&
			    a < rd->items[i].items[1].num)
				found = 1;
		puts(found ? "readable" : "xom");
		return 0;
	}
	if (strcmp(cmd, "reason") == 0 || strcmp(cmd, "ref") == 0) {
		const struct jval *da = need(&root, "data");
		for (size_t i = 0; i < da->n; i++) {
			const struct jval *d = &da->items[i], *ref;
			if (a < need(d, "start")->num || a >= need(d, "end")->num)
				continue;
			printf("%s", found++ ? " " : "");
			if (strcmp(cmd, "reason") == 0) {
				printf("%s", need(d, "reason")->str);
			} else {
				ref = need(d, "ref");
				if (ref->type == J_NULL)
					printf("null");
				else
					printf("%#" PRIx64, ref->num);
			}
		}
		puts(found ? "" : "none");
		return 0;
	}
	if (strcmp(cmd, "gadget") == 0) {
		const struct jval *ga = need(&root, "gadgets");
		for (size_t i = 0; i < ga->n; i++) {
			const struct jval *g = &ga->items[i];
			if (need(g, "addr")->num != a)
				continue;
			printf("%s%s %s", found++ ? " " : "",
			       need(g, "kind")->str,
			       need(g, "aligned")->num ? "aligned" : "unaligned");
		}
		puts(found ? "" : "none");
		return 0;
	}
	return usage();
}
