/* Signals, pids and identity (rule 9): only sandbox processes can be
 * reached, and signals are sent through the supervisor's own pidfds so a
 * recycled pid is never hit. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/creds.h"
#include "core/machine.h"
#include "core/task.h"
#include "fs-emulation/fs.h"
#include "fs-emulation/vfs.h"
#include "interposer/sandbox.h"
#include "syscall-table/handlers.h"

static struct verdict outside(struct call *c, pid_t pid)
{
	snprintf(c->detail, sizeof c->detail, "target=%d", pid);
	return v_deny(ESRCH, "signal.outside-sandbox");
}

static int send_proc(struct proc *p, int sig, siginfo_t *info)
{
	return syscall(SYS_pidfd_send_signal, p->pidfd, sig, info, 0) < 0 ? -errno : 0;
}

/* May the caller signal process `p`?  As the kernel decides for a
 * sender (kill_ok_by_cred): its real or effective uid is the target's
 * real or saved one, or it holds CAP_KILL (the root inside), or the
 * signal is SIGCONT within its session.  moat sends with its own
 * credentials, so it asks first; only with a user namespace, where the
 * sandbox's processes can have different ids (without one they all have
 * the sandbox's). */
static bool may_signal(const struct call *c, pid_t target, int sig)
{
	if (!c->creds->base)
		return true;
	unsigned a[3], b[3];
	unsigned long long ca, cb;
	if (creds_thread_read(c->tid, a, &ca) < 0)
		return false;
	int r = creds_thread_read(target, b, &cb);
	if (r == -ESRCH)
		return true; /* the target is going: pidfd_send_signal decides */
	if (r < 0)
		return false;
	if (ca & (1ULL << CAP_KILL))
		return true;
	if (a[1] == b[0] || a[1] == b[2] || a[0] == b[0] || a[0] == b[2])
		return true;
	return sig == SIGCONT && getsid(c->task->proc->tgid) == getsid(target);
}

struct group_kill {
	const struct call *c;
	pid_t pgid; /* 0: every process but the caller */
	pid_t skip;
	int sig;
	int sent, err;
};

static int kill_member(struct proc *p, void *arg)
{
	struct group_kill *g = arg;
	if (p->tgid == g->skip)
		return 0;
	if (g->pgid && getpgid(p->tgid) != g->pgid)
		return 0;
	int r = may_signal(g->c, p->tgid, g->sig) ? send_proc(p, g->sig, NULL) : -EPERM;
	if (r == 0)
		g->sent++;
	else
		g->err = r;
	return 0;
}

struct verdict sys_kill(struct call *c)
{
	pid_t pid = (pid_t)c->arg[0];
	int sig = (int)c->arg[1];
	if (sig < 0 || sig > _NSIG)
		return v_error(EINVAL);
	pid_t self = c->task->proc->tgid;
	if (pid == self)
		return v_continue(); /* to itself: register-only, keeps si_pid */
	if (pid > 0) {
		struct task *t = task_find(pid);
		struct proc *p = t && t->proc ? t->proc : proc_find(pid);
		if (!p)
			return outside(c, pid);
		int r = may_signal(c, p->tgid, sig) ? send_proc(p, sig, NULL) : -EPERM;
		return r < 0 ? v_error(-r) : v_value(0);
	}
	/* kill(-1) means every sandbox process; a group means its sandbox
	 * members — nothing outside is ever counted. */
	struct group_kill g = { .c = c, .sig = sig };
	if (pid == -1) {
		g.skip = self;
	} else {
		g.pgid = pid == 0 ? getpgid(self) : -pid;
		if (g.pgid <= 0)
			return v_error(ESRCH);
	}
	proc_foreach(kill_member, &g);
	if (g.sent)
		return v_value(0);
	if (g.err)
		return v_error(-g.err);
	return pid == -1 ? v_error(ESRCH) : outside(c, pid);
}

static struct verdict thread_kill(struct call *c, pid_t tgid, pid_t tid, int sig)
{
	if (sig < 0 || sig > _NSIG)
		return v_error(EINVAL);
	if (tid == c->tid && (tgid <= 0 || tgid == c->task->proc->tgid))
		return v_continue(); /* raise(): the caller itself */
	struct task *t = task_find(tid);
	if (!t || !t->proc || (tgid > 0 && t->proc->tgid != tgid))
		return outside(c, tid);
	int r = may_signal(c, t->tid, sig) ? task_signal(t, sig) : -EPERM;
	return r < 0 ? v_error(-r) : v_value(0);
}

struct verdict sys_tkill(struct call *c)
{
	return thread_kill(c, 0, (pid_t)c->arg[0], (int)c->arg[1]);
}

struct verdict sys_tgkill(struct call *c)
{
	return thread_kill(c, (pid_t)c->arg[0], (pid_t)c->arg[1], (int)c->arg[2]);
}

struct verdict sys_rt_sigqueueinfo(struct call *c)
{
	pid_t pid = (pid_t)c->arg[0];
	if (pid == c->task->proc->tgid)
		return v_continue();
	struct proc *p = proc_find(pid);
	if (!p)
		return outside(c, pid);
	siginfo_t si;
	if (call_read(c, c->arg[2], &si, sizeof si) < 0)
		return v_error(EFAULT);
	int r = may_signal(c, p->tgid, (int)c->arg[1]) ? send_proc(p, (int)c->arg[1], &si) : -EPERM;
	return r < 0 ? v_error(-r) : v_value(0);
}

struct verdict sys_rt_tgsigqueueinfo(struct call *c)
{
	pid_t tgid = (pid_t)c->arg[0], tid = (pid_t)c->arg[1];
	if (tgid == c->task->proc->tgid && tid == c->tid)
		return v_continue();
	struct task *t = task_find(tid);
	if (!t || !t->proc || t->proc->tgid != tgid)
		return outside(c, tid);
	/* Queued signals with data to another thread: the kernel would
	 * refuse a forged si_code from us anyway; keep it simple. */
	return v_error(EPERM);
}

static bool in_sandbox(struct call *c, pid_t pid)
{
	if (pid == 0)
		return true;
	struct task *t = task_find(pid);
	return (t && t->proc) || proc_find(pid) || (c->task && pid == c->tid);
}

struct verdict sys_pid_arg0(struct call *c)
{
	pid_t pid = (pid_t)c->arg[0];
	return in_sandbox(c, pid) ? v_continue() : outside(c, pid);
}

struct verdict sys_prlimit64(struct call *c)
{
	pid_t pid = (pid_t)c->arg[0];
	/* Its own (0 too: the kernel reads the pid as an int, as here):
	 * never reaped meanwhile, and never moat's own limits. */
	if (pid == 0 || pid == c->task->proc->tgid || pid == c->tid)
		return v_continue();
	if (!in_sandbox(c, pid))
		return outside(c, pid);
	/* Another sandbox process: performed here, under the lock, where it
	 * cannot be reaped and its number taken (a CONTINUE would let the
	 * kernel look the number up after the answer), with the sandbox's
	 * ids for the kernel's permission check, and the limits copied as
	 * the kernel copies them (the new one first, the old one last). */
	struct rlimit64 nl, ol;
	uint64_t nptr = c->arg[2], optr = c->arg[3];
	if (nptr && call_read(c, nptr, &nl, sizeof nl) < 0)
		return v_error(EFAULT);
	creds_identity_begin(c->creds);
	long r = syscall(SYS_prlimit64, pid, (int)c->arg[1], nptr ? &nl : NULL, optr ? &ol : NULL);
	int e = errno;
	creds_identity_end(c->creds);
	if (r < 0)
		return v_error(e);
	if (optr && call_write(c, optr, &ol, sizeof ol) < 0)
		return v_error(EFAULT);
	return v_value(0);
}

struct verdict sys_priority(struct call *c)
{
	/* getpriority/setpriority(which, who) and ioprio_get/set(which, who) */
	int which = (int)c->arg[0];
	pid_t who = (pid_t)c->arg[1];
	bool ioprio = c->nr == SYS_ioprio_set || c->nr == SYS_ioprio_get;
	int by_process = ioprio ? 1 : PRIO_PROCESS;
	int by_group = ioprio ? 2 : PRIO_PGRP;
	if (which == by_process)
		return in_sandbox(c, who) ? v_continue() : outside(c, who);
	if (which == by_group && who == 0)
		return v_continue();
	return v_deny(EPERM, "process.priority-outside");
}

struct verdict sys_pidfd_open(struct call *c)
{
	pid_t pid = (pid_t)c->arg[0];
	unsigned flags = (unsigned)c->arg[1];
	if (pid <= 0)
		return v_error(EINVAL); /* as Linux: before the pid is looked up */
	if (!in_sandbox(c, pid))
		return outside(c, pid);
	/* Made here, not by a CONTINUE: the kernel would look the number up
	 * after the answer, when the loop may have reaped it and another
	 * process taken it; now it cannot be reaped (the loop reaps only
	 * under the supervisor lock), and the pidfd names the process for
	 * good.  The flags are the kernel's to check. */
	int fd = (int)syscall(SYS_pidfd_open, pid, flags);
	if (fd < 0)
		return v_error(errno);
	return v_fd(fd, O_CLOEXEC);
}

struct verdict sys_clone(struct call *c)
{
	snprintf(c->detail, sizeof c->detail, "flags=%#llx", (unsigned long long)c->arg[0]);
	return v_deny(EPERM, "process.namespace");
}

struct verdict sys_umask(struct call *c)
{
	/* The kernel keeps the umask; we need it too, for the files the
	 * supervisor creates on the process's behalf.  It lives in the fs
	 * context, as in the kernel's fs_struct: CLONE_FS shares it. */
	c->task->proc->fs->umask = (mode_t)(c->arg[0] & 0777);
	return v_continue();
}

struct verdict sys_ioctl(struct call *c)
{
	unsigned cmd = (unsigned)c->arg[1];
	snprintf(c->detail, sizeof c->detail, "request=%#x", cmd);
	if (cmd == TIOCSCTTY && !c->machine->tty_unheld) {
		/* A pty of the sandbox's own may become its controlling
		 * terminal (script, pty.fork).  The check below reads the fd
		 * table, which another thread may change before the kernel
		 * runs the call: it is safe only because every terminal moat
		 * passed on is moat's own controlling terminal, which the
		 * kernel refuses to a process of another session anyway.
		 * When moat holds a terminal that is not (machine.tty_unheld: a pty
		 * an agent opened and gave moat), a racing dup2 could make it
		 * the sandbox's: then TIOCSCTTY is refused outright. */
		char link[64], host[64];
		snprintf(link, sizeof link, "/proc/%d/fd/%d", c->tid, (int)c->arg[0]);
		creds_proc_begin();
		creds_proc_own_begin(); /* the caller's own fd */
		ssize_t l = readlink(link, host, sizeof host - 1);
		creds_proc_own_end();
		creds_proc_end();
		if (l > 9) {
			host[l] = '\0';
			if (strncmp(host, "/dev/pts/", 9) == 0 &&
			    atoi(host + 9) != c->machine->tty_pts &&
			    strspn(host + 9, "0123456789") == strlen(host + 9))
				return v_continue();
		}
	}
	/* Dedupe (FICLONE and FICLONERANGE run in the kernel, as
	 * copy_file_range does): what a filesystem without it answers. */
	if (cmd == FIDEDUPERANGE)
		return v_deny(EOPNOTSUPP, "ioctl.not-allowed");
	return v_deny(EPERM, "ioctl.not-allowed");
}

struct verdict sys_seccomp(struct call *c)
{
	/* A listener of the sandbox's own would answer before moat (rule 8). */
	return v_deny(EPERM, "seccomp.listener");
}

/* Is pgid the process group of some sandbox process? */
static int has_pgid(struct proc *p, void *arg)
{
	return getpgid(p->tgid) == *(pid_t *)arg;
}

static bool sandbox_owner(struct call *c, int type, pid_t pid)
{
	if (pid == 0)
		return true;
	if (type == F_OWNER_PGRP) {
		pid_t g = pid;
		return proc_foreach(has_pgid, &g) != 0;
	}
	return in_sandbox(c, pid);
}

/* F_SETLEASE: refused, as with fs.leases-enable = 0 — a lease would make
 * every other opener of the file wait (moat's loop, the host's programs) —
 * but after the checks Linux makes first, with their errno: a lease on
 * another's file (EACCES), on what is not a regular file (EINVAL), a read
 * lease on a file open for writing, as the caller's own fd is, or the
 * removal of a lease not held (EAGAIN). */
static struct verdict lease_refused(struct call *c)
{
	long arg = (long)c->arg[2];
	if (arg != F_RDLCK && arg != F_WRLCK && arg != F_UNLCK)
		return v_error(EINVAL);
	int fd = call_getfd(c, (int)c->arg[0]);
	if (fd < 0)
		return v_error(EBADF);
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	int r = fstat(fd, &st) < 0 || fl < 0 ? EBADF : 0;
	call_putfd(fd);
	if (r)
		return v_error(r);
	if (st.st_uid != c->creds->uid)
		return v_error(EACCES);
	if (!S_ISREG(st.st_mode))
		return v_error(EINVAL);
	if (arg == F_UNLCK || (arg == F_RDLCK && (fl & O_ACCMODE) != O_RDONLY))
		return v_error(EAGAIN); /* no lease to remove: none is ever held */
	return v_deny(EINVAL, "fcntl.lease");
}

/* F_NOTIFY (dnotify) on a directory of the sandbox's own layers (a tmpfs
 * mount, an overlay's upper layer), where only the sandbox and moat for it
 * make changes: the kernel's, in the caller (the watch belongs to its fd
 * table, the signal to its process).  On any other directory refused, as
 * without CONFIG_DNOTIFY: a host directory's changes are the host's.  The
 * fd is looked at from a copy when the call arrives; a thread that swaps
 * the number (dup2) before the kernel runs could watch a host directory
 * the sandbox can see — what polling its listing tells anyway
 * (docs/security.md). */
static struct verdict dnotify(struct call *c)
{
	int fd = call_getfd(c, (int)c->arg[0]);
	if (fd < 0)
		return v_error(EBADF);
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -EBADF : !S_ISDIR(st.st_mode) ? -ENOTDIR : 0;
	struct vfs_mount *m = r == 0 ? fs_mount_of_fd(c->vfs, fd) : NULL;
	bool own = m && (m->kind == MNT_TMPFS ||
			 (m->kind == MNT_OVERLAY && fs_fd_changeable(c->vfs, fd) == 0));
	call_putfd(fd);
	if (r < 0)
		return v_error(-r);
	return own ? v_continue() : v_deny(EINVAL, "fcntl.dnotify");
}

struct verdict sys_fcntl(struct call *c)
{
	int cmd = (int)c->arg[1];
	if (cmd == F_SETOWN) {
		/* The owner gets SIGIO/SIGURG: it must be inside (rule 9). */
		pid_t pid = (pid_t)c->arg[2];
		bool ok = pid < 0 ? sandbox_owner(c, F_OWNER_PGRP, -pid)
				  : sandbox_owner(c, F_OWNER_PID, pid);
		if (!ok)
			return outside(c, pid);
		/* Performed here, as F_SETOWN_EX: under the lock the owner
		 * checked cannot be reaped, and the kernel keeps the process it
		 * names now (a CONTINUE would let it look the number up after
		 * the answer, when another process may have it). */
		int fd = call_getfd(c, (int)c->arg[0]);
		if (fd < 0)
			return v_error(EBADF);
		int r = fcntl(fd, F_SETOWN, pid);
		int e = errno;
		call_putfd(fd);
		return r < 0 ? v_error(e) : v_value(0);
	}
	if (cmd == F_SETOWN_EX) {
		struct f_owner_ex own;
		if (call_read(c, c->arg[2], &own, sizeof own) < 0)
			return v_error(EFAULT);
		if (own.type != F_OWNER_TID && own.type != F_OWNER_PID && own.type != F_OWNER_PGRP)
			return v_error(EINVAL);
		if (!sandbox_owner(c, own.type, own.pid))
			return outside(c, own.pid);
		/* Performed on the sandbox's own open file with the copied
		 * struct: a racing thread cannot change the target now. */
		int fd = call_getfd(c, (int)c->arg[0]);
		if (fd < 0)
			return v_error(EBADF);
		int r = fcntl(fd, F_SETOWN_EX, &own);
		int e = errno;
		call_putfd(fd);
		return r < 0 ? v_error(e) : v_value(0);
	}
	switch (cmd) {
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_GETLK:
	case F_OFD_SETLK:
	case F_OFD_SETLKW: return fs_fcntl_lock(c);
	case F_SETLEASE: return lease_refused(c);
	case F_NOTIFY: return dnotify(c);
	}
	return v_error(EINVAL); /* a command this kernel's fcntl does not know */
}

/* capget(hdr, data): the pid is in the header, in memory, so moat reads it
 * once and asks the kernel itself (rule 1).  A pid outside the sandbox is
 * ESRCH, as if it did not exist: capget of a host pid would say whether it
 * exists and what it may do (moat's own helpers among them). */
struct verdict sys_capget(struct call *c)
{
	struct __user_cap_header_struct hdr;
	if (call_read(c, c->arg[0], &hdr, sizeof hdr) < 0)
		return v_error(EFAULT);
	pid_t pid = hdr.pid;
	if (pid < 0)
		return v_error(EINVAL);
	if (pid != 0 && !in_sandbox(c, pid)) {
		snprintf(c->detail, sizeof c->detail, "target=%d", pid);
		return v_deny(ESRCH, "process.outside-sandbox");
	}
	struct __user_cap_header_struct ask = { hdr.version, pid ? pid : c->tid };
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof data);
	int r = (int)syscall(SYS_capget, &ask, c->arg[1] ? data : NULL);
	int e = errno;
	/* An unknown version: the kernel names the one it prefers in the
	 * header (and answers 0 to a probe without data, EINVAL else), and
	 * so does this. */
	if (ask.version != hdr.version) {
		hdr.version = ask.version;
		if (call_write(c, c->arg[0], &hdr, sizeof hdr) < 0)
			return v_error(EFAULT);
	}
	if (r < 0)
		return v_error(e);
	if (c->arg[1]) {
		size_t n = hdr.version == _LINUX_CAPABILITY_VERSION_1 ? 1 : 2;
		if (call_write(c, c->arg[1], data, n * sizeof data[0]) < 0)
			return v_error(EFAULT);
	}
	return v_value(0);
}

/* A CPU clock of another pid (clockid = ~pid << 3 | thread << 2 | type):
 * the filter let the caller's own through.  Of a sandbox process it runs
 * in the kernel; of any other pid it is EINVAL, what Linux says of a pid
 * that does not exist — its CPU time would say that it does, and how busy
 * it is. */
struct verdict sys_clock(struct call *c)
{
	int clk = (int)c->arg[0];
	pid_t pid = (pid_t) ~(clk >> 3);
	snprintf(c->detail, sizeof c->detail, "clock=%d target=%d", clk, (int)pid);
	if (clk >= 0 || pid == 0 || in_sandbox(c, pid))
		return v_continue();
	return v_deny(EINVAL, "process.outside-sandbox");
}

/* SysV IPC and mq_open/mq_unlink where the sandbox shares the host's IPC
 * namespace (moat not root, the filter's other variant): a key, an id or
 * a queue name would reach the host's objects.  ENOSYS, as on a kernel
 * built without them; programs fall back (POSIX shared memory, files). */
struct verdict sys_ipc_shared(struct call *c)
{
	return v_deny(ENOSYS, "ipc.host-namespace");
}

/* clone3: its flags are in memory, where the filter cannot see them, and a
 * check of a copy would race the caller's other threads (rule 1).  ENOSYS,
 * as on a kernel before 5.3: glibc then uses clone, whose flags are in a
 * register.  Every glibc tries clone3 first, so this is an expected probe,
 * not a denial, and is not recorded as one. */
struct verdict sys_clone3(struct call *c)
{
	return v_error(ENOSYS);
}

/* setuid and the rest: the kernel decides, by the capabilities the caller
 * has in the sandbox's own user namespace.  moat only learns that the
 * caller's ids may change, and reads them again before it serves the
 * caller's next call (dispatch.c): what moat does for a process that gave
 * up root is done with the ids it took (docs/design.md "Root inside"). */
struct verdict sys_setid(struct call *c)
{
	if (c->creds->base && c->task)
		c->task->creds_stale = true;
	return v_continue();
}
