/* isolate.h — fencing a worker process off from the harness that started it. */
#ifndef PB_ISOLATE_H
#define PB_ISOLATE_H

#include <sys/types.h>

/*
 * Called in a freshly forked worker: moves it into a process group of its own and installs a
 * seccomp filter under which kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo and
 * pidfd_open, ptrace and process_vm_writev aimed at `parent` or its process group (or at every
 * process, kill(-1)) fail with EPERM.  Returns 0 when the filter is in
 * place, -1 when this kernel or architecture does not allow it (the process group is set
 * anyway).
 */
int isolate_worker(pid_t parent);

/*
 * Called in a worker: limits the address space it may add to what it has now to `bytes`
 * (RLIMIT_AS, soft and hard), and installs handlers of SIGSEGV, SIGBUS and SIGABRT that write
 * `line` on `fd` when the worker dies close to that limit (a runaway allocation whose failure was
 * not checked), before it dies of the signal.  Returns 0, or -1 when the limit cannot be set.
 */
int isolate_limit_memory(unsigned long long bytes, int fd, const char *line);

/* Non-zero when this worker's address space is close to its limit (within a quarter of it, at
 * least 128 MB), so that a failure now is most likely for want of memory. */
int isolate_memory_exhausted(void);

#endif
