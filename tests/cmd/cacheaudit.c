/*
 * cacheaudit.c - an audit module that a test program of xom cache names
 * (DT_AUDIT): the dynamic linker loads and runs it even when it only lists
 * the program's libraries (ldd), so xom cache build must not list them.
 * When its code runs, it creates the file CACHE_AUDIT_MARK.
 */
#include <fcntl.h>
#include <unistd.h>

unsigned la_version(unsigned version);

unsigned la_version(unsigned version)
{
	int fd = open(CACHE_AUDIT_MARK, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
	return version;
}
