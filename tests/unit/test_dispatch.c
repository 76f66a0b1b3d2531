/* The dispatcher (interposer/dispatch.c): notification -> verdict ->
 * reply + audit record + counters.
 *
 * Two ways.  (1) Made-up notifications, answered on /dev/null (the reply
 * ioctl fails, which the dispatcher ignores): the decisions taken before
 * any handler — a number the table does not know, a thread the task table
 * does not know, a table DENY, a notification for a call that should
 * never notify — and a handler that needs no listener (getcwd writes the
 * virtual cwd into this process's own memory).  (2) A real listener: a
 * forked child installs a filter that sends one syscall to user
 * notification and hands the listener over (SCM_RIGHTS); the test
 * receives the real notification and dispatches it, and the child's
 * syscall returns what the verdict said. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "core/task.h"
#include "interposer/dispatch.h"
#include "interposer/sandbox.h"
#include "syscall-table/table.h"

#include "jsonl.h"

#define UNKNOWN_NR 400    /* between rseq (334) and pidfd_send_signal (424): none */
#define NOBODY 0x3ffffff0 /* a tid no task has (above pid_max's limit) */

static struct sandbox sb; /* large: static */
static int logfd = -1;    /* the log, read back */
static int nullfd = -1;   /* a notify fd that is no listener */

static void setup(enum audit_level level)
{
	memset(&sb, 0, sizeof sb);
	sb.notify_fd = -1;
	int fd = memfd_create("audit", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	logfd = dup(fd);
	struct audit_caps caps = { 0 };
	sb.audit = audit_open(fd, level, &caps);
	ck_assert_ptr_nonnull(sb.audit);
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(nullfd, 0);
}

static void fake(int nr, pid_t tid, uint64_t a0, uint64_t a1)
{
	struct seccomp_notif n = {
		.id = 1,
		.pid = (uint32_t)tid,
		.data = { .nr = nr, .arch = AUDIT_ARCH_X86_64, .args = { a0, a1 } },
	};
	dispatch(&sb, nullfd, &n);
}

/* Process `pid` known to the task table, with a virtual cwd of its own. */
static struct proc *known(pid_t pid, const char *cwd)
{
	struct fsctx *fs = fsctx_new(cwd);
	ck_assert_ptr_nonnull(fs);
	struct proc *p = proc_new(pid, fs, true);
	free(fs); /* copied: the proc has its own */
	ck_assert_ptr_nonnull(p);
	snprintf(p->exe, sizeof p->exe, "/usr/bin/victim");
	struct task *t = task_add(pid, p);
	ck_assert_ptr_nonnull(t);
	t->linked = true;
	return p;
}

/* The one record the dispatch wrote, checked against what it decided. */
static void expect(const struct jrec *r, const char *syscall, int nr, int64_t result,
		   const char *err, const char *decision, const char *rule)
{
	ck_assert_str_eq(jstr(r, "syscall"), syscall);
	ck_assert_int_eq(jint(r, "nr"), nr);
	ck_assert_int_eq(jint(r, "result"), result);
	if (err)
		ck_assert_str_eq(jstr(r, "errno"), err);
	else
		ck_assert_ptr_null(jget(r, "errno"));
	ck_assert_str_eq(jstr(r, "decision"), decision);
	if (rule)
		ck_assert_str_eq(jstr(r, "rule"), rule);
	else
		ck_assert_ptr_null(jget(r, "rule"));
}

static void counters(unsigned cls, uint64_t supervised, uint64_t denied)
{
	for (unsigned k = 0; k < SC_NCLASS; k++) {
		ck_assert_msg(sb.supervised[k] == (k == cls ? supervised : 0),
			      "supervised[%s] = %llu", sc_class_name(k),
			      (unsigned long long)sb.supervised[k]);
		ck_assert_msg(sb.denied[k] == (k == cls ? denied : 0), "denied[%s] = %llu",
			      sc_class_name(k), (unsigned long long)sb.denied[k]);
	}
}

/* ---- (1) made-up notifications ---- */

START_TEST(test_unknown_number)
{
	setup(AUDIT_DENIALS);
	ck_assert_ptr_null(sc_lookup(UNKNOWN_NR));
	known(getpid(), "/");
	/* known caller or not, in the table's gaps or far outside it */
	static const int nrs[] = { UNKNOWN_NR, -1, SC_NR_MAX, 0x7fffffff, 0x40000000 | 1 };
	for (size_t i = 0; i < sizeof nrs / sizeof nrs[0]; i++)
		fake(nrs[i], i % 2 ? NOBODY : getpid(), 0, 0);
	struct jrec *r;
	int n = jlog_read(logfd, &r);
	ck_assert_int_eq(n, 5);
	for (int i = 0; i < n; i++)
		expect(&r[i], "unknown", nrs[i], -ENOSYS, "ENOSYS", "deny",
		       "table.unknown-syscall");
	jlog_free(r, n);
	counters(SC_SYSTEM, 5, 5);
}
END_TEST

START_TEST(test_unknown_task)
{
	setup(AUDIT_SUPERVISED);
	/* a DENY entry of its own errno (ENOSYS): the unknown thread's EPERM
	 * comes first */
	fake(__NR_shmget, NOBODY, 0, 4096);
	/* a thread held at its first stop: in the table, no process state */
	ck_assert_ptr_nonnull(task_add(NOBODY - 1, NULL));
	fake(__NR_shmget, NOBODY - 1, 0, 4096);
	/* a handled call: the handler never runs (it would write the cwd) */
	char buf[64] = "untouched";
	fake(__NR_getcwd, getpid(), (uintptr_t)buf, sizeof buf);
	ck_assert_str_eq(buf, "untouched");
	struct jrec *r;
	int n = jlog_read(logfd, &r);
	ck_assert_int_eq(n, 3);
	expect(&r[0], "shmget", __NR_shmget, -EPERM, "EPERM", "deny", "task.unknown");
	expect(&r[1], "shmget", __NR_shmget, -EPERM, "EPERM", "deny", "task.unknown");
	expect(&r[2], "getcwd", __NR_getcwd, -EPERM, "EPERM", "deny", "task.unknown");
	ck_assert_int_eq(jint(&r[0], "tid"), NOBODY);
	ck_assert_int_eq(jint(&r[0], "pid"), NOBODY); /* no process known: the tid */
	jlog_free(r, n);
	ck_assert_uint_eq(sb.supervised[SC_IPC], 2);
	ck_assert_uint_eq(sb.denied[SC_IPC], 2);
	ck_assert_uint_eq(sb.supervised[SC_FILE], 1);
	ck_assert_uint_eq(sb.denied[SC_FILE], 1);
}
END_TEST

START_TEST(test_table_deny)
{
	setup(AUDIT_DENIALS);
	known(getpid(), "/");
	fake(__NR_add_key, getpid(), 0, 0); /* DENY(ENOSYS) */
	fake(__NR_ptrace, getpid(), 16, 1); /* DENY(EPERM) */
	fake(__NR_syslog, getpid(), 10, 0); /* DENY(EPERM) */
	struct jrec *r;
	int n = jlog_read(logfd, &r);
	ck_assert_int_eq(n, 3);
	expect(&r[0], "add_key", __NR_add_key, -ENOSYS, "ENOSYS", "deny", "table.deny");
	expect(&r[1], "ptrace", __NR_ptrace, -EPERM, "EPERM", "deny", "table.deny");
	expect(&r[2], "syslog", __NR_syslog, -EPERM, "EPERM", "deny", "table.deny");
	ck_assert_int_eq(jint(&r[0], "pid"), getpid());
	ck_assert_str_eq(jstr(&r[0], "exe"), "/usr/bin/victim");
	jlog_free(r, n);
	ck_assert_uint_eq(sb.supervised[SC_PROCESS], 1);
	ck_assert_uint_eq(sb.denied[SC_PROCESS], 1);
	ck_assert_uint_eq(sb.supervised[SC_SYSTEM], 2);
	ck_assert_uint_eq(sb.denied[SC_SYSTEM], 2);
}
END_TEST

START_TEST(test_unexpected_notification)
{
	/* KERNEL calls never notify, and a TRACE call only as the second
	 * half of an exec by fd its stop planned: one that does is refused */
	setup(AUDIT_DENIALS);
	known(getpid(), "/");
	fake(__NR_getpid, getpid(), 0, 0);
	fake(__NR_execve, getpid(), 0, 0);
	struct jrec *r;
	int n = jlog_read(logfd, &r);
	ck_assert_int_eq(n, 2);
	expect(&r[0], "getpid", __NR_getpid, -EPERM, "EPERM", "deny",
	       "table.unexpected-notification");
	expect(&r[1], "execve", __NR_execve, -EPERM, "EPERM", "deny", "exec.not-planned");
	jlog_free(r, n);
	counters(SC_PROCESS, 2, 2);
}
END_TEST

START_TEST(test_handler_runs)
{
	/* getcwd answers from the process's virtual cwd, written into the
	 * caller's memory: here the test's own */
	setup(AUDIT_SUPERVISED);
	struct proc *p = known(getpid(), "/virtual/dir");
	char buf[64];
	memset(buf, 'z', sizeof buf);
	fake(__NR_getcwd, getpid(), (uintptr_t)buf, sizeof buf);
	ck_assert_str_eq(buf, "/virtual/dir");
	/* too small: ERANGE, an emulated error and no denial */
	char small[4] = "abc";
	fake(__NR_getcwd, getpid(), (uintptr_t)small, sizeof small);
	ck_assert_str_eq(small, "abc");
	/* the cwd removed: ENOENT, as Linux */
	p->fs->gone = true;
	fake(__NR_getcwd, getpid(), (uintptr_t)buf, sizeof buf);
	struct jrec *r;
	int n = jlog_read(logfd, &r);
	ck_assert_int_eq(n, 3);
	expect(&r[0], "getcwd", __NR_getcwd, (int64_t)strlen("/virtual/dir") + 1, NULL, "emulate",
	       NULL);
	expect(&r[1], "getcwd", __NR_getcwd, -ERANGE, "ERANGE", "emulate", NULL);
	expect(&r[2], "getcwd", __NR_getcwd, -ENOENT, "ENOENT", "emulate", NULL);
	jlog_free(r, n);
	counters(SC_FILE, 3, 0);
}
END_TEST

START_TEST(test_level_and_no_log)
{
	/* at the default level an emulated call leaves no record, a denial
	 * does; without a log, both are still counted */
	setup(AUDIT_DENIALS);
	known(getpid(), "/v");
	char buf[16];
	fake(__NR_getcwd, getpid(), (uintptr_t)buf, sizeof buf);
	ck_assert_str_eq(buf, "/v");
	fake(__NR_ptrace, getpid(), 0, 0);
	struct jrec *r;
	int n = jlog_read(logfd, &r);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(jstr(r, "syscall"), "ptrace");
	jlog_free(r, n);
	audit_close(sb.audit);
	sb.audit = NULL;
	fake(__NR_ptrace, getpid(), 0, 0);
	fake(__NR_getcwd, getpid(), (uintptr_t)buf, sizeof buf);
	ck_assert_uint_eq(sb.supervised[SC_PROCESS], 2);
	ck_assert_uint_eq(sb.denied[SC_PROCESS], 2);
	ck_assert_uint_eq(sb.supervised[SC_FILE], 2);
	ck_assert_uint_eq(sb.denied[SC_FILE], 0);
}
END_TEST

/* ---- (2) a real listener ---- */

/* What the child's syscall returned. */
struct outcome {
	long ret;
	int err;
	char buf[256];
};

typedef void (*child_call)(struct outcome *o);

struct child {
	pid_t pid;
	int sock; /* the test's end: the listener, then the outcome */
	int listener;
};

static void child_main(int sock, int nr, child_call call)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(2);
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			      SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		_exit(3);
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.b,
			    .msg_controllen = sizeof u.b };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	if (sendmsg(sock, &m, 0) != 1)
		_exit(4);
	close(fd);
	struct outcome o = { 0 };
	call(&o);
	_exit(write(sock, &o, sizeof o) == (ssize_t)sizeof o ? 0 : 5);
}

/* A child whose syscall `nr` goes to the listener the test now holds. */
static struct child child_start(int nr, child_call call)
{
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	struct child ch = { .pid = fork() };
	ck_assert_int_ge(ch.pid, 0);
	if (ch.pid == 0) {
		close(sv[0]);
		child_main(sv[1], nr, call);
	}
	close(sv[1]);
	ch.sock = sv[0];
	char byte;
	struct iovec iov = { &byte, 1 };
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.b,
			    .msg_controllen = sizeof u.b };
	struct pollfd pf = { ch.sock, POLLIN, 0 };
	ck_assert_msg(poll(&pf, 1, 2000) == 1, "the child sent no listener");
	ck_assert_int_eq(recvmsg(ch.sock, &m, MSG_CMSG_CLOEXEC), 1);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	ck_assert_msg(cm && cm->cmsg_type == SCM_RIGHTS, "no listener in the message");
	memcpy(&ch.listener, CMSG_DATA(cm), sizeof ch.listener);
	return ch;
}

/* Receive the child's one notification and dispatch it; then what its
 * syscall returned. */
static struct outcome child_serve(struct child *ch, int nr)
{
	struct pollfd pf = { ch->listener, POLLIN, 0 };
	ck_assert_msg(poll(&pf, 1, 2000) == 1, "no notification");
	struct seccomp_notif n;
	memset(&n, 0, sizeof n); /* the kernel wants it zeroed */
	ck_assert_int_eq(ioctl(ch->listener, SECCOMP_IOCTL_NOTIF_RECV, &n), 0);
	ck_assert_int_eq(n.data.nr, nr);
	ck_assert_int_eq((pid_t)n.pid, ch->pid);
	dispatch(&sb, ch->listener, &n);

	struct outcome o;
	struct pollfd po = { ch->sock, POLLIN, 0 };
	ck_assert_msg(poll(&po, 1, 2000) == 1, "the child's call was never answered");
	ck_assert_int_eq(read(ch->sock, &o, sizeof o), (ssize_t)sizeof o);
	int status;
	ck_assert_int_eq(waitpid(ch->pid, &status, 0), ch->pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	close(ch->listener);
	close(ch->sock);
	return o;
}

static void call_unknown(struct outcome *o)
{
	o->ret = syscall(UNKNOWN_NR, 0, 0);
	o->err = errno;
}

static void call_add_key(struct outcome *o)
{
	o->ret = syscall(SYS_add_key, "user", "moat-test", "x", 1, -2 /* the process keyring */);
	o->err = errno;
}

static void call_uname(struct outcome *o)
{
	struct utsname u;
	memset(&u, 'z', sizeof u);
	o->ret = syscall(SYS_uname, &u);
	o->err = errno;
	snprintf(o->buf, sizeof o->buf, "%s|%s", u.nodename, u.domainname);
}

static void call_getcwd(struct outcome *o)
{
	o->ret = syscall(SYS_getcwd, o->buf, sizeof o->buf);
	o->err = errno;
}

START_TEST(test_live_unknown_number)
{
	setup(AUDIT_DENIALS);
	struct child ch = child_start(UNKNOWN_NR, call_unknown);
	struct outcome o = child_serve(&ch, UNKNOWN_NR);
	ck_assert_int_eq(o.ret, -1);
	ck_assert_int_eq(o.err, ENOSYS);
	struct jrec *r;
	ck_assert_int_eq(jlog_read(logfd, &r), 1);
	expect(r, "unknown", UNKNOWN_NR, -ENOSYS, "ENOSYS", "deny", "table.unknown-syscall");
	ck_assert_int_eq(jint(r, "tid"), ch.pid);
	jlog_free(r, 1);
}
END_TEST

START_TEST(test_live_unknown_task)
{
	/* in the kernel add_key would make a key */
	setup(AUDIT_DENIALS);
	struct child ch = child_start(__NR_add_key, call_add_key);
	struct outcome o = child_serve(&ch, __NR_add_key);
	ck_assert_int_eq(o.ret, -1);
	ck_assert_int_eq(o.err, EPERM);
	struct jrec *r;
	ck_assert_int_eq(jlog_read(logfd, &r), 1);
	expect(r, "add_key", __NR_add_key, -EPERM, "EPERM", "deny", "task.unknown");
	ck_assert_ptr_null(jget(r, "stack")); /* no process known: not read */
	jlog_free(r, 1);
}
END_TEST

START_TEST(test_live_table_deny)
{
	setup(AUDIT_DENIALS);
	struct child ch = child_start(__NR_add_key, call_add_key);
	known(ch.pid, "/");
	struct outcome o = child_serve(&ch, __NR_add_key);
	ck_assert_int_eq(o.ret, -1);
	ck_assert_int_eq(o.err, ENOSYS);
	struct jrec *r;
	ck_assert_int_eq(jlog_read(logfd, &r), 1);
	expect(r, "add_key", __NR_add_key, -ENOSYS, "ENOSYS", "deny", "table.deny");
	ck_assert_int_eq(jint(r, "pid"), ch.pid);
	ck_assert_str_eq(jstr(r, "exe"), "/usr/bin/victim");
	/* read while the caller waited: innermost, glibc's syscall() */
	const struct jv *st = jget(r, "stack");
	ck_assert_msg(st && st->type == 'a' && st->nitems >= 1, "a denial without a stack");
	ck_assert_msg(strncmp(st->items[0].s, "syscall+", 8) == 0, "frame 0: %s", st->items[0].s);
	jlog_free(r, 1);
	counters(SC_SYSTEM, 1, 1);
}
END_TEST

START_TEST(test_live_handlers)
{
	/* uname: the sandbox's nodename, not the host's */
	setup(AUDIT_SUPERVISED);
	struct child ch = child_start(__NR_uname, call_uname);
	known(ch.pid, "/");
	struct outcome o = child_serve(&ch, __NR_uname);
	ck_assert_int_eq(o.ret, 0);
	ck_assert_str_eq(o.buf, "moat|(none)");
	/* getcwd: the process's virtual cwd */
	ch = child_start(__NR_getcwd, call_getcwd);
	known(ch.pid, "/virtual/dir");
	o = child_serve(&ch, __NR_getcwd);
	ck_assert_int_eq(o.ret, (long)strlen("/virtual/dir") + 1);
	ck_assert_str_eq(o.buf, "/virtual/dir");
	struct jrec *r;
	ck_assert_int_eq(jlog_read(logfd, &r), 2);
	expect(&r[0], "uname", __NR_uname, 0, NULL, "emulate", NULL);
	expect(&r[1], "getcwd", __NR_getcwd, (int64_t)strlen("/virtual/dir") + 1, NULL, "emulate",
	       NULL);
	jlog_free(r, 2);
	ck_assert_uint_eq(sb.supervised[SC_SYSTEM], 1);
	ck_assert_uint_eq(sb.supervised[SC_FILE], 1);
	ck_assert_uint_eq(sb.denied[SC_SYSTEM] + sb.denied[SC_FILE], 0);
}
END_TEST

static Suite *dispatch_suite(void)
{
	Suite *s = suite_create("dispatch");
	TCase *tc = tcase_create("made-up");
	tcase_add_test(tc, test_unknown_number);
	tcase_add_test(tc, test_unknown_task);
	tcase_add_test(tc, test_table_deny);
	tcase_add_test(tc, test_unexpected_notification);
	tcase_add_test(tc, test_handler_runs);
	tcase_add_test(tc, test_level_and_no_log);
	suite_add_tcase(s, tc);
	TCase *live = tcase_create("listener");
	tcase_add_test(live, test_live_unknown_number);
	tcase_add_test(live, test_live_unknown_task);
	tcase_add_test(live, test_live_table_deny);
	tcase_add_test(live, test_live_handlers);
	suite_add_tcase(s, live);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dispatch_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
