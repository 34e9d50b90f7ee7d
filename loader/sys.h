/*
 * sys.h - the system calls of the runtime, made directly.
 *
 * The runtime calls the kernel itself rather than through libc's
 * wrappers, for three reasons: every libc function it imports is one more
 * symbol that the dynamic linker looks up at every process start; libc's
 * wrappers for open, read, close, poll and waitpid are cancellation points,
 * and a cancellation inside xom would unwind it with its lock held; and
 * these are async-signal-safe by construction, so the fault handler can
 * use them.  Each returns what the kernel returns: a result, or -errno.
 * errno is left alone (messages take the error as an argument, %e).
 */
#ifndef XOM_SYS_H
#define XOM_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>

static inline long sys0(long n)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n) : "rcx", "r11", "memory");
	return r;
}

static inline long sys1(long n, long a)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a) : "rcx", "r11", "memory");
	return r;
}

static inline long sys2(long n, long a, long b)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b)
	                 : "rcx", "r11", "memory");
	return r;
}

static inline long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c)
	                 : "rcx", "r11", "memory");
	return r;
}

static inline long sys4(long n, long a, long b, long c, long d)
{
	long r;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c),
	                 "r"(r10) : "rcx", "r11", "memory");
	return r;
}

static inline long sys5(long n, long a, long b, long c, long d, long e)
{
	long r;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c),
	                 "r"(r10), "r"(r8) : "rcx", "r11", "memory");
	return r;
}

static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	long r;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c),
	                 "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return r;
}

/* A kernel return value that is an error. */
#define SYS_FAILED(r) ((unsigned long)(r) > -4096ul)

static inline long x_open(const char *p, int flags, int mode)
{
	return sys4(SYS_openat, AT_FDCWD, (long)p, flags, mode);
}
static inline long x_close(int fd) { return sys1(SYS_close, fd); }
static inline long x_read(int fd, void *b, size_t n)
{
	return sys3(SYS_read, fd, (long)b, (long)n);
}
static inline long x_write(int fd, const void *b, size_t n)
{
	return sys3(SYS_write, fd, (long)b, (long)n);
}
static inline long x_pread(int fd, void *b, size_t n, long off)
{
	return sys4(SYS_pread64, fd, (long)b, (long)n, off);
}
static inline long x_fstatfs(int fd, struct statfs *st)
{
	return sys2(SYS_fstatfs, fd, (long)st);
}
static inline long x_fstat(int fd, struct stat *st)
{
	return sys2(SYS_fstat, fd, (long)st);
}
static inline long x_stat(const char *p, struct stat *st)
{
	return sys4(SYS_newfstatat, AT_FDCWD, (long)p, (long)st, 0);
}
static inline long x_lstat(const char *p, struct stat *st)
{
	return sys4(SYS_newfstatat, AT_FDCWD, (long)p, (long)st, AT_SYMLINK_NOFOLLOW);
}
static inline void *x_mmap(void *a, size_t n, int prot, int flags, int fd, long off)
{
	return (void *)sys6(SYS_mmap, (long)a, (long)n, prot, flags, fd, off);
}
#define X_MAP_FAILED(p) SYS_FAILED((long)(p))
static inline long x_munmap(const void *a, size_t n)
{
	return sys2(SYS_munmap, (long)a, (long)n);
}
static inline void *x_mremap(void *a, size_t old, size_t n, int flags)
{
	return (void *)sys4(SYS_mremap, (long)a, (long)old, (long)n, flags);
}
static inline long x_readlink(const char *p, char *b, size_t n)
{
	return sys4(SYS_readlinkat, AT_FDCWD, (long)p, (long)b, (long)n);
}
static inline long x_access(const char *p, int mode)
{
	return sys4(SYS_faccessat, AT_FDCWD, (long)p, mode, 0);
}
static inline long x_getcwd(char *b, size_t n)
{
	return sys2(SYS_getcwd, (long)b, (long)n);
}
static inline unsigned x_geteuid(void) { return (unsigned)sys0(SYS_geteuid); }
static inline int x_getpid(void) { return (int)sys0(SYS_getpid); }
static inline int x_gettid(void) { return (int)sys0(SYS_gettid); }
static inline long x_tgkill(int pid, int tid, int sig)
{
	return sys3(SYS_tgkill, pid, tid, sig);
}
static inline long x_pipe2(int fd[2], int flags)
{
	return sys2(SYS_pipe2, (long)fd, flags);
}
/* The signal mask as the kernel keeps it: one bit per signal. */
static inline long x_sigmask(int how, const uint64_t *set, uint64_t *old)
{
	return sys4(SYS_rt_sigprocmask, how, (long)set, (long)old, 8);
}
static inline __attribute__((noreturn)) void x_exit_group(int status)
{
	for (;;)
		sys1(SYS_exit_group, status);
}

/* RDPKRU and WRPKRU: the calling thread's rights for every protection
 * key, two bits a key; only where the CPU has PKU and the kernel enabled
 * it (else they fault). */
static inline unsigned x_rdpkru(void)
{
	unsigned eax, edx, ecx = 0;

	__asm__ volatile(".byte 0x0f, 0x01, 0xee" : "=a"(eax), "=d"(edx) : "c"(ecx));
	(void)edx;
	return eax;
}
static inline void x_wrpkru(unsigned pkru)
{
	__asm__ volatile(".byte 0x0f, 0x01, 0xef" : : "a"(pkru), "c"(0), "d"(0) : "memory");
}

/* Has the kernel supply, in one system call, the pages of [p, p + len)
 * that are about to be written, when there are enough of them: one call
 * for many pages costs less than a fault for each, and a system call about
 * what two faults save. */
static inline void x_populate(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p & ~(uintptr_t)4095;
	uintptr_t hi = ((uintptr_t)p + len + 4095) & ~(uintptr_t)4095;

	if (hi - lo >= 3 * 4096)
		sys3(SYS_madvise, (long)lo, (long)(hi - lo), 23 /* MADV_POPULATE_WRITE */);
}

/* libc's memory and string functions, so that none is imported (str.c). */
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void *memchr(const void *s, int c, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
size_t strcspn(const char *s, const char *reject);

#endif
