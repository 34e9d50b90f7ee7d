/*
 * probe - a library to preload beside libxom.so that reports, when the
 * process exits, how many executable pages of each object were
 * execute-only: under a protection key other than the default one, which
 * /proc/self/smaps shows as "ProtectionKey:".  It writes one line per
 * object, "PATH UNREADABLE TOTAL" (pages), to the file named by
 * $XOM_PROBE_OUT, appending, and does nothing without it.
 *
 * It uses only open/read/write: at exit stdio may be gone, and a probe
 * must not change what the program does.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXOBJ 256

struct obj {
	char path[200];
	unsigned long unreadable, total;
};

static struct obj objs[MAXOBJ];
static unsigned nobj;

static struct obj *obj_of(const char *path)
{
	for (unsigned i = 0; i < nobj; i++)
		if (!strcmp(objs[i].path, path))
			return &objs[i];
	if (nobj == MAXOBJ)
		return NULL;
	strncpy(objs[nobj].path, path, sizeof objs[nobj].path - 1);
	return &objs[nobj++];
}

static void put(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t k = write(fd, s, n);
		if (k <= 0)
			return;
		s += k, n -= (size_t)k;
	}
}

static void put_num(int fd, unsigned long v)
{
	char b[24];
	int i = sizeof b - 1;

	b[i] = 0;
	do {
		b[--i] = (char)('0' + v % 10);
	} while ((v /= 10) && i);
	put(fd, b + i);
}

/* One line of smaps: a mapping's header, or one of its fields. */
static void take_line(char *line, struct obj **cur, unsigned long *pages)
{
	unsigned long lo, hi;
	char *p = line, *perms, *path;

	if (!strncmp(line, "ProtectionKey:", 14)) {
		if (*cur && strtoul(line + 14, NULL, 10) != 0)
			(*cur)->unreadable += *pages;
		return;
	}
	lo = strtoul(p, &p, 16);
	if (*p != '-')
		return;         /* another field of the mapping */
	hi = strtoul(p + 1, &p, 16);
	perms = p + 1;
	path = strchr(line, '/');
	*cur = NULL;
	if (perms[2] != 'x' || !path)
		return;
	*cur = obj_of(path);
	*pages = (hi - lo) / 4096;
	if (*cur)
		(*cur)->total += *pages;
}

__attribute__((destructor)) static void report(void)
{
	const char *out = getenv("XOM_PROBE_OUT");
	char buf[8192], line[512];
	size_t ln = 0;
	struct obj *cur = NULL;
	unsigned long pages = 0;
	ssize_t n;
	int fd;

	if (!out || (fd = open("/proc/self/smaps", O_RDONLY)) < 0)
		return;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (ln < sizeof line - 1)
					line[ln++] = buf[i];
				continue;
			}
			line[ln] = 0;
			take_line(line, &cur, &pages);
			ln = 0;
		}
	close(fd);
	if ((fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600)) < 0)
		return;
	for (unsigned i = 0; i < nobj; i++) {
		put(fd, objs[i].path);
		put(fd, " ");
		put_num(fd, objs[i].unreadable);
		put(fd, " ");
		put_num(fd, objs[i].total);
		put(fd, "\n");
	}
	close(fd);
}
