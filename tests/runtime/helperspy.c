/*
 * helperspy.c - stands in for xom-plan beside a copy of libxom.so, to show
 * what the runtime starts its helper with: it appends two lines to
 * spy.log in its own folder,
 *     sched POLICY nice NICE
 *     ids RUID EUID SUID as SOFT HARD core SOFT HARD
 * (limits in bytes, -1 for none), then runs the real helper,
 * xom-plan.real, from the same folder with the same arguments.  Linked
 * statically, as the real helper is, so that no preload reaches it.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

static long long lim(rlim_t v)
{
	return v == RLIM_INFINITY ? -1 : (long long)v;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], line[256];
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
	int len = snprintf(line, sizeof(line), "sched %d nice %d\n"
	                   "ids %u %u %u as %lld %lld core %lld %lld\n",
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
