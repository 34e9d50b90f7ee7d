/*
 * status_count.c - xom status's counting rule on made-up smaps text, so
 * that it is tested where the kernel shows no protection keys: a code page
 * is execute-only only when it is mapped --xp with a non-zero key.
 * It includes cmd/status.c to reach its static functions, and stands in
 * for the helpers that cmd/xom.c gives it.
 */
#include "../../cmd/status.c"

#include <stdarg.h>

void say(const char *fmt, ...)
{
	(void)fmt;
}

int usage_error(const char *fmt, ...)
{
	(void)fmt;
	return XOM_EXIT_USAGE;
}

int status_system(int json)
{
	(void)json;
	return XOM_EXIT_OK;
}

int show_help(void)
{
	return XOM_EXIT_OK;
}

int option_error(int c, char *const argv[], const struct option *longopts)
{
	(void)c; (void)argv; (void)longopts;
	return XOM_EXIT_USAGE;
}

static const char with_keys[] =
	"7f0000000000-7f0000002000 --xp 00000000 08:01 12 /lib/a.so\n"
	"Size:                  8 kB\n"
	"ProtectionKey:         1\n"
	"7f0000002000-7f0000003000 r-xp 00002000 08:01 12 /lib/a.so\n"
	"ProtectionKey:         1\n"
	"7f0000003000-7f0000004000 --xp 00003000 08:01 12 /lib/a.so\n"
	"ProtectionKey:         0\n"
	"7f0000004000-7f0000005000 --xs 00000000 08:01 13 /lib/b.so\n"
	"ProtectionKey:         2\n"
	"7f0000005000-7f0000006000 -wxp 00001000 08:01 13 /lib/b.so\n"
	"ProtectionKey:         2\n"
	"7f0000006000-7f0000007000 rw-p 00002000 08:01 13 /lib/b.so\n"
	"ProtectionKey:         4\n"
	"7f0000007000-7f0000009000 --xp 00000000 00:00 0 \n"
	"ProtectionKey:         3\n";

static const char without_keys[] =
	"7f0000000000-7f0000002000 --xp 00000000 08:01 12 /lib/a.so\n"
	"Size:                  8 kB\n";

struct want {
	const char *name;
	unsigned long xo, readable;
	unsigned keys;
};

static int failures;

static void expect(const struct objects *objs, const struct want *w)
{
	for (size_t i = 0; i < objs->n; i++) {
		const struct obj_pages *o = &objs->v[i];
		if (strcmp(o->name, w->name))
			continue;
		if (o->xo != w->xo || o->readable != w->readable || o->keys != w->keys) {
			printf("FAIL %s: %lu execute-only, %lu readable, keys %#x; expected %lu, %lu, %#x\n",
			       w->name, o->xo, o->readable, o->keys, w->xo, w->readable, w->keys);
			failures++;
		}
		return;
	}
	printf("FAIL %s: not listed\n", w->name);
	failures++;
}

static void count(const char *text, struct objects *objs, int *saw_keys)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	if (!f || read_smaps(f, objs, saw_keys) != 0) {
		printf("FAIL read_smaps\n");
		exit(1);
	}
	fclose(f);
}

int main(void)
{
	static const struct want keyed[] = {
		{ "/lib/a.so", 2, 2, 1u << 1 },        /* --xp key 1; r-xp; --xp key 0 */
		{ "/lib/b.so", 0, 2, 1u << 2 },        /* --xs and -wxp: not --xp */
		{ "[anonymous]", 2, 0, 1u << 3 },
	};
	struct objects objs = { 0 };
	int saw_keys;

	if (sysconf(_SC_PAGESIZE) != 4096) {
		printf("SKIP: the made-up mappings assume 4 KiB pages\n");
		return 0;
	}
	count(with_keys, &objs, &saw_keys);
	if (objs.n != 3 || !saw_keys) {
		printf("FAIL %zu objects, keys seen %d; expected 3, 1\n", objs.n, saw_keys);
		failures++;
	}
	for (size_t i = 0; i < sizeof keyed / sizeof keyed[0]; i++)
		expect(&objs, &keyed[i]);
	free(objs.v);

	objs = (struct objects){ 0 };
	count(without_keys, &objs, &saw_keys);
	expect(&objs, &(struct want){ "/lib/a.so", 0, 2, 0 });
	if (saw_keys) {
		printf("FAIL keys seen in smaps without ProtectionKey lines\n");
		failures++;
	}
	free(objs.v);
	printf("%s\n", failures ? "the counting rule is broken" : "ok");
	return failures != 0;
}
