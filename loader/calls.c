/*
 * calls.c - the libc calls that xom stands in for, whichever door routes
 * the program to them: the preload library exports functions of the same
 * names, and the audit module binds the program's references to libc's
 * functions to these (la_symbind64).
 *
 * SIGSEGV: xom's handler must stay first, while the program sees its own
 * action; glibc's signal family calls sigaction internally, past any
 * interposer, so each member is done here with its own semantics.  The
 * protection key: a program may free and set only the keys it allocated,
 * and xom's is not one of them.
 *
 * Phase: any time after start, in any thread of the program.
 */
#include <errno.h>

#include "loader.h"
#include "sys.h"
#include "xom_loader.h"

struct xom_libc xom_libc;

/* errno as the program sees it: the audit module has a libc, and so an
 * errno, of its own, so a failure is reported through the program's. */
static void set_errno(int err)
{
	*(xom_libc.errno_location ? xom_libc.errno_location() : &errno) = err;
}

int xom_call_sigaction(int sig, const struct sigaction *act,
                       struct sigaction *old)
{
	if (sig == SIGSEGV) {
		if (xom_sigaction(act, old) == 0)
			return 0;
		if (xom_libc.forward && xom_libc.forward(act, old) == 0)
			return 0;
	}
	if (!xom_libc.sigaction) {
		set_errno(ENOSYS);
		return -1;
	}
	return xom_libc.sigaction(sig, act, old);
}

/* siginterrupt(SIGSEGV, 1) was called: glibc keeps this in a set of its
 * own (_sigintr), which its signal() reads for the flags it installs. */
static int segv_interrupts;

static sighandler_t set_handler(int sig, sighandler_t handler, int flags,
                                int mask_self)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = flags;
	if (mask_self) {
		uint64_t self = 1ull << (sig - 1);
		memcpy(&act.sa_mask, &self, sizeof(self));
	}
	if (xom_call_sigaction(sig, &act, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* The signal() family's checks before set_handler: sigset and sigignore
 * take SIG_ERR as a handler like any other. */
static sighandler_t checked_handler(int sig, sighandler_t handler, int flags,
                                    int mask_self)
{
	if (sig <= 0 || sig >= NSIG || handler == SIG_ERR) {
		set_errno(EINVAL);
		return SIG_ERR;
	}
	return set_handler(sig, handler, flags, mask_self);
}

/* Only SIGSEGV needs xom: for every other signal the program's own libc
 * function answers, with all of its semantics.  For SIGSEGV each call is
 * done as glibc does it, through xom's sigaction. */

/* signal(), bsd_signal(), ssignal(): BSD semantics. */
sighandler_t xom_call_signal(int sig, sighandler_t handler)
{
	if (sig != SIGSEGV && xom_libc.signal)
		return xom_libc.signal(sig, handler);
	return checked_handler(sig, handler, segv_interrupts ? 0 : SA_RESTART, 1);
}

/* sysv_signal(): System V semantics, one-shot and not masked. */
sighandler_t xom_call_sysv_signal(int sig, sighandler_t handler)
{
	if (sig != SIGSEGV && xom_libc.sysv_signal)
		return xom_libc.sysv_signal(sig, handler);
	return checked_handler(sig, handler, SA_RESETHAND | SA_NODEFER, 0);
}

int xom_call_sigignore(int sig)
{
	if (sig != SIGSEGV && xom_libc.sigignore)
		return xom_libc.sigignore(sig);
	return set_handler(sig, SIG_IGN, 0, 0) == SIG_ERR ? -1 : 0;
}

int xom_call_siginterrupt(int sig, int interrupt)
{
	struct sigaction act;

	if (sig != SIGSEGV && xom_libc.siginterrupt)
		return xom_libc.siginterrupt(sig, interrupt);
	if (xom_call_sigaction(sig, NULL, &act) != 0)
		return -1;
	segv_interrupts = interrupt != 0;
	if (interrupt)
		act.sa_flags &= ~SA_RESTART;
	else
		act.sa_flags |= SA_RESTART;
	return xom_call_sigaction(sig, &act, NULL) != 0 ? -1 : 0;
}

/* sigset(), as glibc's: SIG_HOLD blocks the signal and returns the old
 * disposition (SIG_HOLD if it was blocked already); anything else, even
 * SIG_ERR, is set as the handler, and the signal unblocked.  For SIGSEGV
 * the old disposition is the one the program set, not xom's handler,
 * which libc's own sigset would see. */
sighandler_t xom_call_sigset(int sig, sighandler_t disp)
{
	if (sig != SIGSEGV)
		return xom_libc.sigset ? xom_libc.sigset(sig, disp)
		                       : (set_errno(ENOSYS), SIG_ERR);
	uint64_t set = 1ull << (sig - 1), old;
	if (disp == SIG_HOLD) {
		struct sigaction now;
		if (x_sigmask(SIG_BLOCK, &set, &old) != 0)
			return SIG_ERR;
		if (old & set)
			return SIG_HOLD;
		if (xom_call_sigaction(sig, NULL, &now) != 0)
			return SIG_ERR;
		return now.sa_handler;
	}
	sighandler_t prev = set_handler(sig, disp, 0, 0);
	if (prev != SIG_ERR && x_sigmask(SIG_UNBLOCK, &set, &old) == 0
	    && (old & set))
		prev = SIG_HOLD;
	return prev;
}

static int guarded(int key)
{
	if (xom_key_guard(key))
		return 1;
	return xom_libc.key_guard && xom_libc.key_guard(key);
}

int xom_call_pkey_free(int key)
{
	if (guarded(key)) {
		set_errno(EINVAL);
		return -1;
	}
	return xom_libc.pkey_free ? xom_libc.pkey_free(key) : (set_errno(ENOSYS), -1);
}

int xom_call_pkey_set(int key, unsigned rights)
{
	if (guarded(key)) {
		set_errno(EINVAL);
		return -1;
	}
	return xom_libc.pkey_set ? xom_libc.pkey_set(key, rights)
	                         : (set_errno(ENOSYS), -1);
}
