/* Launching the sandbox and the event loop.
 *
 * One process, one loop: the seccomp listener (supervised calls), a
 * signalfd (SIGCHLD for ptrace stops, and signals to forward).  ptrace is
 * used for the lifecycle only: fork/clone inheritance, exec, exit. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/stack.h"
#include "core/job.h"
#include "core/task.h"
#include "fs-emulation/vfs.h"
#include "interposer/dispatch.h"
#include "interposer/sandbox.h"
#include "interposer/trace.h"
#include "interposer/watchdog.h"
#include "net-stub/net.h"
#include "syscall-table/filter.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* ---- the child, before exec: it may only die ---- */

/* What the first process tells moat over one pipe before its exec: the
 * listener's fd number, or the setup step that failed and its errno.  One
 * write below PIPE_BUF: it arrives whole or not at all. */
struct child_msg {
	int err; /* errno of the failed step; 0: `fd` is the listener */
	int fd;
	char step[32]; /* the step, as moat names it to the user */
};

static _Noreturn void child_fail(int fd, const char *step)
{
	struct child_msg m = { .err = errno ? errno : EIO, .fd = -1 };
	/* no stdio between fork and exec: another thread may hold its lock */
	for (size_t i = 0; step[i] && i < sizeof m.step - 1; i++)
		m.step[i] = step[i];
	if (write(fd, &m, sizeof m) < 0)
		_exit(125);
	_exit(125);
}

/* The bounding set, once, while CAP_SETPCAP is still held (before the
 * uid switch clears it).  The first failure ends it: EINVAL past the
 * kernel's last capability, or EPERM for all of them without
 * CAP_SETPCAP. */
static void drop_bounding(void)
{
	for (int c = 0; c <= 63; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
			break;
}

/* The ambient and the three sets (the bounding set went first). */
static void drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	syscall(SYS_capset, &h, d);
}

/* The network world, the session and the output: before moat seizes us. */
static void child_enter(struct sandbox *sb, int msg_fd)
{
	/* The private network world (net-stub/netns.c), while we may. */
	if (net_enter(sb->net) < 0)
		child_fail(msg_fd, "setns (network)");
	/* A new session: no controlling terminal, so TIOCSTI and job control
	 * signals from the host's terminal cannot reach in (rule 5). */
	if (setsid() < 0)
		child_fail(msg_fd, "setsid");
	/* stdout and stderr through moat when it must see them (output.h). */
	if (sb->out.on && (dup2(sb->out.wr[0], 1) < 0 || dup2(sb->out.wr[1], 2) < 0))
		child_fail(msg_fd, "dup2 (stdout, stderr)");
}

/* Only fds 0-2 cross over, plus our three pipes (close-on-exec). */
static void child_close_fds(int a, int b, int c)
{
	int keep[] = { a, b, c };
	for (int i = 0; i < 3; i++) /* sort the three */
		for (int j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				int x = keep[i];
				keep[i] = keep[j];
				keep[j] = x;
			}
	unsigned lo = 3;
	for (int i = 0; i < 3; i++) {
		if ((unsigned)keep[i] > lo)
			syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, lo, ~0U, 0);
}

/* The sandbox's ids, no capabilities, its rlimits, no_new_privs. */
static void child_drop(struct sandbox *sb, int msg_fd, const char *empty_dir)
{
	if (chdir(empty_dir) < 0)
		child_fail(msg_fd, "chdir");
	drop_bounding();
	if (geteuid() == 0) {
		gid_t g = sb->creds.gid;
		if (setgroups(1, &g) < 0)
			child_fail(msg_fd, "setgroups");
		if (setresgid(sb->creds.gid, sb->creds.gid, sb->creds.gid) < 0)
			child_fail(msg_fd, "setresgid");
		if (setresuid(sb->creds.uid, sb->creds.uid, sb->creds.uid) < 0)
			child_fail(msg_fd, "setresuid");
	}
	drop_caps();
	/* Without capabilities: a hard limit of the caller's stays (moat
	 * raised its own for --open-files-limit where it could, cli) */
	limits_child(&sb->lim);
	/* The kernel writes a core by core_pattern, which may be a host path
	 * outside the view: no cores from the sandbox. */
	struct rlimit nocore = { 0, 0 };
	setrlimit(RLIMIT_CORE, &nocore);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(msg_fd, "prctl (no_new_privs)");
	umask(022);
}

/* The filter, and its listener handed to moat.  From here on every call
 * goes through the filter: only KERNEL ones until the parent holds the
 * listener. */
static void child_filter(int msg_fd, int sync_rd, const struct sock_fprog *prog)
{
	int lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			       SECCOMP_FILTER_FLAG_NEW_LISTENER |
				       SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			       prog);
	if (lfd < 0 && errno == EINVAL)
		lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				   SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
	if (lfd < 0)
		child_fail(msg_fd, "seccomp filter");
	struct child_msg m = { .err = 0, .fd = lfd };
	if (write(msg_fd, &m, sizeof m) != sizeof m)
		_exit(125);
	char go;
	if (read(sync_rd, &go, 1) != 1)
		_exit(125);
	close(lfd);
	close(msg_fd);
	close(sync_rd);
}

/* The command.  Its failure is no setup failure: moat reports it as a
 * shell would (126, 127), from the errno sent on err_wr. */
static _Noreturn void child_exec(struct sandbox *sb, int err_wr, const sigset_t *oldmask)
{
	/* The caller's mask (moat blocks the signals it forwards) */
	sigprocmask(SIG_SETMASK, sb->opt.sigmask_set ? &sb->opt.sigmask : oldmask, NULL);
	signal(SIGPIPE, SIG_DFL); /* moat ignores it; an ignored signal would
				   * stay ignored across exec */
	extern char **environ;
	environ = sb->opt.env;
	/* Every exec, the first included, stops in the tracer (rule 7). */
	execvp(sb->opt.argv[0], sb->opt.argv);
	int e = errno;
	if (write(err_wr, &e, sizeof e) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* Each step that fails says so on msg_fd (child_fail), and the parent
 * names it.  Where the parent is gone there is no one to tell. */
static _Noreturn void child_main(struct sandbox *sb, pid_t parent, int sync_rd, int msg_fd,
				 int err_wr, const struct sock_fprog *prog, const char *empty_dir)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	child_enter(sb, msg_fd);
	char go;
	if (read(sync_rd, &go, 1) != 1) /* the parent has seized us */
		_exit(125);
	child_close_fds(sync_rd, msg_fd, err_wr);
	child_drop(sb, msg_fd, empty_dir);
	child_filter(msg_fd, sync_rd, prog);
	child_exec(sb, err_wr, &sb->sig_saved);
}

/* ---- the launch ---- */

/* Known causes of a failed step, said as a hint after it. */
static const struct {
	const char *step; /* NULL: any step */
	int err;          /* 0: any errno */
	const char *hint;
} step_hints[] = {
	{ "seccomp filter", EINVAL, "moat needs Linux >= 5.14 with seccomp user notification" },
	{ "seccomp filter", EBUSY,
	  "moat runs under another seccomp supervisor, which a process may have only one of" },
	{ "seccomp filter", EPERM,
	  "a seccomp filter moat runs under denies seccomp(): a container's?" },
	{ "setgroups", EPERM,
	  "moat is root without CAP_SETGID, or in a user namespace that denies setgroups: "
	  "see /proc/self/setgroups" },
	{ "setresgid", EINVAL, "the --gid is not mapped in moat's user namespace" },
	{ "setresuid", EINVAL, "the --uid is not mapped in moat's user namespace" },
	{ "setresgid", EPERM, "moat is root without CAP_SETGID" },
	{ "setresuid", EPERM, "moat is root without CAP_SETUID" },
	{ "ptrace", 0, "moat needs ptrace: Yama ptrace_scope <= 2, no seccomp denying it" },
	{ "cgroup attach", 0,
	  "--cgroup required: the sandbox could not be moved into its cgroups; use --cgroup auto" },
	{ NULL, EMFILE, "moat needs about 40 fds: raise ulimit -n" },
	{ NULL, ENOSYS, "moat needs Linux >= 5.14" },
};

/* What the launch made, for the loop or for its undoing on failure. */
struct launch {
	struct sandbox *sb;
	struct sock_fprog prog;
	char empty[PATH_MAX]; /* the first process's kernel cwd, in the skeleton */
	bool empty_made, mask_set, notify_set;
	int sync[2]; /* moat -> child: "g" when seized, "g" when listened */
	int msg[2];  /* child -> moat: struct child_msg */
	int errp[2]; /* child -> moat: errno of a failed first exec */
	pid_t child;
	struct proc *proc;
	bool heard; /* `said` read from msg[0] */
	struct child_msg said;
	const char *step; /* moat's own step that failed, */
	const char *arg;  /* what it was on (or NULL), */
	int err;          /* and its errno (0: none to say) */
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Record moat's failed step; returns -1. */
static int launch_fail(struct launch *l, int err, const char *step, const char *arg)
{
	l->step = step;
	l->arg = arg;
	l->err = err;
	return -1;
}

/* The first process's empty cwd and the three pipes to it. */
static int launch_prepare(struct launch *l)
{
	snprintf(l->empty, sizeof l->empty, "%s/empty", l->sb->vfs->skel);
	if (mkdir(l->empty, 0111) < 0)
		return launch_fail(l, errno, "mkdir", l->empty);
	l->empty_made = true;
	if (chmod(l->empty, 0111) < 0)
		return launch_fail(l, errno, "chmod", l->empty);
	if (pipe2(l->sync, O_CLOEXEC) < 0 || pipe2(l->msg, O_CLOEXEC) < 0 ||
	    pipe2(l->errp, O_CLOEXEC) < 0)
		return launch_fail(l, errno, "pipe", NULL);
	return 0;
}

/* The signals moat forwards, and SIGCHLD, blocked and read from a
 * signalfd: without it no exit or exec stop would ever be seen. */
static int launch_signals(struct launch *l)
{
	struct sandbox *sb = l->sb;
	sigset_t mask;
	sigemptyset(&mask);
	int fwd[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++) {
		/* A signal the caller ignores (`cmd &` ignores SIGINT) stays
		 * ignored: neither forwarded nor counted toward the kill. */
		struct sigaction sa;
		if (fwd[i] != SIGCHLD && sigaction(fwd[i], NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			continue;
		sigaddset(&mask, fwd[i]);
	}
	sigprocmask(SIG_BLOCK, &mask, &sb->sig_saved);
	l->mask_set = true;
	sb->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sb->sig_fd < 0)
		return launch_fail(l, errno, "signalfd", NULL);
	return 0;
}

static int launch_fork(struct launch *l)
{
	struct sandbox *sb = l->sb;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int r = output_setup(&sb->out);
	if (r < 0)
		return launch_fail(l, -r, "pipe", "(output)");
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0)
		return launch_fail(l, errno, "fork", NULL);
	if (child == 0) {
		close(l->sync[1]);
		close(l->msg[0]);
		close(l->errp[0]);
		child_main(sb, parent, l->sync[0], l->msg[1], l->errp[1], &l->prog, l->empty);
	}
	l->child = child;
	close_fd(&l->sync[0]);
	close_fd(&l->msg[1]);
	close_fd(&l->errp[1]);
	output_parent(&sb->out);
	sb->exec_err_fd = l->errp[0];
	l->errp[0] = -1; /* the loop's now */
	sb->init_pid = child;
	fcntl(sb->exec_err_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

/* Traced, known to moat and in the sandbox's cgroups before it runs
 * anything of the program's: all it starts is born there. */
static int launch_seize(struct launch *l)
{
	struct sandbox *sb = l->sb;
	/* EXITKILL: the supervisor's death is the sandbox's death (rule 4). */
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
	if (ptrace(PTRACE_SEIZE, l->child, 0, opts) < 0)
		return launch_fail(l, errno, "ptrace", NULL);
	struct fsctx *fs = fsctx_new(sb->opt.chdir);
	l->proc = fs ? proc_new(l->child, fs, false) : NULL;
	struct task *t = l->proc ? task_add(l->child, l->proc) : NULL;
	if (fs)
		fs->refs--;
	if (!t)
		return launch_fail(l, ENOMEM, "task table", NULL);
	t->linked = true;
	t->started = true; /* seized, never auto-attached: no initial stop */
	errno = 0;
	int attached = cgroup_attach(&sb->cg, l->child);
	int e = errno;
	/* A default memory limit only a cgroup may hold (cli/main.c) */
	if (sb->lim.mem_default && !sb->cg.ver[CGP_MEMORY])
		sb->lim.mem_bytes = 0;
	if (attached < 0)
		return launch_fail(l, e, "cgroup attach", NULL);
	return 0;
}

/* The child sets itself up and installs the filter; moat takes the
 * listener from it and lets it go on to its exec. */
static int launch_listener(struct launch *l)
{
	struct sandbox *sb = l->sb;
	if (write(l->sync[1], "g", 1) != 1)
		return launch_fail(l, errno, "sync", "(seized)");
	ssize_t n = read(l->msg[0], &l->said, sizeof l->said);
	if (n != (ssize_t)sizeof l->said)
		return launch_fail(l, n < 0 ? errno : 0, "the first process died in its setup",
				   NULL);
	l->heard = true;
	if (l->said.err)
		return -1; /* the child's step: launch_say */
	sb->notify_fd = (int)syscall(SYS_pidfd_getfd, l->proc->pidfd, l->said.fd, 0);
	if (sb->notify_fd < 0)
		return launch_fail(l, errno, "pidfd_getfd", "(the seccomp listener)");
	l->notify_set = true;
	fcntl(sb->notify_fd, F_SETFD, FD_CLOEXEC);
	uint64_t wake = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, wake); /* 6.6+; optional */
	if (write(l->sync[1], "g", 1) != 1)
		return launch_fail(l, errno, "sync", "(listened)");
	close_fd(&l->sync[1]);
	return 0;
}

static int launch_finish(struct launch *l)
{
	struct sandbox *sb = l->sb;
	sb->res.t0_ns = limits_now();
	clock_gettime(CLOCK_REALTIME, &sb->res.t0_real);
	/* Before the loop's credentials: a return here leaves moat itself. */
	if (jobs_init() < 0)
		return launch_fail(l, errno, "pipe", "(jobs)");
	/* The child is in it now: removed, the kernel cwd names nothing. */
	rmdir(l->empty);
	l->empty_made = false;
	close_fd(&l->msg[0]);
	return 0;
}

/* Nothing half-made stays: the first process killed, reaped and
 * forgotten, the empty directory removed, moat's mask back.  A child that failed a step
 * of its own said so before it died: that is then the cause. */
static void launch_undo(struct launch *l)
{
	struct sandbox *sb = l->sb;
	if (l->child > 0) {
		kill(l->child, SIGKILL);
		waitpid(l->child, NULL, __WALL);
		task_remove(l->child); /* no-op when not yet known */
		fcntl(l->msg[0], F_SETFL, O_NONBLOCK);
		if (!l->heard && read(l->msg[0], &l->said, sizeof l->said) != sizeof l->said)
			l->said.err = 0;
	}
	if (l->empty_made)
		rmdir(l->empty);
	for (int i = 0; i < 2; i++) {
		close_fd(&l->sync[i]);
		close_fd(&l->msg[i]);
		close_fd(&l->errp[i]);
	}
	if (l->child > 0)
		close_fd(&sb->exec_err_fd);
	if (l->notify_set)
		close_fd(&sb->notify_fd);
	close_fd(&sb->sig_fd);
	if (l->mask_set)
		sigprocmask(SIG_SETMASK, &sb->sig_saved, NULL);
}

/* "STEP [ARG]: strerror (hint)" for the step that failed. */
static void launch_say(const struct launch *l, char *err, size_t len)
{
	const char *step = l->step, *arg = l->arg;
	int e = l->err;
	if (l->said.err) {
		step = l->said.step;
		arg = strcmp(step, "chdir") ? NULL : l->empty;
		e = l->said.err;
	}
	const char *hint = NULL;
	for (size_t i = 0; !hint && i < sizeof step_hints / sizeof step_hints[0]; i++)
		if ((!step_hints[i].step || !strcmp(step_hints[i].step, step)) &&
		    (!step_hints[i].err || step_hints[i].err == e))
			hint = step_hints[i].hint;
	snprintf(err, len, "%s%s%s%s%s%s%s%s", step, arg ? " " : "", arg ? arg : "", e ? ": " : "",
		 e ? strerror(e) : "", hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
}

int sandbox_launch(struct sandbox *sb, char *err, size_t errlen)
{
	struct launch l = { .sb = sb,
			    .prog = *sb->opt.filter,
			    .child = -1,
			    .sync = { -1, -1 },
			    .msg = { -1, -1 },
			    .errp = { -1, -1 } };
	sb->sig_fd = -1;
	int r = launch_prepare(&l);
	if (r == 0)
		r = launch_signals(&l);
	if (r == 0)
		r = launch_fork(&l);
	if (r == 0)
		r = launch_seize(&l);
	if (r == 0)
		r = launch_listener(&l);
	if (r == 0)
		r = launch_finish(&l);
	if (r == 0)
		return 0;
	launch_undo(&l);
	l.said.step[sizeof l.said.step - 1] = '\0';
	launch_say(&l, err, errlen);
	return -1;
}

/* ---- the loop ---- */

static int kill_one(struct proc *p, void *arg)
{
	(void)arg;
	syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
	return 0;
}

static int forward_sig(struct sandbox *sb, int sig)
{
	struct proc *p = proc_find(sb->init_pid);
	if (p)
		return (int)syscall(SYS_pidfd_send_signal, p->pidfd, sig, NULL, 0);
	return 0;
}

static void reap(struct sandbox *sb)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
		/* moat's own helpers are not the sandbox's. */
		if (stack_walker_reaped(pid) || pid == sb->net->factory_pid)
			continue;
		trace_status(sb, pid, status);
	}
}

static int exit_code(struct sandbox *sb)
{
	int e = 0;
	if (read(sb->exec_err_fd, &e, sizeof e) == sizeof e && e > 0) {
		fprintf(stderr, "moat: %s: %s\n", sb->opt.argv[0],
			e == ENOENT ? "command not found" : strerror(e));
		return e == ENOENT ? 127 : 126;
	}
	int s = sb->init_status;
	if (WIFEXITED(s))
		return WEXITSTATUS(s);
	if (WIFSIGNALED(s))
		return 128 + WTERMSIG(s);
	return 125;
}

/* The first process is gone, or a second signal came: nothing the sandbox
 * started outlives it, including children born while the others were
 * dying. */
static void kill_all(struct sandbox *sb)
{
	cgroup_kill(&sb->cg);
	proc_foreach(kill_one, NULL);
	task_kill_unlinked();
}

/* What the loop keeps between its turns. */
struct loop {
	struct pollfd pfd[6]; /* listener, signals, jobs, dns, stdout, stderr */
	int forwarded;        /* signals forwarded to the first process */
	bool resweep;         /* a job is left to sweep: wake within 100 ms */
};

static void loop_signals(struct sandbox *sb, struct loop *lp)
{
	struct signalfd_siginfo si;
	while (read(sb->sig_fd, &si, sizeof si) == sizeof si) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		/* The first signal is the program's to handle; a second one
		 * ends the whole sandbox. */
		if (lp->forwarded++)
			kill_all(sb);
		else
			forward_sig(sb, (int)si.ssi_signo);
	}
	reap(sb);
	/* A caller that died or took a signal leaves its job nothing to
	 * wait for. */
	lp->resweep = jobs_sweep();
}

/* One wait, and what it brought.  Returns false when poll failed. */
static bool loop_once(struct sandbox *sb, struct loop *lp)
{
	struct pollfd *pfd = lp->pfd;
	if (sb->init_done)
		kill_all(sb);
	if (lp->resweep)
		lp->resweep = jobs_sweep();
	bool watch = limits_watched(sb) || sb->res.stopping;
	pfd[4].fd = sb->out.rd[0];
	pfd[5].fd = sb->out.rd[1];
	int tmo = watch ? limits_timeout_ms(sb) : -1;
	if (lp->resweep && (tmo < 0 || tmo > 100))
		tmo = 100;
	watchdog_idle();
	int n = poll(pfd, 6, tmo);
	watchdog_busy();
	if (watch)
		limits_tick(sb);
	if (n < 0)
		return errno == EINTR;
	if (pfd[1].revents & POLLIN)
		loop_signals(sb, lp);
	if (pfd[2].revents & POLLIN)
		dispatch_jobs_complete(sb);
	if (pfd[3].revents & POLLIN)
		net_dns_serve(sb->net, sb->audit);
	for (int k = 0; k < 2; k++)
		if (pfd[4 + k].revents & (POLLIN | POLLHUP))
			output_read(sb, k);
	if (pfd[0].revents & POLLIN) {
		struct seccomp_notif notif;
		memset(&notif, 0, sizeof notif);
		if (ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &notif) == 0)
			dispatch(sb, sb->notify_fd, &notif);
	}
	if (pfd[0].revents & (POLLHUP | POLLERR))
		pfd[0].fd = -1; /* no filtered task is left */
	return true;
}

int sandbox_loop(struct sandbox *sb)
{
	if (sb->creds.as_root) {
		gid_t g = sb->creds.gid; /* host DAC for the sandbox: its groups, not root's */
		setgroups(1, &g);
	}
	/* From here on every host file operation is the sandbox's: the
	 * supervisor keeps the sandbox's fsuid/fsgid for the whole loop, so
	 * host DAC decides as it would for the sandbox (its own scratch work
	 * is done before and after). */
	/* Before the sandbox's credentials: the watchdog keeps moat's own. */
	if (watchdog_start(sb) < 0)
		fprintf(stderr, "moat: warning: no watchdog thread: %s\n", strerror(errno));
	creds_sandbox(&sb->creds);
	struct loop lp = { .pfd = { { sb->notify_fd, POLLIN, 0 },
				    { sb->sig_fd, POLLIN, 0 },
				    { jobs_fd(), POLLIN, 0 },
				    { sb->net->dns_fd, POLLIN, 0 },
				    { sb->out.rd[0], POLLIN, 0 },
				    { sb->out.rd[1], POLLIN, 0 } } };
	while (task_count() > 0 && loop_once(sb, &lp))
		;
	watchdog_stop();
	creds_self(&sb->creds);
	/* Reap what is left (tracees reparented to us, zombies). */
	while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
		;
	close(sb->sig_fd);
	sb->sig_fd = -1;
	sigprocmask(SIG_SETMASK, &sb->sig_saved, NULL);
	output_finish(sb);
	limits_finish(sb, sb->init_status, false);
	return exit_code(sb);
}

int sandbox_run(struct sandbox *sb)
{
	char err[PATH_MAX + 256];
	if (sandbox_launch(sb, err, sizeof err) < 0) {
		fprintf(stderr, "moat: cannot start the sandbox: %s\n", err);
		return 125;
	}
	return sandbox_loop(sb);
}
