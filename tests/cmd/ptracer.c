/*
 * ptracer.c - puts xom run where it cannot use ptrace, for the tests of
 * its fallbacks with statically linked programs:
 *
 *   ptracer trace CMD...     runs CMD as a tracer of CMD and of every
 *                            process it forks, as strace -f does, so that
 *                            the program xom run starts already has a tracer
 *   ptracer noptrace CMD...  runs CMD under a seccomp filter that fails
 *                            ptrace with EPERM, as a container's profile can
 *
 * Exits with CMD's status (128+N when a signal N killed it).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int no_ptrace(char **cmd)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
	    || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("ptracer: seccomp");
		return 2;
	}
	execvp(cmd[0], cmd);
	perror("ptracer: exec");
	return 127;
}

/* Traces cmd and its forks, passing every signal on, until cmd ends. */
static int trace(char **cmd)
{
	int go[2], st;

	if (pipe(go) != 0)
		return 2;
	pid_t c = fork();
	if (c == 0) {
		char b;
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	if (ptrace(PTRACE_SEIZE, c, 0, PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK
	           | PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL) != 0) {
		perror("ptracer: PTRACE_SEIZE");
		return 2;
	}
	if (write(go[1], "g", 1) != 1)
		return 2;
	for (;;) {
		pid_t t = waitpid(-1, &st, __WALL);
		if (t < 0)
			return errno == EINTR ? 0 : 2;
		if (t == c && WIFEXITED(st))
			return WEXITSTATUS(st);
		if (t == c && WIFSIGNALED(st))
			return 128 + WTERMSIG(st);
		if (!WIFSTOPPED(st))
			continue;
		int sig = (st >> 16) ? 0 : WSTOPSIG(st);
		ptrace(PTRACE_CONT, t, 0, sig);
	}
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "trace"))
		return trace(argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "noptrace"))
		return no_ptrace(argv + 2);
	fprintf(stderr, "usage: ptracer trace|noptrace CMD...\n");
	return 64;
}
