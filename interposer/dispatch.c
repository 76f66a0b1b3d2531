/* The dispatcher: notification -> handler -> verdict -> reply + audit;
 * and for an exec, ptrace stop -> handler -> verdict -> audit, the verdict
 * handed back to the ptrace side (trace.c), which moves the registers.
 *
 * Only this file replies to the kernel and writes the audit records of
 * calls, so a handler can neither forget the record nor answer twice. */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/stack.h"
#include "core/call.h"
#include "core/job.h"
#include "core/task.h"
#include "fs-emulation/exec.h"
#include "fs-emulation/fs.h"
#include "interposer/dispatch.h"
#include "interposer/sandbox.h"
#include "syscall-table/table.h"

static void reply(struct call *c, int64_t val, int error, uint32_t flags)
{
	struct seccomp_notif_resp resp = {
		.id = c->id,
		.val = val,
		.error = error,
		.flags = flags,
	};
	/* ENOENT: the caller died or was interrupted; nothing to undo for
	 * plain values, and fds are closed by the caller of reply. */
	ioctl(c->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static int64_t grant_fd(struct call *c, int fd, unsigned fd_flags)
{
	struct seccomp_notif_addfd addfd = {
		.id = c->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd = 0,
		.newfd_flags = fd_flags,
	};
	/* ADDFD with SEND installs the fd and answers the call in one step:
	 * a signal cannot land between them and restart an O_CREAT|O_EXCL. */
	int r = ioctl(c->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
	return r < 0 ? -errno : r;
}

void dispatch_done(struct sandbox *sb, struct pending *p, int64_t result)
{
	if (!p->call)
		return;
	/* The thread may be gone by now: its task is looked up again.  It
	 * still waits for the answer, so its stack is still there. */
	struct call *c = p->call;
	c->task = task_find(c->tid);
	c->nstack = 0;
	if (audit_admit(sb->audit, &p->v)) {
		if (c->task && c->task->proc)
			c->nstack = stack_capture(c->task->proc->tgid, c->tid, c->ip, c->stack,
						  STACK_MAX);
		audit_call(sb->audit, c, &p->v, result);
	}
	free(p->call);
	p->call = NULL;
}

void dispatch_jobs_complete(struct sandbox *sb)
{
	struct job *j;
	while ((j = job_next_done())) {
		if (j->finish)
			j->finish(j);
		dispatch_done(sb, &j->pending, j->result < 0 ? -j->err : j->result);
		if (j->grant && j->result >= 0) {
			notif_grant(j->notify_fd, j->id, (int)j->result, j->fd_flags);
			close((int)j->result);
		} else {
			notif_reply(j->notify_fd, j->id, j->result < 0 ? 0 : j->result,
				    j->result < 0 ? -j->err : 0);
		}
		j->release(j);
	}
}

/* Fault injection for the watchdog's tests (tests/compat/run.sh
 * watchdog): MOAT_TEST_STALL=NAME makes the loop wait, in the handler of
 * the first call NAME, on a pipe no one writes — as a call stuck on an
 * object the sandbox controls would; NAME:hard keeps the watchdog's
 * interrupt blocked there too, as an uninterruptible wait would.  moat's
 * own environment, not the sandbox's: only who runs moat can set it. */
static void test_stall(const char *name)
{
	static const char *want;
	static bool hard, read_env, done;
	if (!read_env) {
		read_env = true;
		static char buf[64];
		const char *e = getenv("MOAT_TEST_STALL");
		if (e && snprintf(buf, sizeof buf, "%s", e) < (int)sizeof buf) {
			char *colon = strchr(buf, ':');
			hard = colon && strcmp(colon, ":hard") == 0;
			if (colon)
				*colon = '\0';
			want = buf;
		}
	}
	if (!want || done || strcmp(want, name) != 0)
		return;
	done = true;
	int p[2];
	if (pipe(p) < 0)
		return;
	sigset_t urg, old;
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	if (hard)
		pthread_sigmask(SIG_BLOCK, &urg, &old);
	char b;
	while (read(p[0], &b, 1) < 0 && errno == EINTR && hard)
		;
	if (hard)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	close(p[1]);
}

/* `n` ids after `key` ("\nUid:") in /proc status text `st`.  0 or -1. */
static int status_ids(const char *st, const char *key, unsigned *id, int n, int *got)
{
	const char *p = strstr(st, key);
	*got = 0;
	if (!p)
		return -1;
	p += strlen(key);
	while (*got < n) {
		char *end;
		while (*p == '\t' || *p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			break;
		id[(*got)++] = (unsigned)strtoul(p, &end, 10);
		p = end;
	}
	return 0;
}

/* The ids of a task whose own may have changed (sys_setid), from
 * /proc/TID/status, in moat's (host) terms: moat acts with its fs ids and
 * groups, and its effective ids are what the kernel records for sockets.
 * The namespace's root (`base`) is served as host root (docs/design.md
 * "Root inside").  Unreadable (the task is going): served as the
 * namespace's nobody until a read succeeds (it stays stale). */
static void task_creds_read(struct task *t, const struct creds *sbc)
{
	char path[64], st[4096];
	snprintf(path, sizeof path, "/proc/%d/status", t->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, st, sizeof st - 1);
	if (fd >= 0)
		close(fd);
	unsigned u[4], g[4], gr[CREDS_GROUPS_MAX];
	int nu = 0, ng = 0, ngr;
	if (n > 0)
		st[n] = '\0';
	if (n <= 0 || status_ids(st, "\nUid:", u, 4, &nu) < 0 ||
	    status_ids(st, "\nGid:", g, 4, &ng) < 0 || nu != 4 || ng != 4) {
		/* Fail closed: ids it may not have, as the namespace's nobody. */
		struct creds none = *sbc;
		none.uid = none.id_uid = sbc->base + 65534;
		none.gid = none.id_gid = sbc->base + 65534;
		none.ngroups = 1;
		none.groups[0] = none.gid;
		t->creds = none;
		t->creds_set = true;
		return;
	}
	status_ids(st, "\nGroups:", gr, CREDS_GROUPS_MAX, &ngr);
	struct creds cr = *sbc;
	cr.uid = u[3] == sbc->base ? 0 : u[3];
	cr.gid = g[3] == sbc->base ? 0 : g[3];
	cr.id_uid = u[1];
	cr.id_gid = g[1];
	cr.ngroups = 0;
	for (int i = 0; i < ngr; i++)
		cr.groups[cr.ngroups++] = gr[i] == sbc->base ? 0 : gr[i];
	if (!cr.ngroups) /* none: its own gid stands in (it is checked anyway) */
		cr.groups[cr.ngroups++] = cr.gid;
	t->creds = cr;
	t->creds_set = true;
	t->creds_stale = false;
}

/* What a call is, the same whether it was notified or stopped: its
 * thread, the sandbox's views, its six argument registers, the table
 * entry, empty audit material. */
static void call_fill(struct call *c, struct sandbox *sb, pid_t tid, long nr, const void *args,
		      uint64_t ip)
{
	c->tid = tid;
	c->vfs = sb->vfs;
	c->net = sb->net;
	c->creds = &sb->creds;
	c->machine = &sb->machine;
	c->nr = (int)nr;
	memcpy(c->arg, args, sizeof c->arg);
	c->ip = ip;
	c->npath = 0;
	c->detail[0] = '\0';
	c->path[0][0] = c->path[1][0] = '\0';
	c->resolved[0][0] = c->resolved[1][0] = '\0';
	c->dest.family = 0;
	c->pending = NULL;
	c->nstack = 0;
	c->stopped = false;
	c->exec = NULL;
	c->ent = sc_lookup(nr);
	c->task = task_find(tid);
	/* The ids moat serves it with: its own once it changed them. */
	if (c->task && c->task->creds_stale)
		task_creds_read(c->task, &sb->creds);
	if (c->task && c->task->creds_set)
		c->creds = &c->task->creds;
	creds_call(c->creds);
}

void dispatch_prepare(struct call *c, const struct seccomp_notif *n)
{
	c->pre_arg = 0;
	const struct sc_entry *ent = sc_lookup(n->data.nr);
	if (!ent || ent->disp == SC_DENY || !ent->handler)
		return;
	for (int i = 0; i < 6; i++)
		if (ent->arg[i] == A_PATH) {
			c->pre_rc = mem_read_str((pid_t)n->pid, n->data.args[i], c->pre, PATH_MAX);
			c->pre_arg = i + 1;
			return;
		}
}

/* The answer a verdict gives by value, to send once the lock is down. */
static void answer_later(struct seccomp_notif_resp *later, const struct call *c, int64_t val,
			 int error, uint32_t flags)
{
	*later = (struct seccomp_notif_resp){ .id = c->id,
					      .val = val,
					      .error = error,
					      .flags = flags };
}

void dispatch(struct sandbox *sb, int notify_fd, struct seccomp_notif *n)
{
	static struct call c; /* the loop's own, when it serves calls itself */
	struct seccomp_notif_resp later;
	c.pre_arg = 0;
	if (dispatch_call(sb, &c, notify_fd, n, &later))
		ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &later);
}

bool dispatch_call(struct sandbox *sb, struct call *c, int notify_fd, const struct seccomp_notif *n,
		   struct seccomp_notif_resp *later)
{
	bool deferred = false;
	call_fill(c, sb, (pid_t)n->pid, n->data.nr, n->data.args, n->data.instruction_pointer);
	c->id = n->id;
	c->notify_fd = notify_fd;

	struct verdict v = v_deny(EPERM, "internal.no-verdict");
	if (!c->ent) {
		v = v_deny(ENOSYS, "table.unknown-syscall");
	} else if (!c->task || !c->task->proc) {
		/* Fail closed: a thread we never saw born has no known state. */
		v = v_deny(EPERM, "task.unknown");
	} else if (c->ent->disp == SC_DENY) {
		v = v_deny(c->ent->err, "table.deny");
	} else if (c->ent->handler && c->ent->disp != SC_TRACE) {
		test_stall(c->ent->name);
		v = c->ent->handler(c);
	} else if (c->ent->handler) {
		/* A TRACE call notifies only as the second half of moat's own
		 * exec by fd (sys_exec.c), which its handler checks.  That
		 * half is the exec's, decided and counted at its stop: not a
		 * supervised call of its own, and without a record. */
		v = c->ent->handler(c);
		if (v.kind == V_CONTINUE) {
			reply(c, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
			return false;
		}
	} else {
		/* KERNEL calls never notify; one that does is refused. */
		v = v_deny(EPERM, "table.unexpected-notification");
	}

	unsigned cls = c->ent ? c->ent->cls : SC_SYSTEM;
	sb->supervised[cls]++;
	/* The stack is read while the caller still waits for the answer:
	 * for what the record keeps at any level (rule 10). */
	c->nstack = 0;
	/* Past the audit log's rate or size the record is dropped (and
	 * counted): no stack is read for it. */
	bool rec = v.kind != V_PENDING && audit_admit(sb->audit, &v);
	if (rec && c->task && c->task->proc)
		c->nstack = stack_capture(c->task->proc->tgid, c->tid, c->ip, c->stack, STACK_MAX);
	int64_t result = 0;
	switch (v.kind) {
	case V_FD:
		result = grant_fd(c, v.fd, v.fd_flags);
		if (result >= 0)
			fs_note_grant(c, v.fd); /* after the answer: off the caller's path */
		close(v.fd);
		if (result >= 0)
			proc_note_granted(c->task->proc, (int)result);
		/* ENOENT: the caller is gone.  Anything else (EMFILE...) still
		 * needs an answer, or the caller would wait forever. */
		if (result < 0 && result != -ENOENT)
			reply(c, 0, (int)result, 0);
		break;
	case V_VALUE:
		result = v.value;
		answer_later(later, c, v.value, 0, 0);
		deferred = true;
		break;
	case V_CONTINUE:
		/* Under the lock: a CONTINUE may rest on a check of another
		 * pid (prlimit64, F_SETOWN), which the kernel looks up only
		 * when it runs the call.  Sent here, the window for a reap in
		 * between is the caller's wake-up alone, as it always was
		 * (docs/security.md, class 4). */
		reply(c, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
		break;
	case V_PENDING:
		/* A job answers it when it finishes (net-stub/async.c), and
		 * the record waits for the result. */
		if (sb->audit && c->pending && (c->pending->call = malloc(sizeof *c))) {
			memcpy(c->pending->call, c, sizeof *c);
			c->pending->v = v;
			return false;
		}
		break;
	case V_KILL:
		if (c->task && c->task->proc)
			syscall(SYS_pidfd_send_signal, c->task->proc->pidfd, SIGKILL, NULL, 0);
		else
			kill(c->tid, SIGKILL);
		reply(c, 0, -EPERM, 0);
		result = -EPERM;
		break;
	case V_DENY:
	case V_ERROR:
		result = -v.value;
		answer_later(later, c, 0, (int)-v.value, 0);
		deferred = true;
		break;
	case V_EXEC:
		/* Only a stopped call has registers to rewrite: a handler that
		 * planned an exec for a notification is refused. */
		result = -EPERM;
		reply(c, 0, -EPERM, 0);
		break;
	}
	if (v.kind == V_DENY || v.kind == V_KILL)
		sb->denied[cls]++;
	if (rec)
		audit_call(sb->audit, c, &v, result);
	return deferred;
}

struct verdict dispatch_stop(struct sandbox *sb, struct task *t, long nr, const uint64_t args[6],
			     uint64_t ip, uint64_t sp)
{
	static struct call c;         /* one at a time, as dispatch's */
	static struct exec_plan plan; /* large: never on the stack */
	call_fill(&c, sb, t->tid, nr, args, ip);
	c.pre_arg = 0;
	c.id = 0;
	c.notify_fd = -1;
	c.stopped = true;
	c.exec = &plan;
	c.task = t;
	/* Decide by the syscall, not by the filter's data: a filter the
	 * sandbox installed itself may return TRACE for any call.  One the
	 * table does not serve at a stop is none of ours: our own filter
	 * let it through (a notification or an errno would have won). */
	if (!c.ent || c.ent->disp != SC_TRACE || !c.ent->handler)
		return v_continue();
	struct verdict v = c.ent->handler(&c);
	unsigned cls = c.ent->cls;
	if (v.kind == V_DENY || v.kind == V_KILL)
		sb->denied[cls]++;
	/* Kept as exec at its stop always was: not counted among the
	 * supervised calls (the report counts notifications there), and
	 * recorded only when refused by a rule — at every audit level, an
	 * allowed exec or an ordinary error has no record of its own. */
	if (v.kind != V_DENY || !audit_admit(sb->audit, &v))
		return v;
	/* The stop's own registers (trace.c read them) give the stack
	 * pointer: no /proc/TID/syscall to read for it. */
	c.nstack = stack_capture_sp(t->proc->tgid, t->tid, ip, sp, c.stack, STACK_MAX);
	audit_call(sb->audit, &c, &v, -v.value);
	return v;
}
