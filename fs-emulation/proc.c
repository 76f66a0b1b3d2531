/* Synthetic /proc: only sandbox processes, contents generated or copied
 * from the host's entry of that same sandbox process, served as sealed
 * memfds.  Host processes do not exist here (rule 6). */
#include "fs-emulation/vfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interposer/task.h"

enum pent { P_FILE, P_DIR, P_LINK };

struct pentry {
	const char *name;
	enum pent type;
};

/* The top level: besides these, one directory per sandbox process. */
static const struct pentry top_entries[] = {
	{ "self", P_LINK }, { "thread-self", P_LINK }, { "mounts", P_LINK },
	{ "cpuinfo", P_FILE }, { "meminfo", P_FILE }, { "stat", P_FILE },
	{ "uptime", P_FILE }, { "loadavg", P_FILE }, { "version", P_FILE },
	{ "filesystems", P_FILE }, { "sys", P_DIR }, { NULL, 0 },
};
static const struct pentry pid_entries[] = {
	{ "stat", P_FILE }, { "statm", P_FILE }, { "status", P_FILE },
	{ "cmdline", P_FILE }, { "comm", P_FILE }, { "environ", P_FILE },
	{ "maps", P_FILE }, { "limits", P_FILE }, { "mounts", P_FILE },
	{ "mountinfo", P_FILE }, { "cgroup", P_FILE }, { "auxv", P_FILE },
	{ "exe", P_LINK }, { "cwd", P_LINK }, { "root", P_LINK },
	{ "fd", P_DIR }, { "fdinfo", P_DIR }, { "task", P_DIR }, { NULL, 0 },
};
static const struct pentry sys_entries[] = { { "kernel", P_DIR }, { "vm", P_DIR }, { NULL, 0 } };
static const struct pentry sys_kernel_entries[] = {
	{ "hostname", P_FILE }, { "osrelease", P_FILE }, { "ostype", P_FILE },
	{ "pid_max", P_FILE }, { "random", P_DIR }, { NULL, 0 },
};
static const struct pentry sys_random_entries[] = { { "uuid", P_FILE }, { "boot_id", P_FILE }, { NULL, 0 } };
static const struct pentry sys_vm_entries[] = { { "overcommit_memory", P_FILE }, { NULL, 0 } };

static const struct pentry *find_entry(const struct pentry *tab, const char *name)
{
	for (; tab->name; tab++)
		if (strcmp(tab->name, name) == 0)
			return tab;
	return NULL;
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* A sandbox tgid, or a sandbox thread of tgid when `tgid` > 0. */
static bool sandbox_pid(pid_t pid, pid_t tgid)
{
	struct task *t = task_find(pid);
	if (!t || !t->proc)
		return proc_find(pid) != NULL && tgid == 0;
	return tgid ? t->proc->tgid == tgid : t->proc->tgid == pid;
}

/* Split a /proc-relative dir ("." / "123" / "123/fd" / "123/task/124")
 * into the pid it is about and the rest. */
struct pdir {
	pid_t pid;          /* 0: not under a pid */
	pid_t tid;          /* under task/TID */
	const char *sub;    /* "" / "fd" / "fdinfo" / "task" / "sys/kernel"... */
};

static int parse_dir(const char *dir, struct pdir *d)
{
	memset(d, 0, sizeof *d);
	if (strcmp(dir, ".") == 0) {
		d->sub = "";
		return 0;
	}
	const char *slash = strchr(dir, '/');
	size_t n = slash ? (size_t)(slash - dir) : strlen(dir);
	if (!all_digits(dir, n)) {
		d->sub = dir;
		return 0;
	}
	d->pid = atoi(dir);
	d->sub = slash ? slash + 1 : "";
	if (strncmp(d->sub, "task/", 5) == 0) {
		const char *t = d->sub + 5;
		const char *s2 = strchr(t, '/');
		size_t tn = s2 ? (size_t)(s2 - t) : strlen(t);
		if (!all_digits(t, tn))
			return -ENOENT;
		d->tid = atoi(t);
		d->sub = s2 ? s2 + 1 : "";
	}
	return 0;
}

static void synth_stat(struct stat *st, enum pent type, const struct vfs *v)
{
	memset(st, 0, sizeof *st);
	st->st_mode = type == P_DIR ? S_IFDIR | 0555 : type == P_LINK ? S_IFLNK | 0777 : S_IFREG | 0444;
	st->st_nlink = type == P_DIR ? 2 : 1;
	st->st_uid = v->uid;
	st->st_gid = v->gid;
	st->st_blksize = 1024;
}

static int fd_link(struct vfs *v, pid_t pid, int fd, char *link, size_t len)
{
	char hp[64];
	snprintf(hp, sizeof hp, "/proc/%d/fd/%d", pid, fd);
	struct stat st;
	if (stat(hp, &st) < 0)
		return -ENOENT;
	const char *vp = reg_get(st.st_dev, st.st_ino);
	if (vp) {
		snprintf(link, len, "%s", vp);
		return 0;
	}
	ssize_t n = readlink(hp, link, len - 1);
	if (n < 0)
		return -ENOENT;
	link[n] = '\0';
	if (link[0] != '/')
		return 0; /* pipe:[...], socket:[...], anon_inode:... */
	char mapped[PATH_MAX];
	static const char *const devs[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					    "/dev/urandom", NULL };
	for (const char *const *d = devs; *d; d++)
		if (strcmp(link, *d) == 0)
			return 0;
	if (vfs_vpath_of_host(v, link, mapped, sizeof mapped) == 0)
		snprintf(link, len, "%s", mapped);
	else /* a host path outside the view (inherited from outside): hide it */
		snprintf(link, len, "anon_inode:[moat-unknown]");
	return 0;
}

int proc_walk_step(struct vfs *v, struct task *t, const char *dir, const char *name,
		   struct stat *st, char *link, size_t linklen, int *magic_fd, pid_t *magic_pid)
{
	struct pdir d;
	int r = parse_dir(dir, &d);
	if (r < 0)
		return r;
	link[0] = '\0';
	pid_t self = t && t->proc ? t->proc->tgid : 0;
	if (d.pid == 0) {
		const struct pentry *tab = top_entries;
		if (strcmp(d.sub, "sys") == 0)
			tab = sys_entries;
		else if (strcmp(d.sub, "sys/kernel") == 0)
			tab = sys_kernel_entries;
		else if (strcmp(d.sub, "sys/kernel/random") == 0)
			tab = sys_random_entries;
		else if (strcmp(d.sub, "sys/vm") == 0)
			tab = sys_vm_entries;
		else if (d.sub[0])
			return -ENOENT;
		if (tab == top_entries && all_digits(name, strlen(name))) {
			if (!sandbox_pid(atoi(name), 0))
				return -ENOENT;
			synth_stat(st, P_DIR, v);
			return 0;
		}
		const struct pentry *e = find_entry(tab, name);
		if (!e)
			return -ENOENT;
		synth_stat(st, e->type, v);
		if (strcmp(name, "self") == 0 && tab == top_entries)
			snprintf(link, linklen, "%d", self);
		else if (strcmp(name, "thread-self") == 0 && tab == top_entries)
			snprintf(link, linklen, "%d/task/%d", self, t ? t->tid : 0);
		else if (strcmp(name, "mounts") == 0 && tab == top_entries)
			snprintf(link, linklen, "self/mounts");
		return 0;
	}
	if (!sandbox_pid(d.pid, 0) || (d.tid && !sandbox_pid(d.tid, d.pid)))
		return -ENOENT;
	struct proc *p = proc_find(d.pid);
	if (!p)
		return -ENOENT;
	if (d.sub[0] == '\0') {
		const struct pentry *e = find_entry(pid_entries, name);
		if (!e)
			return -ENOENT;
		synth_stat(st, e->type, v);
		if (strcmp(name, "exe") == 0)
			snprintf(link, linklen, "%s", p->exe);
		else if (strcmp(name, "cwd") == 0)
			snprintf(link, linklen, "%s", p->fs->cwd);
		else if (strcmp(name, "root") == 0)
			snprintf(link, linklen, "/");
		return 0;
	}
	if (strcmp(d.sub, "task") == 0) {
		if (!all_digits(name, strlen(name)) || !sandbox_pid(atoi(name), d.pid))
			return -ENOENT;
		synth_stat(st, P_DIR, v);
		return 0;
	}
	if (strcmp(d.sub, "fd") == 0 || strcmp(d.sub, "fdinfo") == 0) {
		if (!all_digits(name, strlen(name)))
			return -ENOENT;
		int fd = atoi(name);
		char tmp[PATH_MAX];
		if (fd_link(v, d.pid, fd, tmp, sizeof tmp) < 0)
			return -ENOENT;
		if (d.sub[2] == 'i') { /* fdinfo */
			synth_stat(st, P_FILE, v);
			return 0;
		}
		synth_stat(st, P_LINK, v);
		st->st_mode = S_IFLNK | 0700;
		snprintf(link, linklen, "%s", tmp);
		*magic_fd = fd;
		*magic_pid = d.pid;
		return 1;
	}
	return -ENOENT;
}

/* ---- contents ---- */

static int slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	ssize_t n;
	while (off < len && (n = read(fd, buf + off, len - off)) > 0)
		off += (size_t)n;
	close(fd);
	return (int)off;
}

/* Replace host scratch paths with the virtual paths of their mounts. */
static size_t devirtualize(struct vfs *v, char *buf, size_t n, size_t cap)
{
	for (int i = 0; i < v->nmnt; i++) {
		const struct vfs_mount *m = &v->mnt[i];
		if (m->kind == MNT_BIND)
			continue;
		size_t hl = strlen(m->host), vl = m->vlen;
		char *s = buf;
		while ((s = memmem(s, n - (size_t)(s - buf), m->host, hl))) {
			if (n - hl + vl >= cap)
				break;
			memmove(s + vl, s + hl, n - (size_t)(s - buf) - hl);
			memcpy(s, m->vpath, vl);
			n = n - hl + vl;
			s += vl;
		}
	}
	return n;
}

/* A job-control stop is a ptrace stop to the kernel ("t"): show it as the
 * program would see it without moat ("T"). */
static size_t show_group_stop(pid_t pid, const char *name, char *buf, size_t n)
{
	struct task *t = task_find(pid);
	if (!t || !t->group_stopped)
		return n;
	if (strcmp(name, "stat") == 0) {
		char *paren = memrchr(buf, ')', n);
		if (paren && paren + 2 < buf + n && paren[2] == 't')
			paren[2] = 'T';
	} else if (strcmp(name, "status") == 0) {
		static const char from[] = "t (tracing stop)", to[] = "T (stopped)";
		char *st = memmem(buf, n, from, sizeof from - 1);
		if (st) {
			size_t tail = n - (size_t)(st - buf) - (sizeof from - 1);
			memcpy(st, to, sizeof to - 1);
			memmove(st + sizeof to - 1, st + sizeof from - 1, tail);
			n -= (sizeof from - 1) - (sizeof to - 1);
		}
	}
	return n;
}

/* Lines "Key:\tVALUE" naming the supervisor are zeroed: nothing outside
 * the sandbox has a pid here. */
static size_t hide_outside_pids(char *buf, size_t n)
{
	static const char *const keys[] = { "PPid:", "TracerPid:" };
	for (size_t k = 0; k < 2; k++) {
		char *s = memmem(buf, n, keys[k], strlen(keys[k]));
		if (!s)
			continue;
		char *val = s + strlen(keys[k]);
		while (*val == '\t' || *val == ' ')
			val++;
		pid_t pid = atoi(val);
		if (pid == 0 || proc_find(pid))
			continue;
		char *end = val;
		while (isdigit((unsigned char)*end))
			end++;
		memmove(val + 1, end, n - (size_t)(end - buf));
		n -= (size_t)(end - val) - 1;
		*val = '0';
	}
	return n;
}

static int sealed_memfd(const char *buf, size_t n)
{
	int fd = memfd_create("moat-proc", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(fd, buf + off, n - off);
		if (w <= 0) {
			close(fd);
			return -EIO;
		}
		off += (size_t)w;
	}
	lseek(fd, 0, SEEK_SET);
	fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	return fd;
}

static int materialize_dir(struct vfs *v, struct task *t, const struct pdir *d);

int proc_open(struct vfs *v, struct task *t, struct vfs_path *p, int flags)
{
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		return -EACCES;
	if (S_ISDIR(p->st.st_mode) || strcmp(p->rel, ".") == 0) {
		struct pdir d;
		if (parse_dir(p->rel, &d) < 0)
			return -ENOENT;
		return materialize_dir(v, t, &d);
	}
	if (flags & O_DIRECTORY)
		return -ENOTDIR;
	/* A file: dir part + name. */
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", p->rel);
	char *slash = strrchr(dir, '/');
	const char *name = slash ? slash + 1 : dir;
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	if (!slash)
		name = p->rel;
	struct pdir d;
	if (parse_dir(dir, &d) < 0)
		return -ENOENT;

	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	int n = -ENOENT;
	char host[PATH_MAX];
	if (d.pid == 0) {
		if (strcmp(name, "mounts") == 0)
			n = vfs_mounts_text(v, buf, cap);
		else {
			snprintf(host, sizeof host, "/proc/%s%s%s", d.sub, d.sub[0] ? "/" : "", name);
			n = slurp(host, buf, cap);
		}
	} else if (strcmp(name, "mounts") == 0 || strcmp(name, "mountinfo") == 0) {
		n = vfs_mounts_text(v, buf, cap);
	} else if (strcmp(d.sub, "fdinfo") == 0) {
		snprintf(host, sizeof host, "/proc/%d/fdinfo/%s", d.pid, name);
		n = slurp(host, buf, cap);
	} else if (d.sub[0] == '\0') {
		snprintf(host, sizeof host, "/proc/%d/%s", d.tid ? d.tid : d.pid, name);
		n = slurp(host, buf, cap);
		if (n > 0) {
			n = (int)devirtualize(v, buf, (size_t)n, cap);
			if (strcmp(name, "status") == 0)
				n = (int)hide_outside_pids(buf, (size_t)n);
			n = (int)show_group_stop(d.tid ? d.tid : d.pid, name, buf, (size_t)n);
		}
	}
	int fd = n < 0 ? n : sealed_memfd(buf, (size_t)n);
	free(buf);
	return fd;
}

/* Directory listings: a scratch directory holding the entries as empty
 * placeholders, so that getdents64 runs in the kernel on a real fd. */
static int pv_counter;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path), 0;
}

static int add_placeholder(const char *dir, const char *name, enum pent type, const char *link)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (type == P_DIR)
		return mkdir(path, 0555);
	if (type == P_LINK)
		return symlink(link && link[0] ? link : "/", path);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

static int materialize_dir(struct vfs *v, struct task *t, const struct pdir *d)
{
	char dir[PATH_MAX];
	/* Keep the 64 newest listings; older ones are removed. */
	if (pv_counter >= 64) {
		snprintf(dir, sizeof dir, "%s/pv/%d", v->skel, pv_counter - 64);
		nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	}
	snprintf(dir, sizeof dir, "%s/pv/%d", v->skel, pv_counter++);
	if (mkdir(dir, 0755) < 0)
		return -errno;
	const struct pentry *tab = NULL;
	if (d->pid == 0) {
		if (d->sub[0] == '\0') {
			tab = top_entries;
			DIR *dp = opendir("/proc");
			struct dirent *de;
			while (dp && (de = readdir(dp)))
				if (all_digits(de->d_name, strlen(de->d_name)) &&
				    sandbox_pid(atoi(de->d_name), 0))
					add_placeholder(dir, de->d_name, P_DIR, NULL);
			if (dp)
				closedir(dp);
		} else if (strcmp(d->sub, "sys") == 0)
			tab = sys_entries;
		else if (strcmp(d->sub, "sys/kernel") == 0)
			tab = sys_kernel_entries;
		else if (strcmp(d->sub, "sys/kernel/random") == 0)
			tab = sys_random_entries;
		else if (strcmp(d->sub, "sys/vm") == 0)
			tab = sys_vm_entries;
	} else if (d->sub[0] == '\0') {
		tab = pid_entries;
	} else if (strcmp(d->sub, "fd") == 0 || strcmp(d->sub, "fdinfo") == 0 ||
		   strcmp(d->sub, "task") == 0) {
		char host[64];
		snprintf(host, sizeof host, "/proc/%d/%s", d->pid, d->sub);
		DIR *dp = opendir(host);
		struct dirent *de;
		while (dp && (de = readdir(dp))) {
			if (de->d_name[0] == '.')
				continue;
			if (d->sub[0] == 't') {
				if (sandbox_pid(atoi(de->d_name), d->pid))
					add_placeholder(dir, de->d_name, P_DIR, NULL);
				continue;
			}
			char link[PATH_MAX];
			if (fd_link(v, d->pid, atoi(de->d_name), link, sizeof link) == 0)
				add_placeholder(dir, de->d_name, d->sub[2] == 'i' ? P_FILE : P_LINK, link);
		}
		if (dp)
			closedir(dp);
	}
	(void)t;
	for (; tab && tab->name; tab++)
		add_placeholder(dir, tab->name, tab->type, NULL);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
