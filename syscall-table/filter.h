/* The seccomp BPF program, built from the syscall table with libseccomp.
 *
 * The program's answer for each x86_64 syscall follows the table's
 * disposition: KERNEL allows, KERNEL_IF allows when its register condition
 * holds, TRACE returns SECCOMP_RET_TRACE with SC_TRACE_DATA, and everything
 * else — SUPERVISE, DENY, numbers the table does not know — is the default
 * action, USER_NOTIF, so the supervisor answers and audits it.  Any other
 * architecture (i386 `int 0x80`) and any x32 number (bit 0x40000000) kill
 * the process.
 *
 * Nothing here installs the program: the caller sets NO_NEW_PRIVS and calls
 * seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER | WAIT_KILLABLE_RECV, prog)
 * itself, since libseccomp 2.5 cannot ask for WAIT_KILLABLE_RECV. */
#ifndef MOAT_FILTER_H
#define MOAT_FILTER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/filter.h>
#include <sched.h>

/* SECCOMP_RET_DATA of the TRACE action: lets the tracer tell moat's exec
 * stops from a PTRACE_EVENT_SECCOMP that a filter the sandbox installed
 * itself could raise.  (The tracer must still check the syscall number: a
 * sandbox filter can return any data.) */
#define SC_TRACE_DATA 0x6d6f

/* An exec by fd: at the exec stop moat turns the call into
 * execveat(N, "", argv, envp, AT_EMPTY_PATH) with this value in the sixth
 * argument register, which execveat does not read.  The filter sends that
 * call to the supervisor as a notification, which puts the file decided on
 * at fd N and lets the call run (fs-emulation/sys_exec.c).  Every other
 * execveat stops as before.  Not a secret: a program that makes the call
 * itself is refused unless its exec stop planned exactly that fd. */
#define SC_EXEC_FD_COOKIE 0x6d6f61742d657865ULL /* "moat-exe" */

/* clone() flags that send the call to the supervisor (COND_NO_NS_FLAGS):
 * every namespace flag, and CLONE_UNTRACED, which would start a child that
 * ptrace never attaches to — outside the task table, exec handling and
 * EXITKILL. */
#define SC_CLONE_SUPERVISED_FLAGS                                                      \
	((unsigned long)(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
			 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_UNTRACED))

/* Build the program into `prog`.  Returns 0, or -errno (-ENOMEM, a
 * libseccomp error, -E2BIG when the program exceeds BPF_MAXINSNS).  On
 * success prog->filter is a malloc'd array the caller frees; on failure
 * `prog` is left untouched. */
int sc_filter_build(struct sock_fprog *prog);
/* The same, or (inet_sockets_supervised) the variant for a sandbox that is
 * not inside network and IPC namespaces of its own (moat not root): there
 * every socket() but AF_UNIX goes to the supervisor, which makes TCP and
 * UDP sockets in the private world itself (net-stub), and SysV IPC and
 * mq_open go to their handler, which refuses them (COND_OWN_IPC). */
int sc_filter_build_variant(struct sock_fprog *prog, bool inet_sockets_supervised);

/* The same program, built by `make` (syscall-table/gen/filter_gen.c):
 * moat starts from it instead of paying libseccomp at every run.  Only
 * cli/main.c links it; tests compare it with a fresh sc_filter_build(). */
extern const struct sock_filter sc_filter_blob[];
extern const unsigned short sc_filter_blob_len;
extern const struct sock_filter sc_filter_blob_inet[]; /* the variant */
extern const unsigned short sc_filter_blob_inet_len;

/* Write libseccomp's pseudo-filter-code text of the same program to `out`
 * (for debugging and `moat` dumps).  Returns 0 or -errno. */
int sc_filter_pfc(FILE *out);

#endif
