/* isolate.c — fencing a worker off: a seccomp filter that keeps its plugins from signalling the
 * harness, and a memory limit whose exhaustion is reported. */
#define _XOPEN_SOURCE 700 /* sigaltstack, SA_ONSTACK */
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ISOLATE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ISOLATE_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture since Linux 5.3 */
#endif

#define ISOLATE_DENY (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

/* The low 32 bits of the first and second arguments (a pid_t; both architectures are
 * little-endian). */
#define ISOLATE_ARG0 ((unsigned)offsetof(struct seccomp_data, args[0]))
#define ISOLATE_ARG1 ((unsigned)offsetof(struct seccomp_data, args[1]))

int isolate_worker(pid_t parent)
{
    setpgid(0, 0); /* a terminal's or a plugin's signal to the harness's group misses workers */
#ifndef ISOLATE_ARCH
    (void)parent;
    return -1;
#else
    pid_t group = getpgid(parent);
    unsigned ppid = (unsigned)parent, pgrp = (unsigned)-(group > 0 ? group : parent);
    /* Jump offsets count from the next instruction. */
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ISOLATE_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, ISOLATE_DENY), /* another ABI (32-bit): no way around */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 16, 0), /* x32 numbers */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 8, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kill, 9, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigqueueinfo, 8, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tkill, 7, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 6, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_tgsigqueueinfo, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 3, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* ptrace's target is its second argument (LeakSanitizer traces the worker's own
         * threads, which stays allowed); the others' their first */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ISOLATE_ARG1),
        BPF_STMT(BPF_JMP | BPF_JA | BPF_K, 1),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ISOLATE_ARG0),
        /* the target: the parent, its process group, or every process (-1) */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ppid, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, pgrp, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)-1, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, ISOLATE_DENY),
    };
    struct sock_fprog fprog = {(unsigned short)(sizeof prog / sizeof prog[0]), prog};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) == 0 ? 0 : -1;
#endif
}

/* The memory limit of this worker process, read by its signal handlers (which cannot be handed a
 * context): process state, set once after fork, never shared between workers. */
static struct {
    unsigned long long limit; /* RLIMIT_AS set, bytes */
    unsigned long long near;  /* an address space above this is "close to the limit" */
    int fd;
    char line[64];
    size_t len;
} isolate_memory = {0, 0, -1, "", 0};

/* The address space of this process in bytes from /proc/self/statm (async-signal-safe); 0 when
 * it cannot be read. */
static unsigned long long isolate_address_space(void)
{
    char buf[64];
    int fd = open("/proc/self/statm", O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    unsigned long long pages = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
        pages = pages * 10 + (unsigned long long)(buf[i] - '0');
    return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

int isolate_memory_exhausted(void)
{
    return isolate_memory.limit > 0 && isolate_address_space() > isolate_memory.near;
}

static void isolate_on_fatal(int sig)
{
    if (isolate_memory_exhausted() && isolate_memory.fd >= 0) {
        ssize_t w = write(isolate_memory.fd, isolate_memory.line, isolate_memory.len);
        (void)w;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

int isolate_limit_memory(unsigned long long bytes, int fd, const char *line)
{
    unsigned long long now = isolate_address_space();
    if (now == 0 || bytes == 0)
        return -1;
    unsigned long long margin = bytes / 4 > (128ull << 20) ? bytes / 4 : 128ull << 20;
    isolate_memory.limit = now + bytes;
    isolate_memory.near = isolate_memory.limit > margin ? isolate_memory.limit - margin : 0;
    isolate_memory.fd = fd;
    isolate_memory.len =
        strlen(line) < sizeof isolate_memory.line ? strlen(line) : sizeof isolate_memory.line - 1;
    memcpy(isolate_memory.line, line, isolate_memory.len);
    /* The handlers run on a stack of their own: the normal one may be what ran out. */
    static char alt[1 << 16];
    stack_t st = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&st, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = isolate_on_fatal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    struct rlimit rl = {isolate_memory.limit, isolate_memory.limit};
    return setrlimit(RLIMIT_AS, &rl) == 0 ? 0 : -1;
}
