/*
 * libempty.c - a library for LD_PRELOAD that does nothing but say that it
 * was loaded: its constructor appends the program's name to the file that
 * XOM_TEST_MARK names.  tests/cmd/native.sh preloads it under xom run to
 * see that the user's own LD_PRELOAD still takes effect.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void mark_loaded(void)
{
	const char *file = getenv("XOM_TEST_MARK");
	int fd = file ? open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;

	if (fd < 0)
		return;
	size_t n = strlen(program_invocation_short_name);
	/* One write, so that lines from several processes do not mix. */
	char line[256];
	if (n > sizeof line - 1)
		n = sizeof line - 1;
	memcpy(line, program_invocation_short_name, n);
	line[n] = '\n';
	ssize_t r = write(fd, line, n + 1);
	(void)r;
	close(fd);
}
