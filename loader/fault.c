/*
 * fault.c - the SIGSEGV handler: reports reads (and writes) of protected
 * code, and hands every other fault to the handler the program set.
 *
 * Phase: fault.  The handler runs with the kernel's default PKRU, which
 * denies access to our key's pages, on any thread, at any moment.  It uses
 * only raw system calls, the [fault] functions of loader.h, and reads of
 * xom's own tables.  xom_fault_install runs at start, xom_sigaction
 * whenever the program calls sigaction or signal for SIGSEGV.
 *
 * The kernel enters xom_segv_entry.  For a fault that is not ours it does
 * not call the program's handler but jumps to it, with the kernel's three
 * arguments and the kernel's stack, as if the kernel had called it: an
 * unwinder started in that handler (glibc's backtrace, libunwind, a crash
 * reporter) then finds the signal frame right above it and never has to
 * read xom's code, which is execute-only and, in the audit module's
 * namespace, has unwind information that the program's unwinder cannot
 * see.  For the same reason the handler is installed through the
 * program's own libc when a door can reach it, so that the return
 * trampoline is libc's __restore_rt with the unwind information every
 * unwinder knows; xom's own trampoline below, with the same information,
 * is the fallback.
 */
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "loader.h"
#include "sys.h"
#include "xom_loader.h"

void xom_segv_entry(int sig, siginfo_t *si, void *uc);
void xom_restore_rt(void);
void *xom_segv_decide(int sig, siginfo_t *si, void *uc);

/*
 * xom_segv_entry keeps the kernel's arguments across the call to
 * xom_segv_decide and then either returns (to the trampoline) or jumps to
 * the handler it was given.  The kernel enters with the stack as after a
 * call (rsp + 8 aligned to 16); three pushes align it for the call.
 *
 * xom_restore_rt is rt_sigreturn, with the unwind information of a signal
 * frame: at its entry rsp points at the ucontext, whose saved registers
 * say where the interrupted code was.  Like glibc's __restore_rt, the FDE
 * starts one byte early, at a nop, because unwinders look up the byte
 * before a return address.
 */
/* The offsets below are of uc_mcontext.gregs[i] in the ucontext (40 + 8 i),
 * as SLEB128: one byte below 64, two from there. */
_Static_assert(__builtin_offsetof(ucontext_t, uc_mcontext.gregs) == 40,
               "the ucontext layout the unwind information assumes");
__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl xom_segv_entry\n"
	"	.hidden xom_segv_entry\n"
	"	.type xom_segv_entry, @function\n"
	"xom_segv_entry:\n"
	"	.cfi_startproc\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call xom_segv_decide\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	ret\n"
	"	.cfi_endproc\n"
	"	.size xom_segv_entry, .-xom_segv_entry\n"
	"	.p2align 4\n"
	"	.cfi_startproc\n"
	"	.cfi_signal_frame\n"
	/* CFA = *(rsp + offsetof gregs[REG_RSP]) */
	"	.cfi_escape 0x0f, 4, 0x77, 160, 1, 0x06\n"
	"	.cfi_escape 0x10, 8, 2, 0x77, 40\n"     /* r8  gregs[0] */
	"	.cfi_escape 0x10, 9, 2, 0x77, 48\n"     /* r9 */
	"	.cfi_escape 0x10, 10, 2, 0x77, 56\n"    /* r10 */
	"	.cfi_escape 0x10, 11, 3, 0x77, 0xc0, 0\n" /* r11 (sleb 64) */
	"	.cfi_escape 0x10, 12, 3, 0x77, 0xc8, 0\n" /* r12 */
	"	.cfi_escape 0x10, 13, 3, 0x77, 0xd0, 0\n" /* r13 */
	"	.cfi_escape 0x10, 14, 3, 0x77, 0xd8, 0\n" /* r14 */
	"	.cfi_escape 0x10, 15, 3, 0x77, 0xe0, 0\n" /* r15 */
	"	.cfi_escape 0x10, 5, 3, 0x77, 0xe8, 0\n"  /* rdi gregs[8] */
	"	.cfi_escape 0x10, 4, 3, 0x77, 0xf0, 0\n"  /* rsi */
	"	.cfi_escape 0x10, 6, 3, 0x77, 0xf8, 0\n"  /* rbp */
	"	.cfi_escape 0x10, 3, 3, 0x77, 128, 1\n" /* rbx */
	"	.cfi_escape 0x10, 1, 3, 0x77, 136, 1\n" /* rdx */
	"	.cfi_escape 0x10, 0, 3, 0x77, 144, 1\n" /* rax */
	"	.cfi_escape 0x10, 2, 3, 0x77, 152, 1\n" /* rcx */
	"	.cfi_escape 0x10, 7, 3, 0x77, 160, 1\n" /* rsp */
	"	.cfi_escape 0x10, 16, 3, 0x77, 168, 1\n"/* rip gregs[16] */
	"	nop\n"
	"	.globl xom_restore_rt\n"
	"	.hidden xom_restore_rt\n"
	"	.type xom_restore_rt, @function\n"
	"xom_restore_rt:\n"
	"	movq $15, %rax\n"
	"	syscall\n"
	"	.cfi_endproc\n"
	"	.size xom_restore_rt, .-xom_restore_rt\n");

/* The kernel's struct sigaction, which the raw system call takes. */
struct k_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};
#define K_SA_RESTORER 0x04000000ul

static struct sigaction prog_act;       /* the program's SIGSEGV action */
/* The return trampoline that xom's own action carries (libc's, when libc
 * installed it): glibc's sigaction puts SA_RESTORER and its trampoline
 * into every action, and the program reads them back. */
static void *restorer;

static long k_sigaction(int sig, const struct k_sigaction *k,
                        struct k_sigaction *old)
{
	return sys4(SYS_rt_sigaction, sig, (long)k, (long)old, 8);
}

/* Sets SIGSEGV back to its default and sends it again: it is blocked
 * while the handler runs, so it arrives when the handler returns, and the
 * process dies by SIGSEGV as it would have without xom. */
static void die_by_segv(void)
{
	struct k_sigaction k = { 0 };

	k_sigaction(SIGSEGV, &k, NULL);
	x_tgkill(x_getpid(), x_gettid(), SIGSEGV);
}

/* ---- naming a place ---------------------------------------------------- */

/* Maps the symbol file of o from the first store that has one we trust. */
static const struct xom_syms_head *map_syms(const struct xom_object *o,
                                            size_t *len)
{
	char path[XOM_PATH_MAX], buf[XOM_PATH_MAX], key[XOM_KEY_NAME_MAX];
	struct stat st;
	const char *why;

	xom_key_name(&o->key, key, sizeof(key));
	for (int i = 0; i < XOM_NSTORES && o->key.kind && key[0]; i++) {
		const char *dir = xom_store_dir(i, buf, sizeof(buf));
		if (!dir || xom_fmt(path, sizeof(path), "%s/" XOM_STORE_SYMS "/%s", dir,
		                    key) >= sizeof(path) - 1)
			continue;
		int fd = (int)x_open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0)
			continue;
		void *p = NULL;
		if (x_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !(st.st_mode & 022)
		    && (st.st_uid == 0 || st.st_uid == xom_euid)
		    && st.st_size >= (off_t)sizeof(struct xom_syms_head)
		    && st.st_size <= (off_t)XOM_SYMS_MAX)
			p = x_mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		x_close(fd);
		if (!p || X_MAP_FAILED(p))
			continue;
		if (xom_syms_check(p, (size_t)st.st_size, &why) == 0) {
			*len = (size_t)st.st_size;
			return p;
		}
		x_munmap(p, (size_t)st.st_size);
	}
	return NULL;
}

/* "/path+0x..., in sym+0x..." (or ", no symbol") for an address in o.  A
 * symbol is named only when it covers the address (xom_syms_lookup): a
 * local function of a stripped library is not in its dynamic symbols, and
 * the nearest one before it would be a wrong name. */
static size_t put_where(char *buf, size_t cap, const struct xom_object *o,
                        uintptr_t addr)
{
	size_t len = 0;
	uint64_t off = 0, v = addr - o->bias;
	const struct xom_syms_head *syms = map_syms(o, &len);
	const char *sym = syms ? xom_syms_lookup(syms, v, &off) : NULL;
	const char *path = __atomic_load_n(&o->path, __ATOMIC_RELAXED);
	size_t n;

	if (!sym)
		n = xom_fmt(buf, cap, "%s+%#lx, no symbol", path, (unsigned long)v);
	else if (off)
		n = xom_fmt(buf, cap, "%s+%#lx, in %s+%#lx", path, (unsigned long)v,
		            sym, (unsigned long)off);
	else
		n = xom_fmt(buf, cap, "%s+%#lx, in %s", path, (unsigned long)v, sym);
	if (syms)
		x_munmap(syms, len);
	return n;
}

/* "0x... (/path+0x..., in sym+0x...)" for an address. */
static size_t put_place(char *buf, size_t cap, uintptr_t addr,
                        const char **where)
{
	const struct xom_object *o = xom_object_at(addr);

	*where = NULL;
	if (!o)
		return xom_fmt(buf, cap, "%#lx (unknown object)", (unsigned long)addr);
	size_t n = xom_fmt(buf, cap, "%#lx (", (unsigned long)addr);
	*where = buf + n;
	n += put_where(buf + n, cap - n, o, addr);
	return n + xom_fmt(buf + n, cap - n, ")");
}

/* The report line.  In audit mode with a profile, the page of o read is
 * appended to it, with why: the same places without the run's own
 * addresses. */
static void report(const char *verb, int write, uintptr_t addr, uintptr_t ip,
                   const struct xom_object *o, uint64_t page)
{
	char what[600], by[600];
	const char *w_what, *w_by;

	size_t nw = put_place(what, sizeof(what), addr, &w_what);
	size_t nb = put_place(by, sizeof(by), ip, &w_by);
	xom_say_fault("%s %s of %s by instruction at %s, pid %u", verb,
	        write ? "write" : "read", what, by, (unsigned)x_getpid());
	if (!o)
		return;
	/* The places end with ')', which is not part of them. */
	what[nw ? nw - 1 : 0] = 0;
	by[nb ? nb - 1 : 0] = 0;
	xom_profile_append(o, page, write ? "write" : "read",
	                   w_what ? w_what : "unknown", w_by ? w_by : "unknown");
}

/* ---- audit mode: the page's own protection ------------------------------ */

/* Gives the page back its own protection with the default key, plus the
 * access that faulted: audit mode lets the program go on as it would
 * without xom, including a program that had made its code writable.
 * Under the kernel's key (kernkey.c) pkey_mprotect may be refused, and a
 * plain mprotect away from PROT_EXEC alone gives key 0 back; where that
 * is refused too (MemoryDenyWriteExecute=yes), a page read is mapped
 * again from its file, readable. */
static int allow_page(uintptr_t page, int write)
{
	struct xom_mapped m;

	xom_mapping_of(page, &m);
	int prot = m.prot;
	if (prot < 0)
		prot = PROT_EXEC | (write ? PROT_WRITE : 0);
	prot |= PROT_READ | (write ? PROT_WRITE : 0);
	long rc = sys4(SYS_pkey_mprotect, (long)page, XOM_PAGE, prot, 0);
	if (rc != 0 && xom_via != XOM_VIA_KEY)
		rc = sys3(SYS_mprotect, (long)page, XOM_PAGE, prot);
	struct stat st;
	long fd;
	if (rc != 0 && xom_via == XOM_VIA_REMAP && !write
	    && !SYS_FAILED(fd = xom_open_mapped(&m, &st))) {
		void *p = x_mmap((void *)page, XOM_PAGE, PROT_READ | PROT_EXEC,
		                 MAP_PRIVATE | MAP_FIXED, (int)fd, (long)m.off);
		rc = p == (void *)page ? 0 : -1;
		x_close((int)fd);
	}
	return (int)rc;
}

/* ---- the decision -------------------------------------------------------- */

/* Our fault: report it, then allow the page (audit) or die (enforce). */
static void on_ours(siginfo_t *si, ucontext_t *uc)
{
	uintptr_t addr = (uintptr_t)si->si_addr;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	int write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
	uintptr_t page = addr & ~(XOM_PAGE - 1);
	int allow = xom_opt.mode == XOM_AUDIT && allow_page(page, write) == 0;
	const struct xom_object *o = allow && xom_opt.profile ? xom_object_at(addr)
	                                                       : NULL;

	report(allow ? "allowed" : "blocked", write, addr, ip, o,
	       o ? page - o->bias : 0);
	if (!allow)
		die_by_segv();
}

/* The program's action for a fault that is not ours: the handler to jump
 * to, with its mask in place, or NULL when the fault is dealt with. */
static void *program_handler(siginfo_t *si)
{
	struct sigaction a = prog_act;
	int info = (a.sa_flags & SA_SIGINFO) != 0;

	if (!info && a.sa_handler == SIG_DFL) {
		die_by_segv();
		return NULL;
	}
	if (!info && a.sa_handler == SIG_IGN) {
		/* The kernel does not let a fault be ignored either. */
		if (si->si_code > 0)
			die_by_segv();
		return NULL;
	}
	if (a.sa_flags & SA_RESETHAND) {
		memset(&prog_act, 0, sizeof(prog_act));
		prog_act.sa_handler = SIG_DFL;
	}
	/* The kernel blocked SIGSEGV for xom's handler; the program's
	 * handler gets its own mask, and SIGSEGV unblocked if it asked for
	 * SA_NODEFER.  sigreturn restores the interrupted code's mask. */
	uint64_t add, del = (a.sa_flags & (SA_NODEFER | SA_RESETHAND))
	                    ? 1ull << (SIGSEGV - 1) : 0;
	memcpy(&add, &a.sa_mask, sizeof(add));
	x_sigmask(SIG_BLOCK, &add, NULL);
	if (del)
		x_sigmask(SIG_UNBLOCK, &del, NULL);
	return info ? (void *)a.sa_sigaction : (void *)a.sa_handler;
}

void *xom_segv_decide(int sig, siginfo_t *si, void *ucv)
{
	void *next = NULL;

	(void)sig;
	/* The kernel's key is ours by its number, or, where smaps could not
	 * tell it, by the place: a protected object's code. */
	if (si->si_code == SEGV_PKUERR
	    && ((xom_key > 0 && (int)si->si_pkey == xom_key)
	        || (xom_kernel_key > 0 && (int)si->si_pkey == xom_kernel_key)
	        || (xom_kernel_key < 0 && xom_object_at((uintptr_t)si->si_addr))))
		on_ours(si, ucv);
	else
		next = program_handler(si);
	return next;
}

/* ---- installing --------------------------------------------------------- */

static int (*libc_sigaction)(int, const struct sigaction *, struct sigaction *);

static int install(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = xom_segv_entry;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	memset(&sa.sa_mask, 0, sizeof(sa.sa_mask));
	if (libc_sigaction) {
		if (libc_sigaction(SIGSEGV, &sa, &old) != 0)
			return -1;
		if ((void *)old.sa_sigaction != (void *)xom_segv_entry)
			prog_act = old;
		struct k_sigaction cur;
		if (k_sigaction(SIGSEGV, NULL, &cur) == 0)
			restorer = cur.restorer;
		return 0;
	}
	restorer = (void *)xom_restore_rt;
	struct k_sigaction k = {
		.handler = (void *)xom_segv_entry,
		.flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | K_SA_RESTORER,
		.restorer = (void *)xom_restore_rt,
	}, kold;
	if (k_sigaction(SIGSEGV, &k, &kold) != 0)
		return -1;
	if (kold.handler != (void *)xom_segv_entry) {
		memset(&prog_act, 0, sizeof(prog_act));
		prog_act.sa_handler = (void (*)(int))kold.handler;
		prog_act.sa_flags = (int)kold.flags;
		prog_act.sa_restorer = (void (*)(void))kold.restorer;
		memcpy(&prog_act.sa_mask, &kold.mask, sizeof(kold.mask));
	}
	return 0;
}

void xom_fault_install(void)
{
	if (install() != 0)
		xom_notice("cannot install the SIGSEGV handler; reads of code will not be reported");
}

void xom_fault_use_libc(int (*sa)(int, const struct sigaction *,
                                  struct sigaction *))
{
	libc_sigaction = sa;
	if (sa && xom_active)
		xom_fault_install();
}

int xom_fault_check(void)
{
	struct k_sigaction cur;

	if (!xom_active || k_sigaction(SIGSEGV, NULL, &cur) != 0
	    || cur.handler == (void *)xom_segv_entry)
		return 0;
	/* The program set its handler past every wrapper (a raw system
	 * call): take it as the program's and put xom's back in front. */
	memset(&prog_act, 0, sizeof(prog_act));
	prog_act.sa_handler = (void (*)(int))cur.handler;
	prog_act.sa_flags = (int)cur.flags;
	prog_act.sa_restorer = (void (*)(void))cur.restorer;
	memcpy(&prog_act.sa_mask, &cur.mask, sizeof(cur.mask));
	install();
	return 1;
}

int xom_sigaction(const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev = prog_act;

	if (!xom_active)
		return -1;
	if (act) {
		prog_act = *act;
		if (restorer) {
			prog_act.sa_flags |= (int)K_SA_RESTORER;
			prog_act.sa_restorer = (void (*)(void))restorer;
		}
	}
	if (old)
		*old = prev;
	return 0;
}
