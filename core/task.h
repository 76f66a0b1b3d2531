/* The task table: every thread of the sandbox, keyed by tid, and the
 * per-process state (keyed by tgid) its threads share.
 *
 * A notification names a thread; what a path means depends on the process
 * (its virtual cwd lives in an fs context that CLONE_FS shares). State is
 * inherited exactly at the fork/clone ptrace event, never guessed later. */
#ifndef MOAT_TASK_H
#define MOAT_TASK_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/creds.h"

/* The kernel's fs_struct as moat needs it: the virtual cwd, the root and
 * the umask, shared by threads and CLONE_FS children, copied on fork. */
struct fsctx {
	int refs;
	int fd;             /* O_PATH fd of the cwd (host dirs), or -1 */
	bool gone;          /* the directory was removed */
	mode_t umask;       /* for the files the supervisor creates */
	uint64_t gen;       /* cwd holds for fd while no directory moved (fs.c) */
	char cwd[PATH_MAX]; /* its virtual path, refreshed from fd */
	/* chroot's: the virtual path of the directory the process's absolute
	 * paths start from, "" for the view's root.  Kept by path: a root
	 * moved afterwards is not followed. */
	char root[PATH_MAX];
};

struct proc {
	pid_t tgid;
	int refs;  /* threads pointing here */
	int pidfd; /* the supervisor's own pidfd: signals go here */
	struct fsctx *fs;
	/* Which fd numbers the supervisor granted to this process since its
	 * last exec (a bit per fd): stands for the kernel's "opened with the
	 * caller's own credentials" (see proc_fd_granted). */
	unsigned char *granted;
	size_t ngranted;    /* bytes */
	char exe[PATH_MAX]; /* virtual path of the running program */
	/* Exited, not yet reaped by its parent: kept (with its pidfd,
	 * which no reused pid can fool) so the sandbox still sees it, as
	 * Linux shows a zombie; `znext` links the zombies. */
	bool zombie;
	struct proc *znext;
};

/* What the exec stop decided, checked at PTRACE_EVENT_EXEC. */
struct exec_check {
	bool pending;
	dev_t dev;
	ino_t ino;
	bool has_interp;
	dev_t interp_dev;
	ino_t interp_ino;
	char vpath[PATH_MAX];
	/* The file decided on, open in moat, while the rewritten
	 * execveat waits for it at fd number `fdnum` of the caller's
	 * (trace.c, sys_exec.c): held until the exec event, the next exec
	 * stop or the task's end. */
	bool fd_held;
	int fd;
	int fdnum;
};

/* Close the exec fd `e` holds, if any. */
void exec_check_drop(struct exec_check *e);

struct task {
	pid_t tid;
	struct proc *proc;
	bool linked;        /* state inherited from the parent (or init) */
	bool held;          /* its first stop arrived before the parent's event */
	bool started;       /* its initial (auto-attach) stop is behind it */
	bool group_stopped; /* in a job-control stop (kept with PTRACE_LISTEN) */
	struct exec_check exec;
	/* Its own ids, with a user namespace (docs/design.md "Root
	 * inside"): set once it or an ancestor changed them, read again from
	 * /proc after each change (stale).  Unset: the sandbox's. */
	bool creds_set, creds_stale;
	struct creds creds;
	struct task *next; /* hash chain */
};

/* Lookup; NULL when unknown. */
struct task *task_find(pid_t tid);
/* A new task for `tid` in process `p` (p gets a reference).  NULL + errno. */
struct task *task_add(pid_t tid, struct proc *p);
/* Forget `tid`; drops its process reference.  No-op when unknown. */
void task_remove(pid_t tid);
/* The exit of `tgid` was waited for.  A leader is waited for only once
 * its other threads were, so any task still in its process is stale: the
 * tid of a thread whose exec freed it (de_thread) and then failed before
 * the exec event (a bad segment after the point of no return).  Forget
 * them all, with the leader. */
void task_remove_leader(pid_t tgid);
/* Is `tid` a live task of process `tgid`?  For a tid kept beyond the call
 * that named it (a DNS question's asker, a job's caller): asked before
 * anything reads /proc/TID or signals it.  Holds while the caller holds the
 * supervisor lock (the loop reaps only under it). */
bool task_is(pid_t tgid, pid_t tid);
/* Re-key a task (exec by a non-leader thread takes the leader's tid). */
void task_rekey(struct task *t, pid_t newtid);
/* A new process with a fresh pidfd; `fs` is shared (refcount taken) or,
 * when copy is true, duplicated.  NULL + errno. */
struct proc *proc_new(pid_t tgid, struct fsctx *fs, bool copy_fs);
struct proc *proc_find(pid_t tgid);
struct fsctx *fsctx_new(const char *cwd);
/* Call fn on each distinct process; stops when fn returns nonzero. */
int proc_foreach(int (*fn)(struct proc *p, void *arg), void *arg);
/* SIGKILL every task that has no process state yet (held at its first
 * stop, its parent's event never seen): at the end nothing may linger. */
void task_kill_unlinked(void);
/* Note that fd `fd` of process `p` was granted to it by the supervisor
 * (ADDFD).  Allocation failure only forgets: the fd then counts as
 * foreign, the side that refuses. */
void proc_note_granted(struct proc *p, int fd);
/* Was fd `fd` granted to `p` since its last exec?  The kernel lets
 * linkat(fd, "", AT_EMPTY_PATH) through only for a file opened with the
 * caller's credentials (f_cred == current_cred(): the same process, no
 * exec since; a fork child has credentials of its own).  Files the
 * supervisor opens carry its credentials, so moat keeps the record.  An
 * fd dup'ed by the process itself counts as foreign (refused where Linux
 * allows), and a number reused in-kernel after a grant (dup2 of another
 * fd onto it) keeps its mark. */
bool proc_fd_granted(const struct proc *p, int fd);
/* Forget every grant: exec gives the process new credentials. */
void proc_forget_granted(struct proc *p);
/* Number of live tasks. */
unsigned task_count(void);
/* Send `sig` to thread `t` alone (as the kernel's send_sig to current),
 * through a pidfd of the thread, so a recycled tid is never hit.  0 or
 * -errno. */
int task_signal(struct task *t, int sig);
/* The soft RLIMIT_FSIZE of thread `tid`'s process (RLIM_INFINITY for
 * none), for the file sizes the supervisor sets on its behalf.  0 or
 * -errno. */
int task_fsize_limit(pid_t tid, unsigned long long *soft);

#endif
