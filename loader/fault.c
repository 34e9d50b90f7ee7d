/*
 * fault.c - the SIGSEGV handler: reports reads of protected code, and hands
 * every other fault to the handler the program set.
 *
 * Phase: fault.  on_segv runs with the kernel's default PKRU, which denies
 * reads of our key's pages, on any thread, at any moment.  It uses only raw
 * system calls, the [fault] functions of loader.h, and reads of xom's own
 * tables.  xom_fault_install runs at start, xom_sigaction whenever the
 * program calls sigaction or signal for SIGSEGV.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "loader.h"
#include "xom_loader.h"

/* The signal return trampoline, byte for byte what libgcc's unwinder and
 * debuggers recognise as a signal frame. */
__attribute__((naked, used)) static void restore_rt(void)
{
	__asm__ volatile("movq $15, %rax\n\tsyscall\n\thlt");
}

/* The kernel's struct sigaction, which the raw system call takes. */
struct k_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};
#define K_SA_RESTORER 0x04000000ul

static struct sigaction prog_act;       /* the program's SIGSEGV action */

static long k_sigaction(int sig, const struct k_sigaction *k,
                        struct k_sigaction *old)
{
	return syscall(SYS_rt_sigaction, sig, k, old, 8);
}

/* Sets SIGSEGV back to its default and sends it again: it is blocked
 * while the handler runs, so it arrives when the handler returns, and the
 * process dies by SIGSEGV as it would have without xom. */
static void die_by_segv(void)
{
	struct k_sigaction k = { 0 };

	k_sigaction(SIGSEGV, &k, NULL);
	syscall(SYS_tgkill, (long)getpid(), syscall(SYS_gettid), SIGSEGV);
}

/* "0x... (/path+0x..., in sym+0x...)" for an address. */
static size_t put_place(char *buf, size_t cap, uintptr_t addr)
{
	const struct xom_object *o = xom_object_at(addr);

	if (!o)
		return xom_fmt(buf, cap, "%#lx (unknown object)", (unsigned long)addr);
	uint64_t off = 0, v = addr - o->bias;
	const char *sym = xom_plan_symbol(o->plan, v, &off);
	if (sym && off)
		return xom_fmt(buf, cap, "%#lx (%s+%#lx, in %s+%#lx)",
		               (unsigned long)addr, o->path, (unsigned long)v, sym,
		               (unsigned long)off);
	return xom_fmt(buf, cap, "%#lx (%s+%#lx, in %s)", (unsigned long)addr,
	               o->path, (unsigned long)v, sym ? sym : "?");
}

static void pass_on(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = prog_act;

	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL) {
		die_by_segv();
		return;
	}
	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN) {
		/* The kernel does not let a fault be ignored either. */
		if (si->si_code > 0)
			die_by_segv();
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		memset(&prog_act, 0, sizeof(prog_act));
		prog_act.sa_handler = SIG_DFL;
	}
	sigset_t old;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &a.sa_mask, &old, 8);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
}

static void report(int allow, uintptr_t addr, uintptr_t ip)
{
	char what[400], by[400];

	put_place(what, sizeof(what), addr);
	put_place(by, sizeof(by), ip);
	xom_say("%s read of %s by instruction at %s, pid %u",
	        allow ? "allowed" : "blocked", what, by, (unsigned)getpid());
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	ucontext_t *uc = ucv;

	if (si->si_code != SEGV_PKUERR || xom_key < 0
	    || (int)si->si_pkey != xom_key) {
		pass_on(sig, si, ucv);
		errno = saved;
		return;
	}
	uintptr_t addr = (uintptr_t)si->si_addr;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	int allow = xom_opt.mode == XOM_AUDIT;
	uintptr_t page = addr & ~(XOM_PAGE - 1);
	if (allow && syscall(SYS_pkey_mprotect, page, XOM_PAGE,
	                     PROT_READ | PROT_EXEC, 0) != 0)
		allow = 0;
	report(allow, addr, ip);
	if (allow) {
		const struct xom_object *o = xom_object_at(addr);
		if (o)
			xom_profile_append(o, page - o->bias);
	} else {
		die_by_segv();
	}
	errno = saved;
}

void xom_fault_install(void)
{
	struct k_sigaction k = {
		.handler = (void *)on_segv,
		.flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | K_SA_RESTORER,
		.restorer = (void *)restore_rt,
	}, old;

	if (k_sigaction(SIGSEGV, &k, &old) != 0) {
		xom_say("cannot install the SIGSEGV handler; reads of code will not be reported");
		return;
	}
	memset(&prog_act, 0, sizeof(prog_act));
	prog_act.sa_handler = (void (*)(int))old.handler;
	prog_act.sa_flags = (int)(old.flags & ~K_SA_RESTORER);
	memcpy(&prog_act.sa_mask, &old.mask, sizeof(old.mask));
}

int xom_sigaction(const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev = prog_act;

	if (!xom_active)
		return -1;
	if (act)
		prog_act = *act;
	if (old)
		*old = prev;
	return 0;
}
