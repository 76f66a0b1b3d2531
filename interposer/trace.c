/* The ptrace side: fork/clone inheritance, exec, exits, signals. */
#include "interposer/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "core/call.h"
#include "core/task.h"
#include "fs-emulation/exec.h"
#include "interposer/dispatch.h"
#include "interposer/sandbox.h"
#include "syscall-table/filter.h"

static void resume(pid_t pid, int sig)
{
	ptrace(PTRACE_CONT, pid, 0, sig);
}

/* ---- fork / vfork / clone ---- */


/* The syscall number as the kernel runs it and seccomp sees it: the low
 * 32 bits of orig_rax (x86_64 treats rax as an int).  A number with its
 * upper bits set is still execve or clone; compared whole, it would not
 * be taken for one (tests/security/esc_exec_widenr). */
static int syscall_nr(const struct user_regs_struct *regs)
{
	return (int)regs->orig_rax;
}

static void link_child(struct sandbox *sb, struct task *parent, pid_t child, int event)
{
	/* The flags of a clone(2), whatever event reports it: the kernel
	 * says FORK for any clone whose exit signal is SIGCHLD, so
	 * clone(CLONE_FS|SIGCHLD) arrives as a fork and must still share. */
	unsigned long flags = 0;
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, parent->tid, 0, &regs) == 0 && syscall_nr(&regs) == SYS_clone)
		flags = regs.rdi;
	struct task *t = task_find(child);
	bool held = t && t->held;
	struct proc *pp = parent->proc;
	struct proc *np;
	if (flags & CLONE_THREAD) {
		np = pp;
	} else {
		np = proc_new(child, pp->fs, !(flags & CLONE_FS));
		if (!np) {
			/* Fail closed: a process without state must not run. */
			kill(child, SIGKILL);
			return;
		}
		snprintf(np->exe, sizeof np->exe, "%s", pp->exe);
	}
	if (!t) {
		t = task_add(child, np);
		if (!t) {
			kill(child, SIGKILL);
			return;
		}
	} else {
		t->proc = np;
		np->refs++;
	}
	t->linked = true;
	/* Its parent's ids, as the kernel copies them (stale too: a change
	 * the parent made may have been under way). */
	t->creds_set = parent->creds_set;
	t->creds_stale = parent->creds_stale;
	t->creds = parent->creds;
	limits_proc_born(sb, flags & CLONE_THREAD);
	if (held) {
		t->held = false;
		t->started = true;
		resume(child, 0);
	}
}

/* ---- exec ---- */

/* Lowest address of the mapping holding `addr` (the stack), or 0. */
static uint64_t vma_start(pid_t pid, uint64_t addr)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	uint64_t found = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
			found = lo;
			break;
		}
	}
	fclose(f);
	return found;
}

static void fail_exec(pid_t pid, struct user_regs_struct *regs, int err)
{
	regs->orig_rax = (unsigned long long)-1; /* skip the call */
	regs->rax = (unsigned long long)-err;
	ptrace(PTRACE_SETREGS, pid, 0, regs);
}

#define ARGV_MAX 4096

/* The caller's argv pointers at `argv_p`, up to the NULL: *argc of them.
 * 0, -EFAULT or -E2BIG. */
static int argv_read(pid_t pid, uint64_t argv_p, uint64_t *argv, size_t *argc)
{
	for (*argc = 0; *argc < ARGV_MAX; ++*argc) {
		struct iovec l = { &argv[*argc], 8 };
		struct iovec rr = { (void *)(uintptr_t)(argv_p + *argc * 8), 8 };
		if (process_vm_readv(pid, &l, 1, &rr, 1, 0) != 8)
			return -EFAULT;
		if (!argv[*argc])
			return 0;
	}
	return -E2BIG;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define EXEC_SLOT_MAX 4096

/* An fd number free in process `p`, below its RLIMIT_NOFILE soft limit
 * and EXEC_SLOT_MAX: the highest such, out of the way of the lowest-free
 * rule its own opens follow.  Asked of the kernel by pidfd_getfd, which
 * answers EBADF for a free number (moat keeps CAP_SYS_PTRACE for it):
 * usually one call.  -1 when there is none among the top 64 (or the
 * limit cannot be read), and the exec goes by host path. */
static int exec_slot(const struct proc *p, pid_t tid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/limits", p->tgid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *l = strstr(buf, "\nMax open files");
	if (!l)
		return -1;
	l += 15 + strspn(l + 15, " ");
	long top = strncmp(l, "unlimited", 9) == 0 ? EXEC_SLOT_MAX : strtol(l, NULL, 10);
	if (top > EXEC_SLOT_MAX)
		top = EXEC_SLOT_MAX;
	/* Through the exec'ing thread: a leader that has exited has no fd
	 * table, where every number would look free. */
	int tfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (tfd < 0)
		return -1;
	int slot = -1;
	for (long k = top - 1; k >= 3 && k >= top - 64; k--) {
		int copy = (int)syscall(SYS_pidfd_getfd, tfd, (int)k, 0);
		if (copy < 0) {
			slot = errno == EBADF ? (int)k : -1;
			break;
		}
		call_putfd(copy); /* a socket's last close may block */
	}
	close(tfd);
	return slot;
}

/* Has thread `tid` filters of its own over moat's?  Those saw an execve
 * at every exec until now; one that refuses execveat must not start
 * refusing execs, so such a thread keeps the exec by host path. */
static bool own_filters(pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/%d/status", tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return true;
	long n = -1;
	while (n < 0 && fgets(line, sizeof line, f))
		if (strncmp(line, "Seccomp_filters:", 16) == 0)
			n = strtol(line + 16, NULL, 10);
	fclose(f);
	return n != 1;
}

/* Point the stopped execve/execveat in `regs` at what `plan` decided, with
 * the caller's argv and envp, for a script with the argv
 * [prefix..., argv[1]...].  With `slot` >= 0 an exec by fd:
 * execveat(slot, "", ..., AT_EMPTY_PATH) marked SC_EXEC_FD_COOKIE, whose
 * notification puts the plan's fd there; else an execve of the host path.
 * The strings go below the stack pointer, inside the stack's own mapping.
 * 0, or -errno with regs unchanged. */
static int exec_rewrite(pid_t pid, struct user_regs_struct *regs, const struct exec_plan *plan,
			int slot)
{
	size_t argc = 0;
	static uint64_t argv_old[ARGV_MAX];
	if (plan->nprefix) {
		int r = argv_read(pid, plan->argv, argv_old, &argc);
		if (r < 0)
			return r;
	}
	static char blob[EXEC_MAX_PREFIX * PATH_MAX + PATH_MAX + 8 * 4200];
	size_t off = 0;
	size_t host_off = off;
	const char *name = slot >= 0 ? "" : plan->host;
	size_t hl = strlen(name) + 1;
	memcpy(blob + off, name, hl);
	off += hl;
	size_t pre_off[EXEC_MAX_PREFIX];
	for (int i = 0; i < plan->nprefix; i++) {
		size_t l = strlen(plan->prefix[i]) + 1;
		pre_off[i] = off;
		memcpy(blob + off, plan->prefix[i], l);
		off += l;
	}
	off = (off + 7) & ~(size_t)7;
	size_t argv_off = off;
	size_t nargv = plan->nprefix ? (size_t)plan->nprefix + (argc ? argc - 1 : 0) + 1 : 0;
	off += nargv * 8;
	uint64_t top = (regs->rsp - 512) & ~(uint64_t)15;
	uint64_t lo = (top - off) & ~(uint64_t)15;
	uint64_t vs = vma_start(pid, regs->rsp);
	if (!vs || lo < vs)
		return -E2BIG;
	uint64_t *av = (uint64_t *)(void *)(blob + argv_off);
	size_t k = 0;
	for (int i = 0; i < plan->nprefix; i++)
		av[k++] = lo + pre_off[i];
	for (size_t i = 1; i < argc; i++)
		av[k++] = argv_old[i];
	if (nargv)
		av[k] = 0;
	struct iovec l = { blob, off }, rr = { (void *)(uintptr_t)lo, off };
	if (process_vm_writev(pid, &l, 1, &rr, 1, 0) != (ssize_t)off)
		return -EFAULT;
	uint64_t argv = nargv ? lo + argv_off : plan->argv;
	if (slot >= 0) {
		regs->orig_rax = SYS_execveat;
		regs->rdi = (uint64_t)slot;
		regs->rsi = lo + host_off;
		regs->rdx = argv;
		regs->r10 = plan->envp;
		regs->r8 = AT_EMPTY_PATH;
		regs->r9 = SC_EXEC_FD_COOKIE;
		return 0;
	}
	regs->orig_rax = SYS_execve;
	regs->rdi = lo + host_off;
	regs->rsi = argv;
	regs->rdx = plan->envp;
	return 0;
}

/* The seccomp-trace stop of execve/execveat: the dispatcher decides, in
 * the virtual filesystem by sys_exec.c, and audits; here the registers
 * move — to the host file decided on, or to a failed call. */
static void exec_stop(struct sandbox *sb, struct task *t)
{
	struct user_regs_struct regs;
	pid_t pid = t->tid;
	if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
		return;
	t->exec.pending = false;
	exec_check_drop(&t->exec);
	const uint64_t args[6] = { regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9 };
	struct verdict v = dispatch_stop(sb, t, syscall_nr(&regs), args, regs.rip, regs.rsp);
	switch (v.kind) {
	case V_CONTINUE: return; /* a TRACE from the sandbox's own filter: ours allowed it */
	case V_EXEC: break;
	case V_DENY:
	case V_ERROR: return fail_exec(pid, &regs, (int)v.value);
	default: return fail_exec(pid, &regs, EPERM); /* no other verdict runs an exec */
	}
	const struct exec_plan *plan = v.exec; /* its fd is ours now */
	/* By fd when there is one and a free slot for it: the kernel then
	 * walks no host path, as the sandbox's ids, at the exec (a 0700
	 * host directory above a bound tree stays closed to those). */
	int slot = plan->fd >= 0 && !own_filters(pid) ? exec_slot(t->proc, pid) : -1;
	int r = exec_rewrite(pid, &regs, plan, slot);
	if (r == 0 && ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0)
		r = -ESRCH;
	if ((r < 0 || slot < 0) && plan->fd >= 0)
		close(plan->fd);
	if (r == -ESRCH)
		return;
	if (r < 0)
		return fail_exec(pid, &regs, -r);
	if (slot >= 0) {
		t->exec.fd_held = true;
		t->exec.fd = plan->fd;
		t->exec.fdnum = slot;
	}
	t->exec.pending = true;
	t->exec.dev = plan->dev;
	t->exec.ino = plan->ino;
	t->exec.has_interp = plan->has_interp;
	t->exec.interp_dev = plan->interp_dev;
	t->exec.interp_ino = plan->interp_ino;
	snprintf(t->exec.vpath, sizeof t->exec.vpath, "%s", plan->vpath);
}

/* AT_BASE of the new image: where the kernel mapped an ELF interpreter
 * (0: none).  -1 when it cannot be read. */
static long long at_base(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/auxv", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	unsigned long av[2 * 64];
	ssize_t n = read(fd, av, sizeof av);
	close(fd);
	for (ssize_t i = 0; i + 1 < n / (ssize_t)sizeof av[0]; i += 2) {
		if (av[i] == 7 /* AT_BASE */)
			return (long long)av[i + 1];
		if (av[i] == 0)
			break;
	}
	return n > 0 ? 0 : -1;
}

/* The file mapped at `addr`: its device and inode.  false when none. */
static bool mapping_at(pid_t pid, unsigned long addr, dev_t *dev, ino_t *ino)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		unsigned maj, min;
		unsigned long long inode;
		if (sscanf(line, "%lx-%lx %*s %*s %x:%x %llu", &lo, &hi, &maj, &min, &inode) == 5 &&
		    addr >= lo && addr < hi) {
			*dev = makedev(maj, min);
			*ino = (ino_t)inode;
			found = inode != 0;
		}
	}
	fclose(f);
	return found;
}

/* PTRACE_EVENT_EXEC: the new image must be the file decided on, before
 * its first instruction runs (rule 7). */
static void exec_event(struct sandbox *sb, pid_t pid)
{
	unsigned long former = 0;
	ptrace(PTRACE_GETEVENTMSG, pid, 0, &former);
	struct task *t = task_find((pid_t)former);
	if ((pid_t)former != pid) {
		task_remove(pid); /* the old leader is gone; the execing thread takes its tid */
		if (t)
			task_rekey(t, pid);
	}
	t = task_find(pid);
	bool ok = false;
	const char *rule = "exec.unverified";
	if (t && t->exec.pending) {
		char exe[64];
		struct stat st;
		snprintf(exe, sizeof exe, "/proc/%d/exe", pid);
		ok = stat(exe, &st) == 0 && st.st_dev == t->exec.dev && st.st_ino == t->exec.ino;
		rule = "exec.binary-mismatch";
		if (ok) {
			/* What the kernel mapped as the interpreter (AT_BASE), not
			 * what the ELF header seemed to say: a header libelf reads
			 * differently from the kernel must not smuggle one in. */
			creds_admin_begin(&sb->creds); /* auxv is 0400, the task's */
			long long base = at_base(pid);
			creds_admin_end(&sb->creds);
			dev_t idev;
			ino_t iino;
			rule = "exec.interpreter-mismatch";
			if (base < 0)
				ok = false;
			else if (base == 0)
				ok = !t->exec.has_interp;
			else
				ok = t->exec.has_interp &&
				     mapping_at(pid, (unsigned long)base, &idev, &iino) &&
				     idev == t->exec.interp_dev && iino == t->exec.interp_ino;
		}
	}
	if (!ok) {
		audit_exec(sb->audit, pid, t && t->proc ? t->proc->tgid : pid,
			   t ? t->exec.vpath : "", "execve", t ? t->exec.vpath : "", "", 0, "kill",
			   rule);
		kill(pid, SIGKILL);
		resume(pid, 0);
		return;
	}
	t->exec.pending = false;
	exec_check_drop(&t->exec);
	snprintf(t->proc->exe, sizeof t->proc->exe, "%s", t->exec.vpath);
	proc_forget_granted(t->proc); /* new credentials: no fd is its own now */
	resume(pid, 0);
}

void trace_status(struct sandbox *sb, pid_t pid, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS && sb->audit) {
			/* The filter kills foreign ABIs (int 0x80, x32) itself; this
			 * is the only place moat learns of it (rule 10). */
			struct task *dead = task_find(pid);
			sb->denied[SC_SYSTEM]++;
			audit_exec(sb->audit, pid, dead && dead->proc ? dead->proc->tgid : pid,
				   dead && dead->proc ? dead->proc->exe : "", "foreign-abi", "", "",
				   0, "kill", "arch.foreign-abi");
		}
		if (pid == sb->init_pid) {
			sb->init_done = true;
			sb->init_status = status;
		}
		task_remove_leader(pid); /* a thread's exit: that task alone */
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	int sig = WSTOPSIG(status);
	int event = status >> 16;
	struct task *t = task_find(pid);
	if (t)
		t->group_stopped = false; /* any new stop ends the last one */

	if (event == PTRACE_EVENT_STOP) {
		if (!t || !t->linked) {
			/* A new child whose parent's event has not arrived yet:
			 * it waits, stopped, until its state is known. */
			if (!t)
				t = task_add(pid, NULL);
			if (t)
				t->held = true;
			else
				kill(pid, SIGKILL);
			return;
		}
		/* Under PTRACE_SEIZE the first PTRACE_EVENT_STOP of a new task is
		 * its auto-attach stop (resume it); a later one with a stopping
		 * signal is a group-stop: PTRACE_LISTEN keeps it stopped, as
		 * job control wants, until SIGCONT. */
		if (!t->started) {
			t->started = true;
			resume(pid, 0);
		} else if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			t->group_stopped = true;
			ptrace(PTRACE_LISTEN, pid, 0, 0);
		} else {
			resume(pid, 0);
		}
		return;
	}
	if (sig == SIGTRAP && event) {
		unsigned long msg = 0;
		switch (event) {
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
		case PTRACE_EVENT_CLONE:
			ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg);
			if (t && t->proc)
				link_child(sb, t, (pid_t)msg, event);
			else
				kill((pid_t)msg, SIGKILL);
			break;
		case PTRACE_EVENT_EXEC: exec_event(sb, pid); return;
		case PTRACE_EVENT_SECCOMP:
			/* Decide by the syscall, not by the filter's data: a filter
			 * the sandbox installed itself may return TRACE with data
			 * of its own for execve, and that must not skip ours. */
			if (t && t->proc) {
				exec_stop(sb, t);
			} else {
				struct user_regs_struct regs;
				if (ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0)
					fail_exec(pid, &regs, EPERM);
			}
			break;
		default: break;
		}
		resume(pid, 0);
		return;
	}
	/* A signal on its way to the tracee: deliver it unchanged. */
	resume(pid, sig);
}
