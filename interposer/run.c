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
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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
#include "interposer/notify.h"
#include "interposer/sandbox.h"
#include "interposer/trace.h"
#include "interposer/userns.h"
#include "interposer/watchdog.h"
#include "net-stub/net.h"
#include "syscall-table/filter.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* ---- the child, before exec: it may only die ----
 *
 * The first process is a clone of moat that shares its memory (CLONE_VM;
 * not CLONE_VFORK: moat seizes it and takes its listener before its exec).
 * A fork copied moat's page tables, then every page either side wrote was
 * copied, and the exec tore the copy down: 2-5 ms of a run's start on a VM
 * where a page fault costs 13 us.  Until its exec the child runs on a
 * stack of its own (launch_fork) at the same time as moat, so it keeps
 * off moat's state:
 * - it makes raw system calls (child_sys): glibc's wrappers write errno,
 *   which is moat's (the child runs on moat's thread pointer), and some
 *   look at glibc's threads and locks;
 * - it reads its plan (struct child_plan), which moat writes before the
 *   clone and never after, and strings moat never changes (argv, env);
 *   it writes only its own stack;
 * - no handler of moat's runs in it: it starts with every signal blocked
 *   and with the default handlers (clone3's CLONE_CLEAR_SIGHAND; ignored
 *   signals stay ignored, as across an exec).
 * Its network namespace and rlimits are worked out by moat before the
 * clone (net_enter_fd, limits_child_plan) and set by raw calls, so moat
 * may go on meanwhile: it starts its threads while the child sets itself
 * up (launch_listener). */

/* What the first process tells moat over one pipe before its exec: the
 * listener's fd number, or the setup step that failed and its errno.  One
 * write below PIPE_BUF: it arrives whole or not at all. */
struct child_msg {
	int err;       /* errno of the failed step; 0: `fd` is the listener */
	int fd;        /* or CHILD_MSG_MAP: map my new user namespace, then "m" */
	bool killable; /* the filter waits killably once a call is received */
	char step[32]; /* the step, as moat names it to the user */
};

#define CHILD_MSG_MAP (-2)

/* The capabilities of the sandbox's root in its own user namespace
 * (docs/design.md "Root inside"): Docker's default set less what moat
 * refuses or serves itself anyway (NET_RAW, MKNOD, AUDIT_WRITE, SETFCAP,
 * SYS_CHROOT).  The kernel checks them only against the namespace's own
 * ids and objects. */
#define ROOT_CAPS                                                                                  \
	((1ULL << CAP_CHOWN) | (1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_FOWNER) |                 \
	 (1ULL << CAP_FSETID) | (1ULL << CAP_KILL) | (1ULL << CAP_SETGID) | (1ULL << CAP_SETUID) | \
	 (1ULL << CAP_SETPCAP) | (1ULL << CAP_NET_BIND_SERVICE) | (1ULL << CAP_NET_RAW) |          \
	 (1ULL << CAP_SYS_CHROOT))

/* All the child reads of moat's, copied before the clone (launch_fork). */
struct child_plan {
	pid_t parent;
	int sync_rd, msg_wr, err_wr; /* its ends of the three pipes */
	int moat_end[3];             /* moat's ends: closed at once */
	int netns;                   /* its world's namespace to enter, or -1 */
	int out_wr[2];               /* its stdout and stderr, or -1: moat's own */
	bool userns;                 /* a user namespace of its own: uid, gid are its */
	uid_t uid;
	gid_t gid;
	/* Its rlimits (limits_child_plan): RLIM_NLIMITS for an unused one */
	struct limits_rl rl[LIMITS_CHILD_MAX];
	struct sock_fprog prog;
	char empty[PATH_MAX]; /* its kernel cwd until the exec */
	char *const *argv, *const *env;
	unsigned long mask; /* the caller's signal mask, for the program */
};

/* What the child runs: ASan knows moat's stacks, not the child's, and
 * would take its noreturn calls for a stack switch (and say so on the
 * program's stderr). */
#define CHILD_FN __attribute__((no_sanitize("address")))
/* In a copying loop of the child's: the compiler may not turn the loop
 * into a call of glibc's memcpy (through the PLT, lazily bound: ld.so's
 * resolver on moat's thread pointer while moat's threads run). */
#define CHILD_NO_LIBC() __asm__ volatile("" ::: "memory")

/* A system call, not glibc's wrapper: its result, or -errno.  The
 * argument registers count as changed: at an exec stop moat rewrites
 * them (trace.c exec_rewrite), and a failed exec returns with its. */
CHILD_FN static long child_sys6(long nr, long a, long b, long c, long d, long e)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long ret = nr;
	__asm__ volatile("syscall"
			 : "+a"(ret), "+D"(a), "+S"(b), "+d"(c), "+r"(r10), "+r"(r8)
			 :
			 : "rcx", "r11", "memory");
	return ret;
}
#define CHILD_SYS_(nr, a, b, c, d, e, ...) \
	child_sys6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e))
#define child_sys(...) CHILD_SYS_(__VA_ARGS__, 0, 0, 0, 0, 0)

CHILD_FN static _Noreturn void child_exit(int code)
{
	for (;;)
		child_sys(SYS_exit_group, code);
}

/* Say which step failed and why (`r`: its -errno), then die. */
CHILD_FN static _Noreturn void child_fail(const struct child_plan *p, const char *step, long r)
{
	struct child_msg m = { .err = r < 0 && r > -4096 ? (int)-r : EIO, .fd = -1 };
	for (size_t i = 0; step[i] && i < sizeof m.step - 1; i++)
		m.step[i] = step[i];
	child_sys(SYS_write, p->msg_wr, &m, sizeof m);
	child_exit(125);
}

/* The bounding set, once, while CAP_SETPCAP is still held (before the
 * uid switch clears it).  The first failure ends it: EINVAL past the
 * kernel's last capability, or EPERM for all of them without
 * CAP_SETPCAP. */
CHILD_FN static void drop_bounding(unsigned long long keep)
{
	for (int c = 0; c <= 63; c++)
		if (!(keep & (1ULL << c)) && child_sys(SYS_prctl, PR_CAPBSET_DROP, c) < 0)
			break;
}

/* The ambient and the three sets (the bounding set went first): `keep`
 * permitted and effective, nothing inheritable. */
CHILD_FN static void drop_caps(unsigned long long keep)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	d[0].permitted = d[0].effective = (uint32_t)keep;
	d[1].permitted = d[1].effective = (uint32_t)(keep >> 32);
	child_sys(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL);
	child_sys(SYS_capset, &h, d);
}

/* The network world, the session and the output.  Moat waits. */
CHILD_FN static void child_enter(const struct child_plan *p)
{
	long r;
	/* The private network world (net-stub/netns.c), while we may. */
	if (p->netns >= 0 && (r = child_sys(SYS_setns, p->netns, CLONE_NEWNET)) < 0)
		child_fail(p, "setns (network)", r);
	/* Root inside: a user namespace of its own, whose ids moat maps to
	 * the sandbox's range of host ids (interposer/userns.c) while the
	 * child waits.  After the network namespace (which stays the
	 * host's user namespace's) and before the IPC one (which is then
	 * the sandbox root's own). */
	if (p->userns) {
		if ((r = child_sys(SYS_unshare, CLONE_NEWUSER)) < 0)
			child_fail(p, "unshare (user namespace)", r);
		struct child_msg m = { .err = 0, .fd = CHILD_MSG_MAP };
		char go;
		if (child_sys(SYS_write, p->msg_wr, &m, sizeof m) != sizeof m ||
		    child_sys(SYS_read, p->sync_rd, &go, 1) != 1 || go != 'm')
			child_exit(125);
	}
	/* With it (moat root, the filter's first variant) an IPC namespace
	 * of its own: SysV IPC and POSIX message queues run in the kernel
	 * there, and reach no key, id or queue name of the host's. */
	if (p->netns >= 0 && (r = child_sys(SYS_unshare, CLONE_NEWIPC)) < 0)
		child_fail(p, "unshare (IPC)", r);
	/* A new session: no controlling terminal, so TIOCSTI and job control
	 * signals from the host's terminal cannot reach in (rule 5). */
	if ((r = child_sys(SYS_setsid)) < 0)
		child_fail(p, "setsid", r);
	/* stdout and stderr through moat when it must see them (output.h). */
	if (p->out_wr[0] >= 0 && ((r = child_sys(SYS_dup2, p->out_wr[0], 1)) < 0 ||
				  (r = child_sys(SYS_dup2, p->out_wr[1], 2)) < 0))
		child_fail(p, "dup2 (stdout, stderr)", r);
}

/* Only fds 0-2 cross over, plus our three pipes (close-on-exec). */
CHILD_FN static void child_close_fds(int a, int b, int c)
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
			child_sys(SYS_close_range, lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	child_sys(SYS_close_range, lo, ~0U, 0);
}

/* The sandbox's ids, no capabilities, its rlimits, no_new_privs.  Moat
 * waits. */
CHILD_FN static void child_drop(const struct child_plan *p)
{
	long r;
	if ((r = child_sys(SYS_chdir, p->empty)) < 0)
		child_fail(p, "chdir", r);
	drop_bounding(p->userns ? ROOT_CAPS : 0);
	if (p->userns) {
		/* Its ids in its namespace (the capabilities the namespace's
		 * creator has there allow it).  Nothing of moat's memory is in
		 * reach meanwhile: no other process has these ids yet. */
		gid_t g = p->gid;
		if ((r = child_sys(SYS_setgroups, 1, &g)) < 0)
			child_fail(p, "setgroups", r);
		if ((r = child_sys(SYS_setresgid, p->gid, p->gid, p->gid)) < 0)
			child_fail(p, "setresgid", r);
		if ((r = child_sys(SYS_setresuid, p->uid, p->uid, p->uid)) < 0)
			child_fail(p, "setresuid", r);
	} else if (child_sys(SYS_geteuid) == 0) {
		gid_t g = p->gid;
		if ((r = child_sys(SYS_setgroups, 1, &g)) < 0)
			child_fail(p, "setgroups", r);
		/* The saved ids stay root until the exec, which sets them to
		 * the effective ones.  Until then this memory is moat's, and a
		 * process may reach another's (/proc/PID/mem, ptrace) when
		 * the other's real, effective and saved ids are all its own
		 * and it is dumpable, which an id switch makes it when
		 * fs.suid_dumpable is 1: any process of the sandbox's uid
		 * could then write into moat. */
		if ((r = child_sys(SYS_setresgid, p->gid, p->gid, 0)) < 0)
			child_fail(p, "setresgid", r);
		if ((r = child_sys(SYS_setresuid, p->uid, p->uid, 0)) < 0)
			child_fail(p, "setresuid", r);
	}
	drop_caps(p->userns ? ROOT_CAPS : 0);
	/* Without capabilities: a hard limit of the caller's stays (moat
	 * raised its own for --open-files-limit where it could, cli) */
	for (int i = 0; i < LIMITS_CHILD_MAX; i++) {
		struct rlimit r2 = { p->rl[i].cur, p->rl[i].max };
		if (p->rl[i].res == RLIM_NLIMITS)
			continue;
		/* the caller's soft limit, under the hard limit it has */
		if (p->rl[i].keep_max) {
			if (child_sys(SYS_prlimit64, 0, p->rl[i].res, NULL, &r2) < 0)
				continue;
			r2.rlim_cur = p->rl[i].cur;
		}
		child_sys(SYS_prlimit64, 0, p->rl[i].res, &r2, NULL);
	}
	/* The kernel writes a core by core_pattern, which may be a host path
	 * outside the view: no cores from the sandbox. */
	struct rlimit nocore = { 0, 0 };
	child_sys(SYS_prlimit64, 0, RLIMIT_CORE, &nocore, NULL);
	if ((r = child_sys(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) < 0)
		child_fail(p, "prctl (no_new_privs)", r);
	child_sys(SYS_umask, 022);
}

/* The filter, and its listener handed to moat.  From here on every call
 * goes through the filter: only KERNEL ones until the parent holds the
 * listener. */
CHILD_FN static void child_filter(const struct child_plan *p)
{
	long lfd = child_sys(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER |
				     SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			     &p->prog);
	bool killable = lfd >= 0;
	if (lfd == -EINVAL)
		lfd = child_sys(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				SECCOMP_FILTER_FLAG_NEW_LISTENER, &p->prog);
	if (lfd < 0)
		child_fail(p, "seccomp filter", lfd);
	struct child_msg m = { .err = 0, .fd = (int)lfd, .killable = killable };
	if (child_sys(SYS_write, p->msg_wr, &m, sizeof m) != sizeof m)
		child_exit(125);
	/* From the message on, moat runs again, at the same time. */
	char go;
	if (child_sys(SYS_read, p->sync_rd, &go, 1) != 1)
		child_exit(125);
	child_sys(SYS_close, lfd);
	child_sys(SYS_close, p->msg_wr);
	child_sys(SYS_close, p->sync_rd);
}

/* `name`'s value in `env` (glibc's getenv, in the program's own), or NULL. */
CHILD_FN static const char *child_getenv(char *const *env, const char *name)
{
	for (; *env; env++) {
		size_t i = 0;
		while (name[i] && (*env)[i] == name[i])
			i++;
		if (!name[i] && (*env)[i] == '=')
			return *env + i + 1;
	}
	return NULL;
}

/* execve, and for a file the kernel cannot run (ENOEXEC) the shell on it,
 * as glibc's execvp does.  The error of the last try. */
CHILD_FN static long child_execve(const char *file, char *const argv[], char *const env[])
{
	long r = child_sys(SYS_execve, file, argv, env);
	if (r != -ENOEXEC)
		return r;
	size_t argc = 0;
	while (argv[argc])
		argc++;
	char *sh[argc > 1 ? argc + 2 : 3]; /* the stack has room: launch_fork */
	sh[0] = "/bin/sh";
	sh[1] = (char *)file;
	sh[2] = NULL;
	for (size_t i = 1; i < argc; i++) {
		sh[i + 1] = argv[i];
		CHILD_NO_LIBC();
	}
	sh[argc > 1 ? argc + 1 : 2] = NULL;
	return child_sys(SYS_execve, sh[0], sh, env);
}

/* glibc's execvp, the same tries in the same order (each stops in moat,
 * which decides it), with the program's PATH.  The error: EACCES if a try
 * was refused so, else the last. */
CHILD_FN static long child_execvp(const char *file, char *const argv[], char *const env[])
{
	size_t fl = 0;
	while (file[fl] && file[fl] != '/')
		fl++;
	if (!*file)
		return -ENOENT;
	if (file[fl] == '/')
		return child_execve(file, argv, env);
	if (fl > NAME_MAX)
		return -ENAMETOOLONG;
	const char *path = child_getenv(env, "PATH");
	if (!path)
		path = "/bin:/usr/bin";
	char buf[PATH_MAX + NAME_MAX + 2];
	long r = -ENOENT;
	bool eacces = false;
	for (const char *d = path;; d++) {
		size_t dl = 0;
		while (d[dl] && d[dl] != ':')
			dl++;
		if (dl < PATH_MAX) { /* longer: no such directory to try */
			size_t n = 0;
			for (size_t i = 0; i < dl; i++) {
				buf[n++] = d[i];
				CHILD_NO_LIBC();
			}
			if (dl)
				buf[n++] = '/';
			for (size_t i = 0; i <= fl; i++) {
				buf[n++] = file[i];
				CHILD_NO_LIBC();
			}
			r = child_execve(buf, argv, env);
			if (r == -EACCES)
				eacces = true;
			else if (r != -ENOENT && r != -ESTALE && r != -ENOTDIR && r != -ENODEV &&
				 r != -ETIMEDOUT)
				return r; /* found, and failed to run */
		}
		d += dl;
		if (!*d)
			break;
	}
	return eacces ? -EACCES : r;
}

/* The command.  Its failure is no setup failure: moat reports it as a
 * shell would (126, 127), from the errno sent on err_wr. */
CHILD_FN static _Noreturn void child_exec(const struct child_plan *p)
{
	/* moat ignores SIGPIPE; an ignored signal would stay ignored across
	 * exec.  Then the caller's mask (moat blocks the signals it
	 * forwards; the child started with all blocked). */
	struct {
		unsigned long handler, flags, restorer, mask;
	} dfl = { 0 };
	child_sys(SYS_rt_sigaction, SIGPIPE, &dfl, NULL, 8);
	child_sys(SYS_rt_sigprocmask, SIG_SETMASK, &p->mask, NULL, 8);
	/* Every exec, the first included, stops in the tracer (rule 7). */
	long r = child_execvp(p->argv[0], p->argv, p->env);
	int e = (int)-r;
	if (child_sys(SYS_write, p->err_wr, &e, sizeof e) < 0)
		child_exit(127);
	child_exit(e == ENOENT ? 127 : 126);
}

/* The clone's start.  Each step that fails says so on msg_wr
 * (child_fail), and moat names it.  Where moat is gone there is no one
 * to tell. */
CHILD_FN static int child_main(void *arg)
{
	const struct child_plan *p = arg;
	/* At the same time as moat's seize and cgroup attach. */
	child_sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
	if (child_sys(SYS_getppid) != p->parent)
		child_exit(125);
	for (int i = 0; i < 3; i++)
		child_sys(SYS_close, p->moat_end[i]);
	char go;
	if (child_sys(SYS_read, p->sync_rd, &go, 1) != 1) /* moat has seized us */
		child_exit(125);
	/* Moat starts its threads meanwhile, then waits for the message
	 * (child_filter). */
	child_enter(p);
	child_close_fds(p->sync_rd, p->msg_wr, p->err_wr);
	child_drop(p);
	child_filter(p);
	child_exec(p);
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
	void *stack; /* the child's (launch_stack) */
	size_t stack_len;
	pid_t child;
	bool born_v2; /* cloned into the v2 cgroup (CLONE_INTO_CGROUP) */
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

/* The first process's stack.  Below its frames moat writes, at its exec
 * stop, the host path and a script's argv (trace.c exec_rewrite: up to
 * ~70 KB); the exec's search builds the shell's argv there (argc + 2
 * pointers).  Only the pages used are ever touched. */
#define CHILD_STACK (256 * 1024)

/* A stack for the clone, with a guard page below it: an overflow faults
 * in the child and never writes into moat's memory.  It stays mapped
 * after a launch: the child uses it until its exec, which moat does not
 * wait for (launch_undo unmaps it after reaping a failed one). */
static int launch_stack(struct launch *l)
{
	size_t argc = 0;
	while (l->sb->opt.argv[argc])
		argc++;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = CHILD_STACK + 2 * (argc + 2) * sizeof(char *);
	l->stack_len = (len + page - 1) / page * page + page;
	void *s = mmap(NULL, l->stack_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (s == MAP_FAILED)
		return launch_fail(l, errno, "mmap", "(the first process's stack)");
	l->stack = s;
	if (mprotect(s, page, PROT_NONE) < 0)
		return launch_fail(l, errno, "mprotect", "(the first process's stack)");
	return 0;
}

/* What the child reads, copied out of what moat goes on changing (it
 * closes its copies of the pipes' ends, and of the output's). */
static void launch_plan(struct launch *l, struct child_plan *p)
{
	struct sandbox *sb = l->sb;
	*p = (struct child_plan){ .parent = getpid(),
				  .sync_rd = l->sync[0],
				  .msg_wr = l->msg[1],
				  .err_wr = l->errp[1],
				  .moat_end = { l->sync[1], l->msg[0], l->errp[0] },
				  .netns = net_enter_fd(sb->net),
				  .out_wr = { sb->out.wr[0], sb->out.wr[1] },
				  .userns = sb->creds.base != 0,
				  .uid = creds_show_uid(&sb->creds, sb->creds.id_uid),
				  .gid = creds_show_gid(&sb->creds, sb->creds.id_gid),

				  .prog = l->prog,
				  .argv = sb->opt.argv,
				  .env = sb->opt.env };
	limits_child_plan(&sb->lim, p->rl);
	snprintf(p->empty, sizeof p->empty, "%s", l->empty);
	/* The caller's mask (moat blocks the signals it forwards), as
	 * sigprocmask would set it: glibc's own two signals unblocked. */
	const sigset_t *m = sb->opt.sigmask_set ? &sb->opt.sigmask : &sb->sig_saved;
	for (int s = 1; s <= 64; s++)
		if (s != 32 && s != 33 && sigismember(m, s) == 1)
			p->mask |= 1UL << (s - 1);
}

/* clone3's arguments (linux/sched.h's macros collide with glibc's). */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
		set_tid_size, cgroup;
};
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* clone3 onto the stack in `ca`: the child calls fn(arg) there (16-byte
 * aligned, as the stack's top is) and exits with what it returns, which
 * child_main never does.  The child's pid, or -errno.  glibc has no
 * clone3 wrapper: the child must not return through this function's
 * frame, which is on moat's stack. */
static long clone3_on_stack(struct clone3_args *ca, int (*fn)(void *), void *arg)
{
	long ret = SYS_clone3;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "mov %[arg], %%rdi\n\t"
			 "call *%[fn]\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov %[exit_nr], %%eax\n\t"
			 "syscall\n\t"
			 "hlt\n"
			 "1:"
			 : "+a"(ret)
			 : "D"(ca),
			   "S"(sizeof *ca), [fn] "r"(fn), [arg] "r"(arg), [exit_nr] "i"(SYS_exit)
			 : "rcx", "r11", "memory");
	return ret;
}

static int launch_fork(struct launch *l)
{
	struct sandbox *sb = l->sb;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int r = output_setup(&sb->out);
	if (r < 0)
		return launch_fail(l, -r, "pipe", "(output)");
	if (launch_stack(l) < 0)
		return -1;
	/* Static: the child reads it until its exec, after sandbox_launch has
	 * returned; one launch's child has exec'd or died before the next. */
	static struct child_plan plan;
	launch_plan(l, &plan);
	/* The child starts with every signal blocked (child_main). */
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	/* Handlers back to the default (moat's would run on moat's memory;
	 * ignored signals stay ignored, the caller's, across the exec too),
	 * and born in the v2 cgroup where the kernel will: no migration. */
	struct clone3_args ca = { .flags = CLONE_VM | CLONE_CLEAR_SIGHAND,
				  .exit_signal = SIGCHLD,
				  .stack = (uintptr_t)l->stack,
				  .stack_size = l->stack_len };
	int cgfd = cgroup_v2_fd(&sb->cg);
	if (cgfd >= 0) {
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)cgfd;
	}
	long child = clone3_on_stack(&ca, child_main, &plan);
	if (child < 0 && cgfd >= 0 && child != -ENOMEM && child != -EAGAIN) {
		/* one it will not clone into: attached by a write, as v1's */
		ca.flags &= ~CLONE_INTO_CGROUP;
		ca.cgroup = 0;
		child = clone3_on_stack(&ca, child_main, &plan);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (child < 0)
		return launch_fail(l, (int)-child, "fork", NULL);
	l->born_v2 = (ca.flags & CLONE_INTO_CGROUP) != 0;
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
	int attached = cgroup_attach(&sb->cg, l->child, l->born_v2);
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
	/* moat's threads while the child sets itself up (each ~0.3 ms) */
	if (watchdog_start(sb) < 0)
		fprintf(stderr, "moat: warning: no watchdog thread: %s\n", strerror(errno));
	int nr = notify_prepare(sb);
	if (nr < 0)
		fprintf(stderr, "moat: warning: no serving thread (%s): the loop serves calls\n",
			strerror(-nr));
	ssize_t n = read(l->msg[0], &l->said, sizeof l->said);
	if (n == (ssize_t)sizeof l->said && !l->said.err && l->said.fd == CHILD_MSG_MAP) {
		int r = userns_map(l->child, sb->creds.base);
		if (r < 0)
			return launch_fail(l, -r, "uid_map", "(the sandbox's user namespace)");
		if (write(l->sync[1], "m", 1) != 1)
			return launch_fail(l, errno, "sync", "(mapped)");
		n = read(l->msg[0], &l->said, sizeof l->said);
	}
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
	sb->recv_killable = l->said.killable;
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
	notify_stop(); /* the threads launch_listener made, if it did */
	watchdog_stop();
	if (l->child > 0) {
		kill(l->child, SIGKILL);
		waitpid(l->child, NULL, __WALL);
		task_remove(l->child); /* no-op when not yet known */
		fcntl(l->msg[0], F_SETFL, O_NONBLOCK);
		if (!l->heard && read(l->msg[0], &l->said, sizeof l->said) != sizeof l->said)
			l->said.err = 0;
	}
	if (l->stack) /* the child, if any, is gone */
		munmap(l->stack, l->stack_len);
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
		if (stack_walker_reaped(pid))
			continue;
		if (pid == sb->net->factory_pid) {
			sb->net->factory_pid = 0; /* its pid may come back as a task's */
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			notify_pid_released();
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
	struct pollfd pfd[7]; /* listener, signals, jobs, dns, stdout, stderr, lifeline */
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

/* One wait, and what it brought.  Returns false when the loop is over:
 * no task is left, or poll failed.  Called and returns holding the
 * supervisor lock; waits without it. */
static bool loop_once(struct sandbox *sb, struct loop *lp)
{
	struct pollfd *pfd = lp->pfd;
	if (sb->init_done)
		kill_all(sb);
	if (task_count() == 0)
		return false;
	if (lp->resweep)
		lp->resweep = jobs_sweep();
	bool watch = limits_watched(sb) || sb->res.stopping;
	pfd[4].fd = sb->out.rd[0];
	pfd[5].fd = sb->out.rd[1];
	int tmo = watch ? limits_timeout_ms(sb) : -1;
	if (lp->resweep && (tmo < 0 || tmo > 100))
		tmo = 100;
	supervisor_unlock();
	int n = poll(pfd, 7, tmo);
	supervisor_lock();
	if (watch)
		limits_tick(sb);
	if (n < 0)
		return errno == EINTR;
	if (pfd[1].revents & POLLIN)
		loop_signals(sb, lp);
	if (pfd[6].revents) {
		/* --lifeline: whoever started moat is gone; so is the sandbox */
		pfd[6].fd = -1;
		kill_all(sb);
	}
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
	/* The watchdog (launch_listener) keeps moat's own credentials. */
	creds_sandbox(&sb->creds);
	/* Calls on a thread of their own, with these credentials; the loop
	 * serves them itself when it cannot have one. */
	supervisor_lock();
	int nr = notify_start(sb);
	if (nr < 0)
		fprintf(stderr, "moat: warning: no serving thread (%s): the loop serves calls\n",
			strerror(-nr));
	struct loop lp = { .pfd = { { notify_running() ? -1 : sb->notify_fd, POLLIN, 0 },
				    { sb->sig_fd, POLLIN, 0 },
				    { jobs_fd(), POLLIN, 0 },
				    { sb->net->dns_fd, POLLIN, 0 },
				    { sb->out.rd[0], POLLIN, 0 },
				    { sb->out.rd[1], POLLIN, 0 },
				    { sb->opt.lifeline >= 3 ? sb->opt.lifeline : -1, 0, 0 } } };
	while (loop_once(sb, &lp))
		;
	supervisor_unlock();
	notify_stop();
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
