/*
 * helperspy.c - stands in for xom-plan beside a copy of libxom.so, to show
 * what the runtime starts its helper with: it appends three lines to
 * spy.log in its own folder,
 *     fds 0:KIND 1:KIND 2:KIND more N
 *     sched POLICY nice NICE
 *     ids RUID EUID SUID as SOFT HARD core SOFT HARD
 * (KIND: closed, null, file, socket, other, or pipe-r/pipe-w by its access
 * mode; N: its other descriptors; limits in bytes, -1 for none), then runs the real helper,
 * xom-plan.real, from the same folder with the same arguments.  Linked
 * statically, as the real helper is, so that no preload reaches it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static long long lim(rlim_t v)
{
	return v == RLIM_INFINITY ? -1 : (long long)v;
}

static const char *kind(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fstat(fd, &st) != 0)
		return "closed";
	if (S_ISFIFO(st.st_mode))
		return (fl & O_ACCMODE) == O_RDONLY ? "pipe-r" : "pipe-w";
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
		return "null";
	return S_ISREG(st.st_mode) ? "file" : S_ISSOCK(st.st_mode) ? "socket" : "other";
}

/* The descriptors past the standard three, this listing's own aside. */
static int more(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && atoi(e->d_name) > 2 && atoi(e->d_name) != dirfd(d))
			n++;
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], line[384];
	uid_t r, e, s;
	struct rlimit as, core;

	(void)argc;
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		return 127;
	dir[n] = 0;
	char *slash = strrchr(dir, '/');
	if (!slash)
		return 127;
	*slash = 0;
	if (getresuid(&r, &e, &s) != 0 || getrlimit(RLIMIT_AS, &as) != 0
	    || getrlimit(RLIMIT_CORE, &core) != 0)
		return 127;
	int len = snprintf(line, sizeof(line), "fds 0:%s 1:%s 2:%s more %d\n"
	                   "sched %d nice %d\n"
	                   "ids %u %u %u as %lld %lld core %lld %lld\n",
	                   kind(0), kind(1), kind(2), more(),
	                   sched_getscheduler(0), getpriority(PRIO_PROCESS, 0),
	                   (unsigned)r, (unsigned)e, (unsigned)s, lim(as.rlim_cur),
	                   lim(as.rlim_max), lim(core.rlim_cur), lim(core.rlim_max));
	snprintf(path, sizeof(path), "%s/spy.log", dir);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 || write(fd, line, (size_t)len) != len)
		return 127;
	close(fd);
	snprintf(path, sizeof(path), "%s/xom-plan.real", dir);
	execv(path, argv);
	return 127;
}
