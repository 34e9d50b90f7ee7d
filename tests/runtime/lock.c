/*
 * lock-test: xom's lock (loader/batch.c) names its owner by the kernel's
 * thread ID, which the runtime asks once per thread and keeps with the
 * generation of the process: the owner must be the thread that holds it
 * in the process, in a thread, and in a child made by libc's fork, by a
 * raw fork and by a raw clone, where the C library's own copy of the ID
 * is the parent's.  A wrong owner lets another thread take the lock for
 * one that no longer exists, while it is held.  Linked with the runtime's
 * own objects.
 *
 *   lock-test      prints one PASS or FAIL line for each case
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../loader/loader.h"
#include "../../loader/xom_loader.h"
#include "../check.h"

static const char *test_name;

#define CHECK_FAILED return 1

/* Enters and leaves twice (the second from the thread's kept ID): the
 * owner is this thread both times, and nobody after. */
static int owner_is_self(void)
{
	for (int i = 0; i < 2; i++) {
		xom_enter();
		int owner = xom_lock_owner(), tid = (int)syscall(SYS_gettid);
		xom_leave();
		CHECK(owner == tid, "entry %d: owner %d, this thread %d", i + 1, owner, tid);
	}
	CHECK(xom_lock_owner() == 0, "owner %d after leaving", xom_lock_owner());
	return 0;
}

static void *in_thread(void *arg)
{
	*(int *)arg = owner_is_self();
	return NULL;
}

/* Runs owner_is_self in a child made by way, and in a thread there. */
static int in_child(const char *way)
{
	fflush(stdout);
	pid_t pid = !strcmp(way, "fork") ? fork()
	          : !strcmp(way, "raw-fork") ? (pid_t)syscall(SYS_fork)
	          : (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		int rc = owner_is_self(), trc = 1;
		pthread_t t;
		if (!rc && pthread_create(&t, NULL, in_thread, &trc) == 0)
			pthread_join(t, NULL);
		fflush(stdout);
		_exit(rc || trc);
	}
	int st;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid, "no child");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	return 0;
}

int main(void)
{
	static const char *const ways[] = { "fork", "raw-fork", "raw-clone" };
	int failed = 0, trc = 1;
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* After start-up, when the generation page is set up. */
	xom_started = 1;
	test_name = "lock-owner";
	if (owner_is_self() == 0 && pthread_create(&t, NULL, in_thread, &trc) == 0
	    && pthread_join(t, NULL) == 0 && trc == 0)
		printf("PASS %s\n", test_name);
	else
		failed = 1;
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "lock-owner-%s", ways[i]);
		test_name = name;
		if (in_child(ways[i]) == 0)
			printf("PASS %s\n", test_name);
		else
			failed = 1;
	}
	return failed;
}
