/* The sandbox's cgroups (cgroup.h). */
#include "interposer/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "fs-emulation/scratch.h"
#include "interposer/limits.h"

/* An empty directory of moat's name older than this is a leftover of a
 * moat killed with SIGKILL: a live moat's directories hold its sandbox
 * from a few ms after they are made until its end, and rmdir removes no
 * populated cgroup. */
#define STALE_S 60

/* The cgroups a signal handler cleans up (one run per moat). */
static struct cgroups *volatile registered;

/* Is `word` one of the items of `list` (separated by commas or spaces)? */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ',' || p[-1] == ' ') &&
		    (p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* cgroup_dir_in on the streams `f` (the cgroup file) and `mi`
 * (mountinfo), which it closes. */
static int dir_in(FILE *f, FILE *mi, const char *ctrl, char *out, size_t n)
{
	char cgpath[4096] = "", *line = NULL;
	size_t cap = 0;
	if (!f || !mi) {
		if (f)
			fclose(f);
		if (mi)
			fclose(mi);
		return -1;
	}
	/* getline: a long line (overlay options) is never split in two */
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		bool match = ctrl ? has_word(c1 + 1, ctrl) : (strcmp(line, "0:") == 0);
		if (match) {
			snprintf(cgpath, sizeof cgpath, "%s", c2 + 1);
			break;
		}
	}
	fclose(f);
	/* Outside our cgroup namespace the kernel writes "/../..": not a
	 * directory we could name. */
	if (cgpath[0] != '/' || strstr(cgpath, "/..") || strstr(cgpath, "//")) {
		fclose(mi);
		free(line);
		return -1;
	}
	f = mi;
	int found = -1;
	while (found < 0 && getline(&line, &cap, f) > 0) {
		char root[4096], mnt[4096], fstype[64], opts[4096];
		char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*d %*d %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(sep + 3, "%63s %*s %4095s", fstype, opts) != 2)
			continue;
		if (strchr(mnt, '\\') || strchr(root, '\\')) /* escaped names: not ours */
			continue;
		if (ctrl ? strcmp(fstype, "cgroup") || !has_word(opts, ctrl)
			 : strcmp(fstype, "cgroup2"))
			continue;
		const char *rel = cgpath;
		size_t rl = strlen(root);
		if (strcmp(root, "/") != 0) {
			/* A cgroup namespace or a bind of a subtree: our cgroup
			 * must lie under what the mount shows. */
			if (strncmp(cgpath, root, rl) || (cgpath[rl] && cgpath[rl] != '/'))
				continue;
			rel = cgpath + rl;
		}
		if (strcmp(rel, "/") == 0)
			rel = "";
		if ((size_t)snprintf(out, n, "%s%s", mnt, rel) < n)
			found = 0;
	}
	fclose(f);
	free(line);
	return found;
}

int cgroup_dir_in(const char *cgroup_file, const char *mountinfo, const char *ctrl, char *out,
		  size_t n)
{
	return dir_in(fopen(cgroup_file, "re"), fopen(mountinfo, "re"), ctrl, out, n);
}

/* The whole of `path` (a /proc file: its size is not known), in a
 * buffer that is kept; NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0, r;
	do {
		if (n == cap) {
			char *more = realloc(buf, cap = cap ? cap * 2 : 8192);
			if (!more) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = more;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	*len = n;
	return buf;
}

/* moat's own cgroup directory of controller `ctrl` (NULL: v2), from one
 * read of /proc/self/cgroup and of mountinfo: the set-up asks for a few
 * controllers, some of them twice, and moat never moves itself.  Main
 * thread only. */
static int own_dir(const char *ctrl, char *out, size_t n)
{
	static char *cg_text, *mi_text;
	static size_t cg_len, mi_len;
	if (!cg_text)
		cg_text = slurp("/proc/self/cgroup", &cg_len);
	if (!mi_text)
		mi_text = slurp("/proc/self/mountinfo", &mi_len);
	if (!cg_text || !mi_text || !cg_len || !mi_len)
		return -1;
	return dir_in(fmemopen(cg_text, cg_len, "r"), fmemopen(mi_text, mi_len, "r"), ctrl, out, n);
}

/* A directory of cgroupfs, opened: -1 for anything else. */
static int open_cgroupfs(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct statfs fs;
	if (fd >= 0 && (fstatfs(fd, &fs) < 0 ||
			(fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int open_at(int dfd, const char *name, int flags)
{
	return openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
}

static int write_str(int dfd, const char *name, const char *val)
{
	int fd = open_at(dfd, name, O_WRONLY);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, val, strlen(val));
	int e = w < 0 ? errno : 0;
	close(fd);
	return w < 0 ? -e : 0;
}

static int write_num(int dfd, const char *name, unsigned long long v)
{
	char s[32];
	snprintf(s, sizeof s, "%llu", v);
	return write_str(dfd, name, s);
}

/* moat-PID-XXXXXXXX: one of moat's names, not any other "moat-..." */
static bool moat_name(const char *n)
{
	if (strncmp(n, "moat-", 5))
		return false;
	n += 5;
	size_t digits = strspn(n, "0123456789");
	if (!digits || n[digits] != '-')
		return false;
	n += digits + 1;
	return strlen(n) == 8 && strspn(n, "0123456789abcdef") == 8;
}

/* Remove what a moat killed with SIGKILL left in the parent: empty
 * directories of moat's name, a minute old, that no live moat holds. */
static void sweep_stale(int pfd)
{
	int fd = dup(pfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	time_t now = time(NULL);
	while ((e = readdir(d))) {
		struct stat st;
		if (!moat_name(e->d_name) ||
		    fstatat(pfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    now - st.st_mtime < STALE_S)
			continue;
		/* A live moat holds a shared lock on each of its directories
		 * from their making to their removal (one whose setup stalled
		 * before its first process moved in is empty, and old). */
		int lk = open_at(pfd, e->d_name, O_RDONLY | O_DIRECTORY);
		if (lk < 0)
			continue;
		if (flock(lk, LOCK_EX | LOCK_NB) == 0)
			unlinkat(pfd, e->d_name, AT_REMOVEDIR); /* EBUSY when populated */
		close(lk);
	}
	closedir(d);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A directory of our own under `parent`: its index, with its fd in *dfd,
 * or -1.  Named moat-PID-RANDOM: moats in other pid namespaces share the
 * pid numbers, not the random part. */
static int make_dir(struct cgroups *cg, const char *parent, int *dfd)
{
	if (cg->ndir == CG_MAX_DIRS)
		return -1;
	int pfd = open_cgroupfs(parent);
	if (pfd < 0)
		return -1;
	sweep_stale(pfd);
	int d = cg->ndir;
	for (int k = 0; k < 8; k++) {
		unsigned r = 0;
		if (getrandom(&r, sizeof r, 0) != sizeof r)
			r = (unsigned)time(NULL) ^ (unsigned)k * 2654435761u;
		snprintf(cg->name[d], sizeof cg->name[d], "moat-%d-%08x", (int)getpid(), r);
		/* 0700: nobody else opens it (or takes its lock first) */
		if (mkdirat(pfd, cg->name[d], 0700) < 0) {
			if (errno == EEXIST)
				continue;
			break;
		}
		*dfd = open_at(pfd, cg->name[d], O_RDONLY | O_DIRECTORY);
		int procs = *dfd >= 0 ? open_at(*dfd, "cgroup.procs", O_WRONLY) : -1;
		/* held until removed: another moat's sweep leaves it alone */
		cg->lock_fd[d] = *dfd >= 0 ? open_at(pfd, cg->name[d], O_RDONLY | O_DIRECTORY) : -1;
		if (cg->lock_fd[d] >= 0 && flock(cg->lock_fd[d], LOCK_SH | LOCK_NB) < 0)
			close_fd(&cg->lock_fd[d]);
		if (procs < 0 || cg->lock_fd[d] < 0) {
			close_fd(&procs);
			close_fd(&cg->lock_fd[d]);
			if (*dfd >= 0)
				close(*dfd);
			unlinkat(pfd, cg->name[d], AT_REMOVEDIR);
			break;
		}
		char name[sizeof cg->name[0]];
		memcpy(name, cg->name[d], sizeof name);
		snprintf(cg->dir[d], sizeof cg->dir[d], "%s/%s", parent, name);
		cg->parent_fd[d] = pfd;
		cg->procs_fd[d] = procs;
		return cg->ndir++;
	}
	close(pfd);
	cg->name[d][0] = '\0';
	return -1;
}


/* Remove the last directory made (nothing of it in force). */
static void unmake_last(struct cgroups *cg, int *dfd)
{
	int d = --cg->ndir;
	close_fd(dfd);
	close_fd(&cg->procs_fd[d]);
	close_fd(&cg->lock_fd[d]);
	unlinkat(cg->parent_fd[d], cg->name[d], AT_REMOVEDIR);
	close_fd(&cg->parent_fd[d]);
	cg->dir[d][0] = cg->name[d][0] = '\0';
}

/* Kill and remove, with async-signal-safe calls only (the handler below
 * runs it too): a second at most while what was killed dies. */
static void remove_dirs(struct cgroups *cg)
{
	if (cg->kill_fd >= 0 && write(cg->kill_fd, "1", 1) < 0) {
		/* the processes moat knows were signalled on their own */
	}
	for (int d = cg->ndir - 1; d >= 0; d--)
		for (int k = 0; k < 100; k++) {
			if (unlinkat(cg->parent_fd[d], cg->name[d], AT_REMOVEDIR) == 0 ||
			    errno != EBUSY)
				break;
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
}

/* A signal that ends moat: the directories first, then the signal's own
 * end (SA_RESETHAND restored the default; it is delivered on return). */
void cgroup_abandon(void)
{
	struct cgroups *cg = registered;
	if (cg && cg->owner == getpid()) {
		registered = NULL;
		/* The loop runs with the sandbox's fsuid, and a socket call
		 * with its euid too: moat's own, as at the start, for the
		 * directories' parents (the saved uid allows it). */
		setfsuid(cg->self_uid);
		setfsgid(cg->self_gid);
		remove_dirs(cg);
	}
}

bool cgroup_kill_async(void)
{
	struct cgroups *cg = registered;
	return cg && cg->owner == getpid() && cg->kill_fd >= 0 && write(cg->kill_fd, "1", 1) == 1;
}

/* A signal that ends moat: the directories first — the cgroups, then
 * the run's scratch and skeleton (fs-emulation/scratch.h) — then the
 * signal's own end (SA_RESETHAND restored the default; it is delivered
 * on return). */
static void on_fatal(int sig)
{
	int e = errno;
	cgroup_abandon();
	scratch_abandon();
	raise(sig);
	errno = e;
}

static void cleanup_at_exit(void)
{
	if (registered)
		cgroup_cleanup(registered);
}

/* The signals whose default ends moat and that it does not handle itself
 * (SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked for the run and
 * forwarded; the faults and SIGTRAP are left to a sanitizer and a
 * debugger), and the real-time ones. */
static const int fatal_sigs[] = { SIGHUP,  SIGINT,  SIGQUIT,   SIGTERM,   SIGUSR1,
				  SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,   SIGIO,
				  SIGPWR,  SIGXCPU, SIGXFSZ,   SIGSTKFLT, SIGSYS };

static void fatal_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++)
		sigaddset(set, fatal_sigs[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(set, sig);
}

static void register_cleanup(struct cgroups *cg)
{
	static bool once;
	cg->owner = getpid();
	cg->self_uid = geteuid();
	cg->self_gid = getegid();
	registered = cg;
	if (once)
		return;
	once = true;
	atexit(cleanup_at_exit);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal;
	sa.sa_flags = (int)SA_RESETHAND;
	sigfillset(&sa.sa_mask);
	/* One call a signal: set, and put back what was not the default (a
	 * signal the caller ignores stays ignored).  All blocked meanwhile:
	 * one that comes between the two calls waits, and is dropped by the
	 * SIG_IGN put back. */
	sigset_t all, mask;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &mask);
	sigset_t set;
	fatal_set(&set);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction old;
		if (sigismember(&set, sig) == 1 && sigaction(sig, &sa, &old) == 0 &&
		    old.sa_handler != SIG_DFL)
			sigaction(sig, &old, NULL);
	}
	sigprocmask(SIG_SETMASK, &mask, NULL);
}

static int setup(struct cgroups *cg, enum cg_use use, const struct limits *l, char *err,
		 size_t errlen);

int cgroup_setup(struct cgroups *cg, enum cg_use use, const struct limits *l, char *err,
		 size_t errlen)
{
	memset(cg, 0, sizeof *cg);
	cg->use = use;
	cg->kill_fd = cg->oom_fd = cg->pids_fd = cg->cpu_fd = cg->cpustat_fd = cg->peak_fd =
		cg->usage_fd = -1;
	for (int d = 0; d < CG_MAX_DIRS; d++)
		cg->procs_fd[d] = cg->parent_fd[d] = cg->lock_fd[d] = -1;
	/* The fatal signals' handler even without cgroups: it removes the
	 * run's scratch too (on_fatal). */
	register_cleanup(cg);
	if (use == CG_OFF)
		return 0;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	cg->ceiling = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
	uint64_t enclosing = cgroup_memory_ceiling();
	if (enclosing && (!cg->ceiling || enclosing < cg->ceiling))
		cg->ceiling = enclosing;
	/* A directory made but not yet counted would escape the handler:
	 * the signals wait until the setup is done. */
	sigset_t block, old;
	fatal_set(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	int r = setup(cg, use, l, err, errlen);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

static int setup(struct cgroups *cg, enum cg_use use, const struct limits *l, char *err,
		 size_t errlen)
{
	char base[4096];
	int d, dfd = -1;
	/* v2: CPU of every process, one write to kill them all, and the
	 * limits when the controllers are enabled for our children. */
	if (own_dir(NULL, base, sizeof base) == 0 && (d = make_dir(cg, base, &dfd)) >= 0) {
		char sub[512] = "";
		int fd = open_at(cg->parent_fd[d], "cgroup.subtree_control", O_RDONLY);
		if (fd >= 0) {
			ssize_t r = read(fd, sub, sizeof sub - 1);
			sub[r > 0 ? r : 0] = '\0';
			close(fd);
		}
		if (l->mem_bytes && has_word(sub, "memory") &&
		    write_num(dfd, "memory.max", l->mem_bytes) == 0) {
			/* Swap off: the limit is memory, not memory plus swap.
			 * Without swap accounting there is no file, and no
			 * swap the cgroup could use beyond what the host has. */
			int e = write_str(dfd, "memory.swap.max", "0");
			write_str(dfd, "memory.oom.group", "1");
			cg->oom_fd = open_at(dfd, "memory.events", O_RDONLY);
			cg->peak_fd = open_at(dfd, "memory.peak", O_RDONLY);
			cg->usage_fd = open_at(dfd, "memory.current", O_RDONLY);
			if (cg->oom_fd >= 0 && (e == 0 || e == -ENOENT))
				cg->ver[CGP_MEMORY] = 2, cg->piece_dir[CGP_MEMORY] = d;
			else
				close_fd(&cg->oom_fd), close_fd(&cg->peak_fd),
					close_fd(&cg->usage_fd);
		}
		if (l->pids && has_word(sub, "pids") && write_num(dfd, "pids.max", l->pids) == 0 &&
		    (cg->pids_fd = open_at(dfd, "pids.events", O_RDONLY)) >= 0)
			cg->ver[CGP_PIDS] = 2, cg->piece_dir[CGP_PIDS] = d;
		if ((cg->cpu_fd = open_at(dfd, "cpu.stat", O_RDONLY)) >= 0)
			cg->ver[CGP_CPU] = 2, cg->piece_dir[CGP_CPU] = d;
		if ((cg->kill_fd = open_at(dfd, "cgroup.kill", O_WRONLY)) >= 0)
			cg->ver[CGP_KILL] = 2, cg->piece_dir[CGP_KILL] = d;
		close_fd(&dfd);
	}
	/* v1, as a hybrid host keeps its controllers. */
	if (l->mem_bytes && !cg->ver[CGP_MEMORY] && own_dir("memory", base, sizeof base) == 0 &&
	    (d = make_dir(cg, base, &dfd)) >= 0) {
		/* memsw (memory plus swap) at the same figure: no swap. */
		int e = write_num(dfd, "memory.limit_in_bytes", l->mem_bytes);
		int s = e ? e : write_num(dfd, "memory.memsw.limit_in_bytes", l->mem_bytes);
		if (!e && s == -ENOENT) /* no swap accounting: keep it from swapping */
			s = write_str(dfd, "memory.swappiness", "0");
		if (!e && !s && (cg->oom_fd = open_at(dfd, "memory.oom_control", O_RDONLY)) >= 0) {
			cg->peak_fd = open_at(dfd, "memory.max_usage_in_bytes", O_RDONLY);
			cg->usage_fd = open_at(dfd, "memory.usage_in_bytes", O_RDONLY);
			cg->ver[CGP_MEMORY] = 1, cg->piece_dir[CGP_MEMORY] = d;
			close_fd(&dfd);
		} else {
			unmake_last(cg, &dfd);
		}
	}
	if (l->pids && !cg->ver[CGP_PIDS] && own_dir("pids", base, sizeof base) == 0 &&
	    (d = make_dir(cg, base, &dfd)) >= 0) {
		if (write_num(dfd, "pids.max", l->pids) == 0 &&
		    (cg->pids_fd = open_at(dfd, "pids.events", O_RDONLY)) >= 0) {
			cg->ver[CGP_PIDS] = 1, cg->piece_dir[CGP_PIDS] = d;
			close_fd(&dfd);
		} else {
			unmake_last(cg, &dfd);
		}
	}
	if (l->cpu_s > 0 && !cg->ver[CGP_CPU] && own_dir("cpuacct", base, sizeof base) == 0 &&
	    (d = make_dir(cg, base, &dfd)) >= 0) {
		cg->cpu_fd = open_at(dfd, "cpuacct.usage", O_RDONLY);
		cg->cpustat_fd = open_at(dfd, "cpuacct.stat", O_RDONLY);
		if (cg->cpu_fd >= 0 && cg->cpustat_fd >= 0) {
			cg->ver[CGP_CPU] = 1, cg->piece_dir[CGP_CPU] = d;
			close_fd(&dfd);
		} else {
			close_fd(&cg->cpu_fd), close_fd(&cg->cpustat_fd);
			unmake_last(cg, &dfd);
		}
	}
	if (use != CG_REQUIRED)
		return 0;
	const char *missing = !cg->ndir                              ? "any limit"
			      : l->mem_bytes && !cg->ver[CGP_MEMORY] ? "the memory limit"
			      : l->pids && !cg->ver[CGP_PIDS]        ? "the task limit"
			      : l->cpu_s > 0 && !cg->ver[CGP_CPU]    ? "the CPU time"
								     : NULL;
	if (!missing)
		return 0;
	cgroup_cleanup(cg);
	snprintf(err, errlen,
		 "--cgroup required: no cgroup moat may make holds %s (moat needs root, and a "
		 "cgroup whose controllers are enabled for its children: v1 hierarchies, or v2 "
		 "with memory and pids in cgroup.subtree_control); use --cgroup auto",
		 missing);
	return -1;
}

/* The directory that holds the v2 pieces, or -1. */
static int v2_dir(const struct cgroups *cg)
{
	for (int p = 0; p < CGP_N; p++)
		if (cg->ver[p] == 2)
			return cg->piece_dir[p];
	return -1;
}

int cgroup_v2_fd(const struct cgroups *cg)
{
	int d = v2_dir(cg);
	return d >= 0 ? cg->lock_fd[d] : -1;
}

int cgroup_attach(struct cgroups *cg, pid_t pid, bool born_v2)
{
	char s[32];
	int n = snprintf(s, sizeof s, "%d", (int)pid);
	int rc = 0;
	int born = born_v2 ? v2_dir(cg) : -1;
	for (int d = 0; d < cg->ndir; d++) {
		if (d == born || write(cg->procs_fd[d], s, (size_t)n) == n)
			continue;
		/* Not in it: nothing that directory holds is in force. */
		for (int p = 0; p < CGP_N; p++)
			if (cg->ver[p] && cg->piece_dir[p] == d)
				cg->ver[p] = 0;
		rc = -1;
	}
	if (!cg->ver[CGP_MEMORY])
		close_fd(&cg->oom_fd), close_fd(&cg->peak_fd), close_fd(&cg->usage_fd);
	if (!cg->ver[CGP_PIDS])
		close_fd(&cg->pids_fd);
	if (!cg->ver[CGP_CPU])
		close_fd(&cg->cpu_fd), close_fd(&cg->cpustat_fd);
	if (!cg->ver[CGP_KILL])
		close_fd(&cg->kill_fd);
	return cg->use == CG_REQUIRED ? rc : 0;
}

void cgroup_kill(struct cgroups *cg)
{
	if (cg->kill_fd >= 0 && write(cg->kill_fd, "1", 1) < 0) {
		/* nothing more to do: the signals to each process still go */
	}
}

/* The number after `key` (at a line's start) in a small cgroup file, or
 * the file's first number when key is NULL. */
static uint64_t field(int fd, const char *key)
{
	char buf[1024];
	if (fd < 0)
		return 0;
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (!key)
		return strtoull(buf, NULL, 10);
	size_t kl = strlen(key);
	for (char *p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return strtoull(p + kl + 1, NULL, 10);
	return 0;
}

uint64_t cgroup_oom_kills(struct cgroups *cg)
{
	return cg->ver[CGP_MEMORY] ? field(cg->oom_fd, "oom_kill") : 0;
}

int cgroup_memory_limit_hit(struct cgroups *cg, uint64_t limit)
{
	if (!cg->ver[CGP_MEMORY])
		return 0;
	/* v2 counts the allocations memory.max failed ("oom") */
	if (cg->ver[CGP_MEMORY] == 2)
		return field(cg->oom_fd, "oom") > 0;
	/* v1's failcnt stays 0 on recent kernels, and its peak counts page
	 * cache, which sits at the limit after any large read: a peak below
	 * the limit says "not ours"; at it, "ours" only when nothing else
	 * could have run out first (no enclosing limit nor the host's RAM
	 * within twice ours). */
	if (field(cg->peak_fd, NULL) + limit / 64 < limit)
		return 0;
	return cg->ceiling && cg->ceiling < 2 * limit ? -1 : 1;
}

uint64_t cgroup_pids_refused(struct cgroups *cg)
{
	return cg->ver[CGP_PIDS] ? field(cg->pids_fd, "max") : 0;
}

double cgroup_cpu(struct cgroups *cg, double *user, double *sys)
{
	if (cg->ver[CGP_CPU] == 2) {
		if (user)
			*user = (double)field(cg->cpu_fd, "user_usec") / 1e6;
		if (sys)
			*sys = (double)field(cg->cpu_fd, "system_usec") / 1e6;
		return (double)field(cg->cpu_fd, "usage_usec") / 1e6;
	}
	if (cg->ver[CGP_CPU] == 1) {
		static long tick;
		if (!tick)
			tick = sysconf(_SC_CLK_TCK);
		if (user)
			*user = (double)field(cg->cpustat_fd, "user") / (double)tick;
		if (sys)
			*sys = (double)field(cg->cpustat_fd, "system") / (double)tick;
		return (double)field(cg->cpu_fd, NULL) / 1e9;
	}
	return -1;
}

uint64_t cgroup_memory_peak(struct cgroups *cg)
{
	return cg->ver[CGP_MEMORY] ? field(cg->peak_fd, NULL) : 0;
}

uint64_t cgroup_memory_usage(struct cgroups *cg)
{
	return cg->ver[CGP_MEMORY] && cg->usage_fd >= 0 ? field(cg->usage_fd, NULL) : 0;
}

bool cgroup_any(const struct cgroups *cg)
{
	for (int p = 0; p < CGP_N; p++)
		if (cg->ver[p])
			return true;
	return false;
}

uint64_t cgroup_memory_ceiling(void)
{
	char base[4096];
	uint64_t min = 0;
	/* v1: the kernel sums the hierarchy up for us */
	if (own_dir("memory", base, sizeof base) == 0) {
		int dfd = open_cgroupfs(base);
		int fd = dfd >= 0 ? open_at(dfd, "memory.stat", O_RDONLY) : -1;
		uint64_t v = field(fd, "hierarchical_memory_limit");
		if (fd >= 0)
			close(fd);
		if (dfd >= 0)
			close(dfd);
		/* "no limit" is the largest page-aligned long */
		if (v && v < (1ull << 62))
			min = v;
	}
	/* v2: memory.max of each cgroup up to the hierarchy's root */
	if (own_dir(NULL, base, sizeof base) == 0) {
		int dfd = open_cgroupfs(base);
		while (dfd >= 0) {
			int fd = open_at(dfd, "memory.max", O_RDONLY);
			if (fd < 0)
				break; /* the root has none */
			char buf[32] = "";
			ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
			close(fd);
			if (n > 0 && buf[0] >= '0' && buf[0] <= '9') {
				uint64_t v = strtoull(buf, NULL, 10);
				if (!min || v < min)
					min = v;
			}
			int up = openat(dfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			close(dfd);
			struct statfs fs;
			dfd = up;
			if (dfd >= 0 &&
			    (fstatfs(dfd, &fs) < 0 || fs.f_type != CGROUP2_SUPER_MAGIC)) {
				close(dfd);
				dfd = -1;
			}
		}
		if (dfd >= 0)
			close(dfd);
	}
	return min;
}

void cgroup_cleanup(struct cgroups *cg)
{
	sigset_t block, old;
	fatal_set(&block);
	sigprocmask(SIG_BLOCK, &block, &old); /* the handler would find half a list */
	if (registered == cg)
		registered = NULL;
	if (cg->ndir)
		remove_dirs(cg);
	for (int d = 0; d < cg->ndir; d++) {
		close_fd(&cg->procs_fd[d]);
		close_fd(&cg->parent_fd[d]);
		close_fd(&cg->lock_fd[d]);
	}
	cg->ndir = 0; /* ver[] stays: the report says what was in force */
	sigprocmask(SIG_SETMASK, &old, NULL);
	close_fd(&cg->kill_fd);
	close_fd(&cg->oom_fd);
	close_fd(&cg->pids_fd);
	close_fd(&cg->cpu_fd);
	close_fd(&cg->cpustat_fd);
	close_fd(&cg->peak_fd);
	close_fd(&cg->usage_fd);
}
