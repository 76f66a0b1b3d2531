/* The sandbox's cgroups (cgroup.h). */
#include "interposer/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "interposer/limits.h"

/* A directory of moat's name older than this whose moat is gone is a
 * leftover of a killed run (an empty one: rmdir removes no other). */
#define STALE_S 60

static struct cgroups *registered;

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

int cgroup_dir_in(const char *cgroup_file, const char *mountinfo, const char *ctrl, char *out,
		  size_t n)
{
	char line[4096], cgpath[4096] = "";
	FILE *f = fopen(cgroup_file, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
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
	if (cgpath[0] != '/' || strstr(cgpath, "/..") || strstr(cgpath, "//"))
		return -1;
	f = fopen(mountinfo, "re");
	if (!f)
		return -1;
	int found = -1;
	while (found < 0 && fgets(line, sizeof line, f)) {
		char root[4096], mnt[4096], fstype[64], opts[1024];
		char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*d %*d %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(sep + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		if (strchr(mnt, '\\') || strchr(root, '\\')) /* escaped names: not ours */
			continue;
		if (ctrl ? strcmp(fstype, "cgroup") || !has_word(opts, ctrl) : strcmp(fstype, "cgroup2"))
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
	return found;
}

static int own_dir(const char *ctrl, char *out, size_t n)
{
	return cgroup_dir_in("/proc/self/cgroup", "/proc/self/mountinfo", ctrl, out, n);
}

static int write_str(const char *dir, const char *name, const char *val)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, val, strlen(val));
	int e = w < 0 ? errno : 0;
	close(fd);
	return w < 0 ? -e : 0;
}

static int write_num(const char *dir, const char *name, unsigned long long v)
{
	char s[32];
	snprintf(s, sizeof s, "%llu", v);
	return write_str(dir, name, s);
}

static int open_in(const char *dir, const char *name, int flags)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return open(path, flags | O_CLOEXEC);
}

/* Remove what a killed moat left in `parent`: empty directories of moat's
 * name, a while old, whose moat is gone. */
static void sweep_stale(const char *parent)
{
	DIR *d = opendir(parent);
	if (!d)
		return;
	struct dirent *e;
	time_t now = time(NULL);
	while ((e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, "moat-", 5))
			continue;
		long pid = strtol(e->d_name + 5, &end, 10);
		if (pid <= 0 || (*end && *end != '-') || pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    now - st.st_mtime < STALE_S)
			continue;
		unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* A directory of our own under `parent`: its index, or -1. */
static int make_dir(struct cgroups *cg, const char *parent)
{
	if (cg->ndir == CG_MAX_DIRS)
		return -1;
	sweep_stale(parent);
	char *dir = cg->dir[cg->ndir];
	for (int k = 0; k < 10; k++) {
		if (k)
			snprintf(dir, sizeof cg->dir[0], "%s/moat-%d-%d", parent, (int)getpid(), k);
		else
			snprintf(dir, sizeof cg->dir[0], "%s/moat-%d", parent, (int)getpid());
		if (mkdir(dir, 0755) == 0) {
			int fd = open_in(dir, "cgroup.procs", O_WRONLY);
			if (fd < 0) {
				rmdir(dir);
				break;
			}
			cg->procs_fd[cg->ndir] = fd;
			return cg->ndir++;
		}
		if (errno != EEXIST)
			break;
	}
	dir[0] = '\0';
	return -1;
}

/* Remove the last directory made (nothing of it in force). */
static void unmake_last(struct cgroups *cg)
{
	int d = --cg->ndir;
	close(cg->procs_fd[d]);
	cg->procs_fd[d] = -1;
	rmdir(cg->dir[d]);
	cg->dir[d][0] = '\0';
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void cleanup_at_exit(void)
{
	if (registered)
		cgroup_cleanup(registered);
}

int cgroup_setup(struct cgroups *cg, enum cg_use use, const struct limits *l, char *err,
		 size_t errlen)
{
	memset(cg, 0, sizeof *cg);
	cg->use = use;
	cg->kill_fd = cg->oom_fd = cg->pids_fd = cg->cpu_fd = cg->cpustat_fd = cg->peak_fd = -1;
	for (int d = 0; d < CG_MAX_DIRS; d++)
		cg->procs_fd[d] = -1;
	if (use == CG_OFF)
		return 0;
	if (!registered) {
		registered = cg;
		atexit(cleanup_at_exit);
	}
	char base[4096];
	int d;
	/* v2: CPU of every process, one write to kill them all, and the
	 * limits when the controllers are enabled for our children. */
	if (own_dir(NULL, base, sizeof base) == 0 && (d = make_dir(cg, base)) >= 0) {
		const char *dir = cg->dir[d];
		char sub[512] = "";
		int fd = open_in(base, "cgroup.subtree_control", O_RDONLY);
		if (fd >= 0) {
			ssize_t r = read(fd, sub, sizeof sub - 1);
			sub[r > 0 ? r : 0] = '\0';
			close(fd);
		}
		if (l->mem_bytes && has_word(sub, "memory") &&
		    write_num(dir, "memory.max", l->mem_bytes) == 0) {
			/* Swap off: the limit is memory, not memory plus swap.
			 * Without swap accounting there is no file, and no
			 * swap the cgroup could use beyond what the host has. */
			int e = write_str(dir, "memory.swap.max", "0");
			write_str(dir, "memory.oom.group", "1");
			cg->oom_fd = open_in(dir, "memory.events", O_RDONLY);
			cg->peak_fd = open_in(dir, "memory.peak", O_RDONLY);
			if (cg->oom_fd >= 0 && (e == 0 || e == -ENOENT))
				cg->ver[CGP_MEMORY] = 2, cg->piece_dir[CGP_MEMORY] = d;
			else
				close_fd(&cg->oom_fd), close_fd(&cg->peak_fd);
		}
		if (l->pids && has_word(sub, "pids") && write_num(dir, "pids.max", l->pids) == 0 &&
		    (cg->pids_fd = open_in(dir, "pids.events", O_RDONLY)) >= 0)
			cg->ver[CGP_PIDS] = 2, cg->piece_dir[CGP_PIDS] = d;
		if ((cg->cpu_fd = open_in(dir, "cpu.stat", O_RDONLY)) >= 0)
			cg->ver[CGP_CPU] = 2, cg->piece_dir[CGP_CPU] = d;
		if ((cg->kill_fd = open_in(dir, "cgroup.kill", O_WRONLY)) >= 0)
			cg->ver[CGP_KILL] = 2, cg->piece_dir[CGP_KILL] = d;
	}
	/* v1, as a hybrid host keeps its controllers. */
	if (l->mem_bytes && !cg->ver[CGP_MEMORY] && own_dir("memory", base, sizeof base) == 0 &&
	    (d = make_dir(cg, base)) >= 0) {
		const char *dir = cg->dir[d];
		/* memsw (memory plus swap) at the same figure: no swap. */
		int e = write_num(dir, "memory.limit_in_bytes", l->mem_bytes);
		int s = e ? e : write_num(dir, "memory.memsw.limit_in_bytes", l->mem_bytes);
		if (!e && s == -ENOENT) /* no swap accounting: keep it from swapping */
			s = write_str(dir, "memory.swappiness", "0");
		if (!e && !s && (cg->oom_fd = open_in(dir, "memory.oom_control", O_RDONLY)) >= 0) {
			cg->peak_fd = open_in(dir, "memory.max_usage_in_bytes", O_RDONLY);
			cg->ver[CGP_MEMORY] = 1, cg->piece_dir[CGP_MEMORY] = d;
		} else {
			unmake_last(cg);
		}
	}
	if (l->pids && !cg->ver[CGP_PIDS] && own_dir("pids", base, sizeof base) == 0 &&
	    (d = make_dir(cg, base)) >= 0) {
		if (write_num(cg->dir[d], "pids.max", l->pids) == 0 &&
		    (cg->pids_fd = open_in(cg->dir[d], "pids.events", O_RDONLY)) >= 0)
			cg->ver[CGP_PIDS] = 1, cg->piece_dir[CGP_PIDS] = d;
		else
			unmake_last(cg);
	}
	if (l->cpu_s > 0 && !cg->ver[CGP_CPU] && own_dir("cpuacct", base, sizeof base) == 0 &&
	    (d = make_dir(cg, base)) >= 0) {
		cg->cpu_fd = open_in(cg->dir[d], "cpuacct.usage", O_RDONLY);
		cg->cpustat_fd = open_in(cg->dir[d], "cpuacct.stat", O_RDONLY);
		if (cg->cpu_fd >= 0 && cg->cpustat_fd >= 0) {
			cg->ver[CGP_CPU] = 1, cg->piece_dir[CGP_CPU] = d;
		} else {
			close_fd(&cg->cpu_fd), close_fd(&cg->cpustat_fd);
			unmake_last(cg);
		}
	}
	if (use != CG_REQUIRED)
		return 0;
	const char *missing = !cg->ndir                            ? "any limit"
			      : l->mem_bytes && !cg->ver[CGP_MEMORY] ? "the memory limit"
			      : l->pids && !cg->ver[CGP_PIDS]         ? "the task limit"
			      : l->cpu_s > 0 && !cg->ver[CGP_CPU]     ? "the CPU time"
								      : NULL;
	if (!missing)
		return 0;
	cgroup_cleanup(cg);
	snprintf(err, errlen,
		 "--cgroup required: no cgroup moat may write holds %s (moat needs root, or a "
		 "delegated cgroup v2 with the memory and pids controllers); use --cgroup auto",
		 missing);
	return -1;
}

int cgroup_attach(struct cgroups *cg, pid_t pid)
{
	char s[32];
	int n = snprintf(s, sizeof s, "%d", (int)pid);
	int rc = 0;
	for (int d = 0; d < cg->ndir; d++) {
		if (write(cg->procs_fd[d], s, (size_t)n) == n)
			continue;
		/* Not in it: nothing that directory holds is in force. */
		for (int p = 0; p < CGP_N; p++)
			if (cg->ver[p] && cg->piece_dir[p] == d)
				cg->ver[p] = 0;
		rc = -1;
	}
	if (!cg->ver[CGP_MEMORY])
		close_fd(&cg->oom_fd), close_fd(&cg->peak_fd);
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

bool cgroup_any(const struct cgroups *cg)
{
	for (int p = 0; p < CGP_N; p++)
		if (cg->ver[p])
			return true;
	return false;
}

void cgroup_cleanup(struct cgroups *cg)
{
	if (!cg->ndir)
		return;
	cgroup_kill(cg);
	for (int d = cg->ndir - 1; d >= 0; d--) {
		close_fd(&cg->procs_fd[d]);
		/* Busy while a process dies in it: wait a second at most. */
		for (int k = 0; k < 100 && rmdir(cg->dir[d]) < 0 && errno == EBUSY; k++) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		cg->dir[d][0] = '\0';
	}
	cg->ndir = 0; /* ver[] stays: the report says what was in force */
	close_fd(&cg->kill_fd);
	close_fd(&cg->oom_fd);
	close_fd(&cg->pids_fd);
	close_fd(&cg->cpu_fd);
	close_fd(&cg->cpustat_fd);
	close_fd(&cg->peak_fd);
}
