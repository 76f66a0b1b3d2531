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

static void child_fail(int fd, const char *what)
{
	int e = -errno;
	(void)what;
	if (write(fd, &e, sizeof e) < 0)
		_exit(125);
	_exit(125);
}

/* The bounding set first, while CAP_SETPCAP is still held (before the
 * uid switch clears it); then the ambient and the three sets. */
static void drop_bounding(void)
{
	for (int c = 0; c <= 63; c++)
		prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
}

static void drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	drop_bounding();
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	syscall(SYS_capset, &h, d);
}

static void child_main(struct sandbox *sb, pid_t parent, int sync_rd, int fd_wr, int err_wr,
		       struct sock_fprog *prog, const char *empty_dir, sigset_t *oldmask)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	/* The private network world (net-stub/netns.c), while we may. */
	if (net_enter(sb->net) < 0)
		child_fail(fd_wr, "setns");
	/* A new session: no controlling terminal, so TIOCSTI and job control
	 * signals from the host's terminal cannot reach in (rule 5). */
	if (setsid() < 0)
		child_fail(fd_wr, "setsid");
	/* stdout and stderr through moat when it must see them (output.h). */
	if (sb->out.on && (dup2(sb->out.wr[0], 1) < 0 || dup2(sb->out.wr[1], 2) < 0))
		child_fail(fd_wr, "dup2");
	char go;
	if (read(sync_rd, &go, 1) != 1) /* the parent has seized us */
		_exit(125);
	/* Only fds 0-2 cross over, plus our three pipes (close-on-exec). */
	int keep[] = { sync_rd, fd_wr, err_wr };
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
	if (chdir(empty_dir) < 0)
		child_fail(fd_wr, "chdir");
	if (geteuid() == 0) {
		gid_t g = sb->creds.gid;
		drop_bounding();
		if (setgroups(1, &g) < 0 || setresgid(sb->creds.gid, sb->creds.gid, sb->creds.gid) < 0 ||
		    setresuid(sb->creds.uid, sb->creds.uid, sb->creds.uid) < 0)
			child_fail(fd_wr, "setuid");
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
		child_fail(fd_wr, "no_new_privs");
	umask(022);
	int lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			       SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			       prog);
	if (lfd < 0 && errno == EINVAL)
		lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				   SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
	if (lfd < 0)
		child_fail(fd_wr, "seccomp");
	/* From here on every call goes through the filter: only KERNEL ones
	 * until the parent holds the listener. */
	if (write(fd_wr, &lfd, sizeof lfd) != sizeof lfd)
		_exit(125);
	if (read(sync_rd, &go, 1) != 1)
		_exit(125);
	close(lfd);
	close(fd_wr);
	close(sync_rd);
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

/* ---- the supervisor ---- */

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

int sandbox_launch(struct sandbox *sb)
{
	struct sock_fprog prog = *sb->opt.filter;
	char empty[PATH_MAX];
	snprintf(empty, sizeof empty, "%s/empty", sb->vfs->skel);
	if (mkdir(empty, 0111) < 0 || chmod(empty, 0111) < 0) {
		fprintf(stderr, "moat: cannot create %s: %s\n", empty, strerror(errno));
		return 125;
	}
	int sync[2], fdp[2], errp[2];
	if (pipe2(sync, O_CLOEXEC) < 0 || pipe2(fdp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		fprintf(stderr, "moat: pipe: %s\n", strerror(errno));
		return 125;
	}
	sigset_t mask;
	sigemptyset(&mask);
	int fwd[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++) {
		/* A signal the caller ignores (`cmd &` ignores SIGINT) stays
		 * ignored: neither forwarded nor counted toward the kill. */
		struct sigaction sa;
		if (fwd[i] != SIGCHLD && sigaction(fwd[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			continue;
		sigaddset(&mask, fwd[i]);
	}
	sigprocmask(SIG_BLOCK, &mask, &sb->sig_saved);
	sb->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sb->sig_fd < 0) {
		/* Without it no exit or exec stop would ever be seen. */
		int e = errno;
		sigprocmask(SIG_SETMASK, &sb->sig_saved, NULL);
		fprintf(stderr, "moat: signalfd: %s%s\n", strerror(e),
			e == EMFILE ? " (moat needs about 40 fds: raise ulimit -n)" : "");
		return 125;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	if (output_setup(&sb->out) < 0) {
		fprintf(stderr, "moat: pipe: %s\n", strerror(errno));
		return 125;
	}
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0) {
		fprintf(stderr, "moat: fork: %s\n", strerror(errno));
		return 125;
	}
	if (child == 0) {
		close(sync[1]);
		close(fdp[0]);
		close(errp[0]);
		child_main(sb, parent, sync[0], fdp[1], errp[1], &prog, empty, &sb->sig_saved);
	}
	close(sync[0]);
	close(fdp[1]);
	close(errp[1]);
	output_parent(&sb->out);
	sb->exec_err_fd = errp[0];
	sb->init_pid = child;
	fcntl(errp[0], F_SETFL, O_NONBLOCK);

	/* EXITKILL: the supervisor's death is the sandbox's death (rule 4). */
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
	if (ptrace(PTRACE_SEIZE, child, 0, opts) < 0) {
		fprintf(stderr, "moat: cannot ptrace the sandbox (%s); moat needs ptrace "
				"(Yama ptrace_scope <= 2, no seccomp denying it)\n",
			strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, __WALL);
		return 125;
	}
	struct fsctx *fs = fsctx_new(sb->opt.chdir);
	struct proc *p = fs ? proc_new(child, fs, false) : NULL;
	struct task *t = p ? task_add(child, p) : NULL;
	if (fs)
		fs->refs--;
	if (!t) {
		fprintf(stderr, "moat: out of memory\n");
		kill(child, SIGKILL);
		return 125;
	}
	t->linked = true;
	t->started = true; /* seized, never auto-attached: no initial stop */
	/* Into the cgroups before it runs anything of the program's: all it
	 * starts is born there. */
	int attached = cgroup_attach(&sb->cg, child);
	/* A default memory limit only a cgroup may hold (cli/main.c) */
	if (sb->lim.mem_default && !sb->cg.ver[CGP_MEMORY])
		sb->lim.mem_bytes = 0;
	if (attached < 0) {
		fprintf(stderr, "moat: --cgroup required: the sandbox could not be moved into its "
				"cgroups; use --cgroup auto\n");
		kill(child, SIGKILL);
		waitpid(child, NULL, __WALL);
		return 125;
	}
	if (write(sync[1], "g", 1) != 1) {
		fprintf(stderr, "moat: sandbox setup failed\n");
		return 125;
	}
	int lfd = -1;
	if (read(fdp[0], &lfd, sizeof lfd) != sizeof lfd || lfd < 0) {
		if (lfd < 0)
			fprintf(stderr, "moat: sandbox setup failed: %s (moat needs Linux >= 5.14 with seccomp user notification)\n",
				strerror(-lfd));
		else
			fprintf(stderr, "moat: sandbox setup failed\n");
		kill(child, SIGKILL);
		waitpid(child, NULL, __WALL);
		return 125;
	}
	sb->notify_fd = (int)syscall(SYS_pidfd_getfd, p->pidfd, lfd, 0);
	if (sb->notify_fd < 0) {
		fprintf(stderr, "moat: cannot take the seccomp listener: %s\n", strerror(errno));
		kill(child, SIGKILL);
		return 125;
	}
	fcntl(sb->notify_fd, F_SETFD, FD_CLOEXEC);
	uint64_t wake = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, wake); /* 6.6+; optional */
	if (write(sync[1], "g", 1) != 1)
		return 125;
	close(sync[1]);
	sb->res.t0_ns = limits_now();
	clock_gettime(CLOCK_REALTIME, &sb->res.t0_real);
	/* Before the loop's credentials: a return here leaves moat itself. */
	if (jobs_init() < 0) {
		fprintf(stderr, "moat: pipe: %s\n", strerror(errno));
		kill(child, SIGKILL);
		return 125;
	}
	/* The child is in it now: removed, the kernel cwd names nothing. */
	rmdir(empty);
	close(fdp[0]);
	return 0;
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
	struct loop lp = { .pfd = { { sb->notify_fd, POLLIN, 0 }, { sb->sig_fd, POLLIN, 0 },
				    { jobs_fd(), POLLIN, 0 }, { sb->net->dns_fd, POLLIN, 0 },
				    { sb->out.rd[0], POLLIN, 0 }, { sb->out.rd[1], POLLIN, 0 } } };
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
	int code = sandbox_launch(sb);
	return code ? code : sandbox_loop(sb);
}
