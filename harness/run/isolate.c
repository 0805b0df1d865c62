/* isolate.c — a seccomp filter that keeps a worker's plugins from signalling the harness. */
#include "isolate.h"

#include <errno.h>
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

/* The low 32 bits of the first argument (a pid_t; both architectures are little-endian). */
#define ISOLATE_ARG0 ((unsigned)offsetof(struct seccomp_data, args[0]))

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
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 14, 0), /* x32 numbers */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 13, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 12, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kill, 6, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigqueueinfo, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tkill, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_tgsigqueueinfo, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* the target: the parent, its process group, or every process (-1) */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ISOLATE_ARG0),
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
