/* A supervised call and the verdict a handler gives on it.
 *
 * The bottom floor of moat (core/): everything here is used by the
 * handlers of every family and by the dispatcher above them, and includes
 * nothing of moat's but core/.
 *
 * The dispatcher (interposer/dispatch.c) fills a `struct call` from a
 * seccomp notification, or from the ptrace stop of an exec (`stopped`),
 * finds the table entry, and calls the handler.  The handler copies what
 * it needs from the tracee with the call_read_*() helpers (copy and
 * terminate; why no NOTIF_ID_VALID follows: core/call.c), decides,
 * performs, and returns a
 * verdict.  Only the dispatcher replies (or hands the verdict of a stop
 * back to the ptrace side, which moves the registers) and writes the
 * audit record, so no handler can forget either. */
#ifndef MOAT_CALL_H
#define MOAT_CALL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sc_entry;
struct task;
struct vfs;
struct net;
struct creds;
struct machine;
struct exec_plan;

enum verdict_kind {
	V_ERROR,    /* return -value; an emulated error, not a policy denial */
	V_DENY,     /* return -value; a policy denial, always audited */
	V_VALUE,    /* return value */
	V_FD,       /* install fd (supervisor-owned, closed by dispatcher) */
	V_CONTINUE, /* let the kernel run it: register-only decisions */
	V_KILL,     /* kill the calling process */
	V_PENDING,  /* answered later, by a job (a call that may block) */
	V_EXEC,     /* run the exec as planned (a call at a ptrace stop only) */
};

struct verdict {
	enum verdict_kind kind;
	int64_t value;                /* return value or positive errno */
	int fd;                       /* V_FD: the supervisor's fd to grant */
	unsigned fd_flags;            /* V_FD: O_CLOEXEC or 0 */
	const char *rule;             /* why (for the audit record), static string */
	bool record;                  /* audit it at every level (network egress) */
	const struct exec_plan *exec; /* V_EXEC: what to run (fs-emulation/exec.h) */
};

#define CALL_MAX_PATHS 2

/* A call answered later by a job (V_PENDING): the dispatcher leaves a
 * copy of the call and its verdict here, and the job's end hands them
 * back (dispatch_done), so the audit record carries the real result. */
struct call;
struct pending {
	struct call *call;
	struct verdict v;
};

struct call {
	uint64_t id;   /* notification id (none when stopped) */
	int notify_fd; /* -1 when stopped */
	/* At a ptrace stop (exec), not a notification: nothing to answer,
	 * and no id to check — a tracee in a ptrace stop cannot leave it
	 * while the loop is busy with it (even SIGKILL leaves a zombie the
	 * loop has not reaped, so its tid cannot be reused meanwhile). */
	bool stopped;
	struct exec_plan *exec; /* stopped: where an exec handler plans */
	pid_t tid;              /* the calling thread (not the tgid) */
	struct task *task;
	/* What a handler works on: the sandbox's file system view, its
	 * network, and the ids host work for it runs with. */
	struct vfs *vfs;
	struct net *net;
	const struct creds *creds;
	const struct machine *machine;
	int nr;
	uint64_t arg[6];
	uint64_t ip;
	const struct sc_entry *ent;
	/* Audit material, filled as the handler copies and resolves. */
	int npath;
	char path[CALL_MAX_PATHS][PATH_MAX];     /* as the program named it */
	char resolved[CALL_MAX_PATHS][PATH_MAX]; /* virtual, after the walk */
	char detail[256];                        /* e.g. a socket address */
	/* A network destination the decision rests on (family != 0). */
	struct call_net {
		int family; /* AF_INET, AF_INET6 */
		char address[46];
		int port;
		char host[128];  /* the pinned name of the address */
		char query[256]; /* a DNS question the data carried */
		char qtype[12];
		bool allowed; /* an allow rule matched */
	} dest;
	/* A path argument read before the supervisor lock was taken
	 * (dispatch_prepare): 1 + its argument number, 0 for none.  The
	 * first call_read_path of that argument takes it instead of reading
	 * the caller's memory again. */
	int pre_arg;
	int pre_rc;
	char pre[PATH_MAX];
	struct pending *pending; /* V_PENDING: the job's slot, or NULL */
	int nstack;              /* the caller's stack, for the record */
	char stack[16][160];     /* (STACK_MAX, STACK_FRAME_LEN: audit/stack.h) */
};

static inline struct verdict v_error(int err)
{
	return (struct verdict){ .kind = V_ERROR, .value = err, .fd = -1 };
}
static inline struct verdict v_deny(int err, const char *rule)
{
	return (struct verdict){ .kind = V_DENY, .value = err, .fd = -1, .rule = rule };
}
static inline struct verdict v_value(int64_t val)
{
	return (struct verdict){ .kind = V_VALUE, .value = val, .fd = -1 };
}
/* Negative kernel-style result (-errno) or a value. */
static inline struct verdict v_result(int64_t r)
{
	return r < 0 ? v_error((int)-r) : v_value(r);
}
static inline struct verdict v_fd(int fd, unsigned fd_flags)
{
	return (struct verdict){ .kind = V_FD, .fd = fd, .fd_flags = fd_flags };
}
static inline struct verdict v_continue(void)
{
	return (struct verdict){ .kind = V_CONTINUE, .fd = -1 };
}
static inline struct verdict v_pending(void)
{
	return (struct verdict){ .kind = V_PENDING, .fd = -1 };
}
/* A decision the audit log keeps even at the default level. */
static inline struct verdict v_recorded(struct verdict v, const char *rule)
{
	v.record = true;
	v.rule = rule;
	return v;
}
static inline struct verdict v_kill(const char *rule)
{
	return (struct verdict){ .kind = V_KILL, .fd = -1, .rule = rule };
}
/* Run the exec `plan` describes (a handler of a stopped call only). */
static inline struct verdict v_exec(const struct exec_plan *plan)
{
	return (struct verdict){ .kind = V_EXEC, .fd = -1, .exec = plan };
}

/* Copy the NUL-terminated string at `addr` of task `pid` into buf (len
 * bytes at most).  0, -EFAULT, -ENAMETOOLONG.  No validity check: callers
 * holding a notification use call_read_path. */
int mem_read_str(pid_t pid, uint64_t addr, char *buf, size_t len);
/* Copy a NUL-terminated path argument `argi` into c->path[slot].
 * Returns 0, -EFAULT (unreadable: the caller may be gone), or
 * -ENAMETOOLONG: deny on any error. */
int call_read_path(struct call *c, int argi, int slot);
/* Copy `len` bytes at tracee address `addr` into `buf`.  0 or -EFAULT. */
int call_read(struct call *c, uint64_t addr, void *buf, size_t len);
/* Write `len` bytes to tracee address `addr`.  0 or -EFAULT. */
int call_write(struct call *c, uint64_t addr, const void *buf, size_t len);
/* A copy of the caller's fd `fd` (pidfd_getfd), or -errno. Caller closes. */
int call_getfd(struct call *c, int fd);
/* Close moat's copy of a file the sandbox may share (a copy from
 * call_getfd, a socket of its, an fd it passed).  It may be the last
 * reference (a sandbox thread closed its own meanwhile), and the last
 * close of a socket waits while SO_LINGER holds unsent data, as long as
 * the sandbox chose: a socket is closed by a closer thread, never on the
 * loop. */
void call_putfd(int fd);

/* ---- replies by notification id (a job's answer, given later) ---- */

/* Answer notification `id`: value, or error < 0. */
void notif_reply(int notify_fd, uint64_t id, int64_t val, int error);
/* Answer notification `id` with a new fd: a copy of `fd` (which the
 * caller still owns) is installed with fd_flags (O_CLOEXEC or 0). */
void notif_grant(int notify_fd, uint64_t id, int fd, unsigned fd_flags);
/* Install a copy of `fd` (the caller still owns it) at fd number `at` of
 * the caller of notification `id`, replacing what was there (as dup2), with
 * fd_flags.  The call is not answered.  `at`, or -errno. */
int notif_install(int notify_fd, uint64_t id, int fd, int at, unsigned fd_flags);

#endif
