/* isolate.h — fencing a worker process off from the harness that started it. */
#ifndef PB_ISOLATE_H
#define PB_ISOLATE_H

#include <sys/types.h>

/*
 * Called in a freshly forked worker: moves it into a process group of its own and installs a
 * seccomp filter under which kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo and
 * pidfd_open aimed at `parent` or its process group (or at every process, kill(-1)) fail with
 * EPERM, and ptrace and process_vm_writev fail altogether.  Returns 0 when the filter is in
 * place, -1 when this kernel or architecture does not allow it (the process group is set
 * anyway).
 */
int isolate_worker(pid_t parent);

#endif
