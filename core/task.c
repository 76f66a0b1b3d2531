#include "core/task.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xxhash.h>

#define NBUCKETS 1024

static struct task *buckets[NBUCKETS];
static unsigned ntasks;
static struct proc *zombies; /* exited processes their parents have not reaped */

static unsigned slot(pid_t tid)
{
	return (unsigned)(XXH3_64bits(&tid, sizeof tid) % NBUCKETS);
}

struct task *task_find(pid_t tid)
{
	for (struct task *t = buckets[slot(tid)]; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static void link_task(struct task *t)
{
	unsigned s = slot(t->tid);
	t->next = buckets[s];
	buckets[s] = t;
}

static void unlink_task(struct task *t)
{
	for (struct task **pp = &buckets[slot(t->tid)]; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			return;
		}
}

struct task *task_add(pid_t tid, struct proc *p)
{
	struct task *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->tid = tid;
	t->proc = p;
	if (p)
		p->refs++;
	link_task(t);
	ntasks++;
	return t;
}

static void fsctx_put(struct fsctx *fs)
{
	if (fs && --fs->refs == 0) {
		if (fs->fd >= 0)
			close(fs->fd);
		free(fs);
	}
}

static void proc_put(struct proc *p)
{
	if (!p || --p->refs > 0)
		return;
	if (p->pidfd >= 0)
		close(p->pidfd);
	fsctx_put(p->fs);
	free(p->granted);
	free(p);
}

void proc_note_granted(struct proc *p, int fd)
{
	if (fd < 0)
		return;
	size_t byte = (size_t)fd / 8;
	if (byte >= p->ngranted) {
		/* Grows rarely (the table starts at 1024 fds), never per call. */
		size_t n = p->ngranted ? p->ngranted : 128;
		while (n <= byte)
			n *= 2;
		unsigned char *g = realloc(p->granted, n);
		if (!g)
			return;
		memset(g + p->ngranted, 0, n - p->ngranted);
		p->granted = g;
		p->ngranted = n;
	}
	p->granted[byte] |= (unsigned char)(1u << (fd % 8));
}

bool proc_fd_granted(const struct proc *p, int fd)
{
	return fd >= 0 && (size_t)fd / 8 < p->ngranted && (p->granted[fd / 8] & (1u << (fd % 8)));
}

void proc_forget_granted(struct proc *p)
{
	if (p->granted)
		memset(p->granted, 0, p->ngranted);
}

void exec_check_drop(struct exec_check *e)
{
	if (e->fd_held)
		close(e->fd);
	e->fd_held = false;
}

void task_remove(pid_t tid)
{
	struct task *t = task_find(tid);
	if (!t)
		return;
	exec_check_drop(&t->exec);
	unlink_task(t);
	proc_put(t->proc);
	free(t);
	ntasks--;
}

void task_remove_leader(pid_t tgid)
{
	struct task *leader = task_find(tgid);
	struct proc *p = leader ? leader->proc : NULL;
	if (!p || p->tgid != tgid) {
		task_remove(tgid);
		return;
	}
	p->refs++; /* kept until the last of its tasks is gone */
	for (unsigned b = 0; b < NBUCKETS; b++)
		for (struct task **pp = &buckets[b]; *pp;) {
			struct task *t = *pp;
			if (t->proc != p) {
				pp = &t->next;
				continue;
			}
			*pp = t->next;
			exec_check_drop(&t->exec);
			proc_put(p);
			free(t);
			ntasks--;
		}
	/* Its parent has not reaped it yet (moat, the tracer, only learnt of
	 * the exit): a zombie, seen as on Linux until it is. */
	if (syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) == 0) {
		p->zombie = true;
		p->znext = zombies;
		zombies = p;
		return;
	}
	proc_put(p);
}

bool task_is(pid_t tgid, pid_t tid)
{
	struct task *t = tid > 0 ? task_find(tid) : NULL;
	return t && t->proc && t->proc->tgid == tgid;
}

void task_rekey(struct task *t, pid_t newtid)
{
	unlink_task(t);
	t->tid = newtid;
	link_task(t);
}

struct fsctx *fsctx_new(const char *cwd)
{
	struct fsctx *fs = calloc(1, sizeof *fs);
	if (!fs)
		return NULL;
	fs->refs = 1;
	fs->fd = -1;
	fs->umask = 022;
	snprintf(fs->cwd, sizeof fs->cwd, "%s", cwd);
	return fs;
}

struct proc *proc_new(pid_t tgid, struct fsctx *fs, bool copy_fs)
{
	struct proc *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->tgid = tgid;
	p->pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (p->pidfd < 0) {
		free(p);
		return NULL;
	}
	if (copy_fs) {
		p->fs = fsctx_new(fs ? fs->cwd : "/");
		if (p->fs && fs && fs->fd >= 0)
			p->fs->fd = fcntl(fs->fd, F_DUPFD_CLOEXEC, 0);
		if (p->fs && fs) {
			p->fs->gone = fs->gone;
			p->fs->umask = fs->umask;
			memcpy(p->fs->root, fs->root, sizeof fs->root);
			/* the same directory: what held for it still does */
			p->fs->gen = p->fs->fd >= 0 ? fs->gen : 0;
		}
		if (!p->fs) {
			close(p->pidfd);
			free(p);
			return NULL;
		}
	} else {
		p->fs = fs;
		fs->refs++;
	}
	return p;
}

/* Let go of the zombies their parents reaped since (their pidfd says
 * so: a signal to a reaped process is ESRCH): those of `tgid`, or every
 * one for 0 (a listing's, which visits them all anyway).  Returns the one
 * of `tgid` still there, or NULL. */
static struct proc *zombies_sweep(pid_t tgid)
{
	struct proc *found = NULL;
	for (struct proc **pp = &zombies; *pp;) {
		struct proc *z = *pp;
		if (tgid && z->tgid != tgid) {
			pp = &z->znext;
			continue;
		}
		if (syscall(SYS_pidfd_send_signal, z->pidfd, 0, NULL, 0) < 0 && errno == ESRCH) {
			*pp = z->znext;
			proc_put(z);
			continue;
		}
		if (z->tgid == tgid)
			found = z;
		pp = &z->znext;
	}
	return found;
}

struct proc *proc_find(pid_t tgid)
{
	struct task *t = task_find(tgid);
	if (t && t->proc && t->proc->tgid == tgid)
		return t->proc;
	/* The leader may have been re-keyed away; search. */
	for (unsigned i = 0; i < NBUCKETS; i++)
		for (t = buckets[i]; t; t = t->next)
			if (t->proc && t->proc->tgid == tgid)
				return t->proc;
	return zombies ? zombies_sweep(tgid) : NULL;
}

int proc_foreach(int (*fn)(struct proc *p, void *arg), void *arg)
{
	/* Each process once: visit it through its lowest-keyed thread seen.
	 * Processes are few; a quadratic dedup keeps this allocation-free. */
	for (unsigned i = 0; i < NBUCKETS; i++)
		for (struct task *t = buckets[i]; t; t = t->next) {
			if (!t->proc || !t->linked)
				continue;
			bool first = true;
			for (unsigned j = 0; j <= i && first; j++)
				for (struct task *u = buckets[j]; u; u = u->next) {
					if (u == t)
						break;
					if (u->proc == t->proc && u->linked) {
						first = false;
						break;
					}
				}
			if (first) {
				int r = fn(t->proc, arg);
				if (r)
					return r;
			}
		}
	zombies_sweep(0);
	for (struct proc *z = zombies; z; z = z->znext) {
		int r = fn(z, arg);
		if (r)
			return r;
	}
	return 0;
}

unsigned task_count(void)
{
	return ntasks;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef PIDFD_SIGNAL_THREAD
#define PIDFD_SIGNAL_THREAD (1UL << 0)
#endif

int task_signal(struct task *t, int sig)
{
	int fd = (int)syscall(SYS_pidfd_open, t->tid, PIDFD_THREAD);
	int r;
	if (fd >= 0) {
		r = (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, PIDFD_SIGNAL_THREAD);
		r = r < 0 ? -errno : 0;
		close(fd);
	} else {
		/* Before 6.9: the tid is a traced, unreaped thread of ours. */
		r = syscall(SYS_tgkill, t->proc ? t->proc->tgid : t->tid, t->tid, sig) < 0 ? -errno
											   : 0;
	}
	return r;
}

int task_fsize_limit(pid_t tid, unsigned long long *soft)
{
	/* /proc/PID/limits, not prlimit(2): prlimit on another uid's
	 * process needs CAP_SYS_RESOURCE, which the serving loop drops. */
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/limits", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	const char *l = strstr(buf, "\nMax file size ");
	if (!l)
		return -EIO;
	l += strlen("\nMax file size ");
	while (*l == ' ')
		l++;
	if (strncmp(l, "unlimited", 9) == 0) {
		*soft = ~0ULL;
		return 0;
	}
	char *end;
	errno = 0;
	*soft = strtoull(l, &end, 10);
	return end == l || errno ? -EIO : 0;
}

void task_kill_unlinked(void)
{
	for (unsigned i = 0; i < NBUCKETS; i++)
		for (struct task *t = buckets[i]; t; t = t->next)
			if (!t->proc)
				kill(t->tid, SIGKILL); /* traced and unreaped: the tid is ours */
}
