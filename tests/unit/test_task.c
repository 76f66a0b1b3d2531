/* The task table (core/task.c): threads by tid, the processes they share,
 * fs contexts shared or copied, the record of granted fds, and the
 * end-of-run kill of threads never linked.
 *
 * The table is global: each test runs in its own process (CK_FORK=yes)
 * and starts empty.  proc_new opens a pidfd, so processes are real ones:
 * the test's own, or forked children. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/task.h"

/* ---- helpers ---- */

static struct proc *proc_here(const char *cwd)
{
	struct fsctx *fs = fsctx_new(cwd);
	ck_assert_ptr_nonnull(fs);
	struct proc *p = proc_new(getpid(), fs, true);
	free(fs); /* fd -1: nothing else to release */
	ck_assert_ptr_nonnull(p);
	return p;
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* The pid a pidfd refers to, from its fdinfo. */
static pid_t pidfd_pid(int fd)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "re");
	ck_assert_ptr_nonnull(f);
	pid_t pid = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

/* A child that waits to be killed.  Born with the default dispositions:
 * check's handler of the test process kills the whole group. */
static pid_t sleeper(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGALRM };
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old[3];
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(sigaction(sigs[i], &dfl, &old[i]), 0);
	pid_t c = fork();
	if (c == 0)
		for (;;)
			pause();
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	ck_assert_int_ge(c, 0);
	return c;
}

/* How `pid` ended, waiting up to `ms` milliseconds; 0 while it lives. */
static int ended(pid_t pid, int ms)
{
	int status;
	for (int i = 0; i < ms; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		ck_assert_int_ge(r, 0);
		if (r == pid)
			return status;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return 0;
}

/* ---- the table ---- */

START_TEST(test_add_find_remove)
{
	ck_assert_uint_eq(task_count(), 0);
	ck_assert_ptr_null(task_find(100));
	struct task *a = task_add(100, NULL);
	struct task *b = task_add(101, NULL);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_eq(task_find(100), a);
	ck_assert_ptr_eq(task_find(101), b);
	ck_assert_int_eq(a->tid, 100);
	ck_assert(!a->linked && !a->held && !a->started);
	ck_assert_uint_eq(task_count(), 2);
	task_remove(100);
	ck_assert_ptr_null(task_find(100));
	ck_assert_ptr_eq(task_find(101), b);
	ck_assert_uint_eq(task_count(), 1);
	task_remove(100); /* unknown: nothing */
	task_remove(999);
	ck_assert_uint_eq(task_count(), 1);
	task_remove(101);
	ck_assert_uint_eq(task_count(), 0);
}
END_TEST

START_TEST(test_many_share_buckets)
{
	/* more tasks than buckets: chains, and removal from their middle */
	enum { N = 5000 };
	static struct task *t[N];
	for (int i = 0; i < N; i++)
		ck_assert_ptr_nonnull(t[i] = task_add(1000 + i * 7, NULL));
	ck_assert_uint_eq(task_count(), N);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_eq(task_find(1000 + i * 7), t[i]);
	for (int i = 0; i < N; i += 2)
		task_remove(1000 + i * 7);
	ck_assert_uint_eq(task_count(), N / 2);
	for (int i = 0; i < N; i++) {
		if (i % 2)
			ck_assert_ptr_eq(task_find(1000 + i * 7), t[i]);
		else
			ck_assert_ptr_null(task_find(1000 + i * 7));
		ck_assert_ptr_null(task_find(1001 + i * 7));
	}
	for (int i = 1; i < N; i += 2)
		task_remove(1000 + i * 7);
	ck_assert_uint_eq(task_count(), 0);
}
END_TEST

START_TEST(test_rekey)
{
	/* exec by a non-leader thread: it takes the leader's tid */
	struct proc *p = proc_here("/");
	struct task *leader = task_add(getpid(), p);
	struct task *thread = task_add(getpid() + 1000000, p);
	thread->linked = leader->linked = true;
	ck_assert_int_eq(p->refs, 2);
	task_remove(getpid());
	ck_assert_int_eq(p->refs, 1);
	/* the leader's tid gone from the table: the process still found */
	ck_assert_ptr_eq(proc_find(getpid()), p);
	task_rekey(thread, getpid());
	ck_assert_int_eq(thread->tid, getpid());
	ck_assert_ptr_eq(task_find(getpid()), thread);
	ck_assert_ptr_null(task_find(getpid() + 1000000));
	ck_assert_ptr_eq(proc_find(getpid()), p);
	ck_assert_uint_eq(task_count(), 1);
	/* re-keyed out of a chain (its head, middle, tail: the last added,
	 * one in between, the first) into another, the rest of both kept */
	enum { N = 3000 };
	static struct task *others[N];
	static const int moved[] = { N - 1, N / 2, 0 };
	for (int i = 0; i < N; i++)
		others[i] = task_add(5000000 + i, NULL);
	for (int k = 0; k < 3; k++)
		task_rekey(others[moved[k]], 7000000 + k);
	for (int k = 0; k < 3; k++) {
		ck_assert_ptr_null(task_find(5000000 + moved[k]));
		ck_assert_ptr_eq(task_find(7000000 + k), others[moved[k]]);
	}
	for (int i = 0; i < N; i++)
		if (i != N - 1 && i != N / 2 && i != 0)
			ck_assert_ptr_eq(task_find(5000000 + i), others[i]);
	task_remove(7000001);
	ck_assert_ptr_null(task_find(7000001));
	ck_assert_ptr_eq(task_find(7000000), others[N - 1]);
	ck_assert_uint_eq(task_count(), N);
}
END_TEST

/* ---- processes ---- */

START_TEST(test_proc_refs)
{
	struct proc *p = proc_here("/w");
	ck_assert_int_eq(p->tgid, getpid());
	ck_assert_int_eq(p->refs, 0);
	ck_assert_int_ge(p->pidfd, 0);
	ck_assert_int_eq(pidfd_pid(p->pidfd), getpid());
	int pidfd = p->pidfd;
	ck_assert_ptr_nonnull(task_add(getpid(), p));
	ck_assert_ptr_nonnull(task_add(getpid() + 1, p));
	ck_assert_ptr_nonnull(task_add(getpid() + 2, p));
	ck_assert_int_eq(p->refs, 3);
	task_remove(getpid() + 1);
	task_remove(getpid());
	ck_assert_int_eq(p->refs, 1);
	ck_assert(fd_open(pidfd));
	ck_assert_ptr_eq(proc_find(getpid()), p);
	/* the last thread gone: the process and its pidfd with it */
	task_remove(getpid() + 2);
	ck_assert(!fd_open(pidfd));
	ck_assert_ptr_null(proc_find(getpid()));
}
END_TEST

/* A leader's exit takes every task left in its process: a tid an exec
 * freed and then failed with (de_thread, no exec event) names nobody of
 * the sandbox's; another process's tasks stay.  The process itself (here
 * the test's, still there as an unreaped zombie would be) stays found. */
START_TEST(test_leader_exit_takes_stale_tids)
{
	struct proc *p = proc_here("/");
	struct proc *q = proc_new(getppid(), p->fs, true);
	ck_assert_ptr_nonnull(q);
	pid_t me = getpid();
	ck_assert_ptr_nonnull(task_add(me, p));
	ck_assert_ptr_nonnull(task_add(me + 7, p)); /* the freed tid */
	ck_assert_ptr_nonnull(task_add(me + 9, q));
	unsigned before = task_count();
	ck_assert(task_is(me, me + 7));
	ck_assert(!task_is(me, me + 9));
	int pidfd = p->pidfd;
	task_remove_leader(me);
	ck_assert_uint_eq(task_count(), before - 2);
	ck_assert_ptr_null(task_find(me + 7));
	ck_assert(!task_is(me, me + 7));
	ck_assert(fd_open(pidfd));
	ck_assert_ptr_eq(proc_find(me), p);
	ck_assert(p->zombie);
	ck_assert_ptr_nonnull(task_find(me + 9));
	/* a thread that is no leader: itself alone */
	task_remove_leader(me + 9);
	ck_assert_ptr_null(task_find(me + 9));
	ck_assert_uint_eq(task_count(), before - 3);
}
END_TEST

/* A child that exited: kept (a zombie) while its parent has not reaped
 * it, found and listed; gone with its pidfd once reaped.  One the parent
 * reaped before moat learnt of the exit is gone at once. */
struct count {
	pid_t pid;
	int n;
};

static int count_proc(struct proc *p, void *arg)
{
	struct count *c = arg;
	c->n += p->tgid == c->pid;
	return 0;
}

START_TEST(test_zombie_until_reaped)
{
	struct proc *here = proc_here("/");
	for (int reap_first = 0; reap_first < 2; reap_first++) {
		pid_t kid = fork();
		ck_assert_int_ge(kid, 0);
		if (kid == 0)
			_exit(3);
		struct proc *p = proc_new(kid, here->fs, true);
		ck_assert_ptr_nonnull(p);
		ck_assert_ptr_nonnull(task_add(kid, p));
		siginfo_t si;
		/* exited, not reaped: what moat sees at the exit event */
		ck_assert_int_eq(waitid(P_PID, (id_t)kid, &si, WEXITED | WNOWAIT), 0);
		int pidfd = p->pidfd;
		if (reap_first)
			ck_assert_int_eq(waitpid(kid, NULL, 0), kid);
		task_remove_leader(kid);
		ck_assert_ptr_null(task_find(kid));
		if (reap_first) {
			ck_assert(!fd_open(pidfd));
			ck_assert_ptr_null(proc_find(kid));
			continue;
		}
		ck_assert_ptr_eq(proc_find(kid), p);
		ck_assert(p->zombie);
		struct count n = { kid, 0 };
		proc_foreach(count_proc, &n);
		ck_assert_int_eq(n.n, 1);
		ck_assert_int_eq(waitpid(kid, NULL, 0), kid);
		ck_assert_ptr_null(proc_find(kid));
		ck_assert(!fd_open(pidfd));
	}
}
END_TEST

START_TEST(test_proc_new_of_nobody)
{
	struct fsctx *fs = fsctx_new("/");
	errno = 0;
	ck_assert_ptr_null(proc_new(0x3ffffff0, fs, true));
	ck_assert_int_ne(errno, 0);
	ck_assert_ptr_null(proc_new(0x3ffffff0, fs, false));
	ck_assert_int_eq(fs->refs, 1); /* nothing taken on failure */
	free(fs);
}
END_TEST

START_TEST(test_proc_of_child)
{
	pid_t c = sleeper();
	struct fsctx *fs = fsctx_new("/");
	struct proc *p = proc_new(c, fs, false);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pidfd_pid(p->pidfd), c);
	ck_assert_ptr_nonnull(task_add(c, p));
	/* task_signal reaches the thread (through a pidfd of the thread) */
	struct task *t = task_find(c);
	ck_assert_int_eq(task_signal(t, SIGTERM), 0);
	int st = ended(c, 1000);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %#x", st);
	task_remove(c);
	ck_assert_int_eq(fs->refs, 1);
	free(fs);
}
END_TEST

struct seen {
	struct proc *p[8];
	int n, stop_at;
};

static int visit(struct proc *x, void *arg)
{
	struct seen *v = arg;
	ck_assert_int_lt(v->n, 8);
	v->p[v->n++] = x;
	return v->n == v->stop_at ? 7 : 0;
}

START_TEST(test_foreach)
{
	/* each process once, however many threads and wherever they hash;
	 * threads not linked yet do not count */
	struct proc *p = proc_here("/"), *q = proc_here("/"), *r = proc_here("/");
	for (pid_t tid = 10; tid < 40; tid++)
		task_add(tid, p)->linked = true;
	task_add(2000, q)->linked = true;
	task_add(2001, q)->linked = true;
	task_add(2002, q); /* a new thread of q, not linked yet */
	task_add(3000, r); /* r: no linked thread */
	task_add(3001, NULL);
	struct seen s = { 0 };
	ck_assert_int_eq(proc_foreach(visit, &s), 0);
	ck_assert_int_eq(s.n, 2);
	ck_assert((s.p[0] == p && s.p[1] == q) || (s.p[0] == q && s.p[1] == p));
	/* stops at the first nonzero, and says it */
	s = (struct seen){ .stop_at = 1 };
	ck_assert_int_eq(proc_foreach(visit, &s), 7);
	ck_assert_int_eq(s.n, 1);
}
END_TEST

/* ---- fs contexts ---- */

START_TEST(test_fsctx_new)
{
	struct fsctx *fs = fsctx_new("/some/where");
	ck_assert_ptr_nonnull(fs);
	ck_assert_int_eq(fs->refs, 1);
	ck_assert_int_eq(fs->fd, -1);
	ck_assert(!fs->gone);
	ck_assert_int_eq(fs->umask, 022);
	ck_assert_str_eq(fs->cwd, "/some/where");
	free(fs);
}
END_TEST

START_TEST(test_fsctx_share_and_copy)
{
	struct fsctx *fs = fsctx_new("/w/src");
	fs->fd = open("/", O_PATH | O_CLOEXEC);
	ck_assert_int_ge(fs->fd, 0);
	fs->umask = 077;
	fs->gone = true;
	/* CLONE_FS: the same context */
	struct proc *shared = proc_new(getpid(), fs, false);
	ck_assert_ptr_eq(shared->fs, fs);
	ck_assert_int_eq(fs->refs, 2);
	/* fork: a copy of it, an fd of its own on the same directory */
	struct proc *copy = proc_new(getpid(), fs, true);
	ck_assert_ptr_ne(copy->fs, fs);
	ck_assert_int_eq(fs->refs, 2);
	ck_assert_int_eq(copy->fs->refs, 1);
	ck_assert_str_eq(copy->fs->cwd, "/w/src");
	ck_assert_int_eq(copy->fs->umask, 077);
	ck_assert(copy->fs->gone);
	ck_assert_int_ge(copy->fs->fd, 0);
	ck_assert_int_ne(copy->fs->fd, fs->fd);
	struct stat a, b;
	ck_assert_int_eq(fstat(fs->fd, &a), 0);
	ck_assert_int_eq(fstat(copy->fs->fd, &b), 0);
	ck_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	ck_assert(fcntl(copy->fs->fd, F_GETFD) & FD_CLOEXEC);
	/* after the fork, a chdir of one is not the other's */
	snprintf(copy->fs->cwd, sizeof copy->fs->cwd, "/elsewhere");
	copy->fs->umask = 0;
	ck_assert_str_eq(fs->cwd, "/w/src");
	ck_assert_int_eq(fs->umask, 077);
	snprintf(shared->fs->cwd, sizeof shared->fs->cwd, "/w/moved");
	ck_assert_str_eq(fs->cwd, "/w/moved");
	/* no context to copy: a fresh one at / */
	struct proc *fresh = proc_new(getpid(), NULL, true);
	ck_assert_str_eq(fresh->fs->cwd, "/");
	ck_assert_int_eq(fresh->fs->fd, -1);
	ck_assert_int_eq(fresh->fs->umask, 022);

	/* the last reference closes the context's fd */
	int shared_fd = fs->fd, copy_fd = copy->fs->fd;
	task_add(1, shared);
	task_add(2, copy);
	task_add(3, fresh);
	fs->refs--; /* the test's own reference (fsctx_put is the table's) */
	task_remove(2);
	ck_assert(!fd_open(copy_fd));
	ck_assert(fd_open(shared_fd));
	task_remove(1);
	ck_assert(!fd_open(shared_fd));
	task_remove(3);
}
END_TEST

/* ---- granted fds ---- */

START_TEST(test_granted)
{
	struct proc *p = proc_here("/");
	ck_assert_uint_eq(p->ngranted, 0);
	ck_assert(!proc_fd_granted(p, 0));
	ck_assert(!proc_fd_granted(p, 3));
	ck_assert(!proc_fd_granted(p, -1));
	proc_note_granted(p, -1); /* ignored */
	ck_assert_uint_eq(p->ngranted, 0);

	static const int fds[] = { 0, 3, 7, 8, 9, 15, 16, 1023 };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		proc_note_granted(p, fds[i]);
	ck_assert_uint_eq(p->ngranted, 128); /* the first allocation: 1024 fds */
	for (int fd = 0; fd < 1100; fd++) {
		bool want = false;
		for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
			want |= fds[i] == fd;
		ck_assert_msg(proc_fd_granted(p, fd) == want, "fd %d", fd);
	}
	ck_assert(!proc_fd_granted(p, -8)); /* never read before the array */
	ck_assert(!proc_fd_granted(p, 1 << 30));

	/* growth: doubled until it holds the fd, the old marks kept */
	proc_note_granted(p, 1024);
	ck_assert_uint_eq(p->ngranted, 256);
	proc_note_granted(p, 100000);
	ck_assert_uint_eq(p->ngranted, 16384);
	proc_note_granted(p, (1 << 20) - 1); /* the kernel's nr_open ceiling */
	ck_assert_uint_eq(p->ngranted, 131072);
	ck_assert(proc_fd_granted(p, 1024));
	ck_assert(proc_fd_granted(p, 100000));
	ck_assert(proc_fd_granted(p, (1 << 20) - 1));
	ck_assert(!proc_fd_granted(p, 99999) && !proc_fd_granted(p, 100001));
	ck_assert(!proc_fd_granted(p, (1 << 20) - 2));
	ck_assert(!proc_fd_granted(p, 1 << 20));
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		ck_assert(proc_fd_granted(p, fds[i]));
	/* the space grown into is clear */
	for (int fd = 1025; fd < 100000; fd++)
		if (proc_fd_granted(p, fd))
			ck_abort_msg("fd %d granted, never noted", fd);

	/* exec: all forgotten, the space kept; noted again after */
	proc_forget_granted(p);
	ck_assert_uint_eq(p->ngranted, 131072);
	for (int fd = 0; fd < (1 << 20); fd++)
		if (proc_fd_granted(p, fd))
			ck_abort_msg("fd %d still granted after exec", fd);
	proc_note_granted(p, 3);
	ck_assert(proc_fd_granted(p, 3));
	ck_assert(!proc_fd_granted(p, 1024));
	/* a process of its own: a fork child's grants are not its parent's */
	struct proc *q = proc_here("/");
	ck_assert(!proc_fd_granted(q, 3));
	task_add(1, p);
	task_add(2, q);
	task_remove(1);
	task_remove(2);
}
END_TEST

/* ---- the end of a run ---- */

START_TEST(test_kill_unlinked)
{
	pid_t held = sleeper(), linked = sleeper();
	task_add(held, NULL)->held = true; /* its parent's event never seen */
	struct proc *p = proc_new(linked, &(struct fsctx){ .refs = 1, .fd = -1 }, true);
	ck_assert_ptr_nonnull(p);
	task_add(linked, p)->linked = true;
	task_kill_unlinked();
	int st = ended(held, 1000);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "held child: status %#x", st);
	/* a task with its process is left alone */
	ck_assert_int_eq(ended(linked, 50), 0);
	kill(linked, SIGKILL);
	ck_assert(WIFSIGNALED(ended(linked, 1000)));
	task_remove(held);
	task_remove(linked);
}
END_TEST

START_TEST(test_fsize_limit)
{
	unsigned long long soft;
	struct rlimit rl = { 12345, RLIM_INFINITY };
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	ck_assert_int_eq(task_fsize_limit(getpid(), &soft), 0);
	ck_assert_uint_eq(soft, 12345);
	rl.rlim_cur = RLIM_INFINITY;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	ck_assert_int_eq(task_fsize_limit(getpid(), &soft), 0);
	ck_assert_uint_eq(soft, ~0ULL);
	ck_assert_int_eq(task_fsize_limit(0x3ffffff0, &soft), -ENOENT);
}
END_TEST

static Suite *task_suite(void)
{
	Suite *s = suite_create("task");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, test_add_find_remove);
	tcase_add_test(tc, test_many_share_buckets);
	tcase_add_test(tc, test_rekey);
	suite_add_tcase(s, tc);
	TCase *procs = tcase_create("processes");
	tcase_add_test(procs, test_proc_refs);
	tcase_add_test(procs, test_leader_exit_takes_stale_tids);
	tcase_add_test(procs, test_proc_new_of_nobody);
	tcase_add_test(procs, test_zombie_until_reaped);
	tcase_add_test(procs, test_proc_of_child);
	tcase_add_test(procs, test_foreach);
	tcase_add_test(procs, test_fsctx_new);
	tcase_add_test(procs, test_fsctx_share_and_copy);
	tcase_add_test(procs, test_granted);
	suite_add_tcase(s, procs);
	TCase *end = tcase_create("end");
	tcase_add_test(end, test_kill_unlinked);
	tcase_add_test(end, test_fsize_limit);
	suite_add_tcase(s, end);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(task_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
