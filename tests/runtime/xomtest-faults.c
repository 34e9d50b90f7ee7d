/*
 * xomtest-faults.c - the program's own SIGSEGV handling under xom: every
 * way of setting a handler, SA_NODEFER, unwinding from the handler, and
 * writes to protected code.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xomtest.h"

static sigjmp_buf jb;
static volatile void *fault_addr;
static volatile int depth, frames;

static void own_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	fault_addr = si->si_addr;
	siglongjmp(jb, 1);
}

static void plain_handler(int sig)
{
	(void)sig;
	siglongjmp(jb, 2);
}

static volatile int *volatile bad_ptr;

/* Faults at addr; returns 1 when the program's handler got it. */
static int fault_at(uintptr_t addr)
{
	fault_addr = NULL;
	if (sigsetjmp(jb, 1) == 0) {
		bad_ptr = (volatile int *)addr;
		*bad_ptr = 1;
		return 0;
	}
	return 1;
}

/* The kernel's SIGSEGV handler now, past every wrapper. */
static void *kernel_handler(void)
{
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } k;

	if (syscall(SYS_rt_sigaction, SIGSEGV, NULL, &k, 8) != 0)
		return NULL;
	return k.handler;
}

/* handler: sigaction and signal set the program's handler, which gets its
 * faults, and sigaction reports it; xom's handler stays the kernel's (in
 * both doors: a plain sigaction that replaced it would end enforcement
 * reports and let the program's handler see xom's faults). */
static int m_handler(int argc, char **argv)
{
	struct sigaction sa, cur;
	void *before = kernel_handler();

	(void)argc, (void)argv;
	test_name = "own-handler";
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	CHECK(kernel_handler() == before,
	      "sigaction replaced the kernel's handler %p with %p", before, kernel_handler());
	CHECK(fault_at(16), "no fault");
	CHECK(fault_addr == (void *)16, "si_addr %p", (void *)fault_addr);
	sigaction(SIGSEGV, NULL, &cur);
	CHECK(cur.sa_sigaction == own_handler, "sigaction does not report the handler");
	signal(SIGSEGV, plain_handler);
	CHECK(kernel_handler() == before,
	      "signal replaced the kernel's handler %p with %p", before, kernel_handler());
	CHECK(fault_at(32), "no fault after signal()");
	PASS("");
}

typedef sighandler_t (*setter)(int, sighandler_t);
sighandler_t bsd_signal(int, sighandler_t);

/* setter NAME: the program's handler, set with sysv_signal, bsd_signal,
 * ssignal or sigset, gets its faults, and xom's handler stays first. */
static int m_setter(int argc, char **argv)
{
	static char label[64];
	const char *name = argc > 1 ? argv[1] : "sysv_signal";
	setter set = (setter)dlsym(RTLD_DEFAULT, name);
	void *before = kernel_handler();

	snprintf(label, sizeof(label), "handler-%s", name);
	test_name = label;
	CHECK(set, "no %s", name);
	CHECK(set(SIGSEGV, plain_handler) != SIG_ERR, "%s failed", name);
	CHECK(fault_at(48), "the program's handler did not get the fault");
	CHECK(kernel_handler() == before,
	      "the kernel's handler changed from %p to %p", before, kernel_handler());
	PASS("");
}

/* raw LIB: a handler set with the raw system call, behind every wrapper,
 * is taken as the program's at the next dlopen and xom's goes back in
 * front. */
static int m_raw(int argc, char **argv)
{
	/* No restorer: the handler leaves by siglongjmp, never by return. */
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; }
		k = { (void *)plain_handler, 0, NULL, 0 };
	void *before = kernel_handler();
	struct sigaction old;

	test_name = "handler-raw";
	CHECK(argc > 1, "usage: raw LIB");
	CHECK(syscall(SYS_rt_sigaction, SIGSEGV, &k, NULL, 8) == 0, "rt_sigaction");
	CHECK(dlopen(argv[1], RTLD_NOW), "dlopen: %s", dlerror());
	CHECK(kernel_handler() == before, "xom's handler is not back (%p, was %p)",
	      kernel_handler(), before);
	CHECK(fault_at(64), "the program's handler did not get the fault");
	sigaction(SIGSEGV, NULL, &old);
	CHECK(old.sa_handler == plain_handler, "sigaction reports %p",
	      (void *)old.sa_handler);
	PASS("");
}

static void nested_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	if (++depth == 1) {
		bad_ptr = (volatile int *)80;
		*bad_ptr = 1;           /* faults again, inside the handler */
	}
	siglongjmp(jb, 1);
}

/* nodefer: a handler installed with SA_NODEFER that faults again is
 * entered again, as without xom. */
static int m_nodefer(int argc, char **argv)
{
	struct sigaction sa;

	(void)argc, (void)argv;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = nested_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	depth = 0;
	CHECK(fault_at(72), "no fault");
	CHECK(depth == 2, "handler entered %d times, expected 2", depth);
	PASS("");
}

static void unwinding_handler(int sig, siginfo_t *si, void *uc)
{
	void *pcs[64];
	(void)sig, (void)si, (void)uc;
	frames = backtrace(pcs, 64);
	int fd = open("/dev/null", O_WRONLY);
	backtrace_symbols_fd(pcs, frames, fd);
	close(fd);
	siglongjmp(jb, 1);
}

/* backtrace: glibc's backtrace() in the program's SIGSEGV handler unwinds
 * through the signal frame to the faulting function and beyond. */
static int m_backtrace(int argc, char **argv)
{
	struct sigaction sa;

	void *warm[4];

	(void)argc, (void)argv;
	/* glibc loads the unwinder (libgcc_s) on the first call: not in a
	 * signal handler. */
	CHECK(backtrace(warm, 4) > 0, "backtrace() does not work here at all");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = unwinding_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	CHECK(fault_at(88), "no fault");
	CHECK(frames >= 4, "backtrace found %d frames", frames);
	PASS("(%d frames)", frames);
}

/* write-code: makes its own code page writable, as a hot patcher does,
 * and writes a return instruction over xom_test_target, which it does
 * not call again; prints "wrote" when the write went through. */
static int m_write_code(int argc, char **argv)
{
	uintptr_t page = (uintptr_t)(const void *)self_fn & ~4095ul;
	volatile unsigned char *p = (volatile unsigned char *)(uintptr_t)(const void *)self_fn;

	(void)argc, (void)argv;
	CHECK(mprotect((void *)page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) == 0,
	      "mprotect");
	p[0] = 0xc3;
	printf("wrote\n");
	return 0;
}

const struct mode fault_modes[] = {
	{ "handler", "", "sigaction and signal set the program's handler", m_handler },
	{ "setter", "sysv_signal|bsd_signal|ssignal|sigset", "the signal family keeps xom first", m_setter },
	{ "raw", "LIB", "a raw rt_sigaction is undone at the next dlopen", m_raw },
	{ "nodefer", "", "SA_NODEFER re-enters the program's handler", m_nodefer },
	{ "backtrace", "", "backtrace() works in the program's handler", m_backtrace },
	{ "write-code", "", "write to own code after mprotect(RWX)", m_write_code },
	{ NULL, NULL, NULL, NULL },
};
