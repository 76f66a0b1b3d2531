/* Synthetic /proc: only sandbox processes, every file generated for the
 * sandbox, served as sealed memfds.  Host processes do not exist here, and
 * nothing names the host: its host name, moat's pid, the host paths of
 * mounts and the scratch directory (rule 6).
 *
 * This file walks /proc and serves it: which names exist, their links,
 * the listings of its directories; the contents of its files are made by
 * the generators of procfs_gen.c (procfs.h). */
#include "core/creds.h"
#include "fs-emulation/fs.h"
#include "fs-emulation/vfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/task.h"
#include "fs-emulation/procfs.h"

enum pent { P_FILE, P_DIR, P_LINK };

struct pentry {
	const char *name;
	enum pent type;
};

/* The top level: besides these, one directory per sandbox process. */
static const struct pentry top_entries[] = {
	{ "self", P_LINK },    { "thread-self", P_LINK },
	{ "mounts", P_LINK },  { "cpuinfo", P_FILE },
	{ "meminfo", P_FILE }, { "stat", P_FILE },
	{ "uptime", P_FILE },  { "loadavg", P_FILE },
	{ "version", P_FILE }, { "filesystems", P_FILE },
	{ "sys", P_DIR },      { "config.gz", P_FILE },
	{ "net", P_LINK },     { NULL, 0 },
};
static const struct pentry pid_entries[] = {
	{ "stat", P_FILE },   { "statm", P_FILE },   { "status", P_FILE },    { "cmdline", P_FILE },
	{ "comm", P_FILE },   { "environ", P_FILE }, { "maps", P_FILE },      { "smaps", P_FILE },
	{ "limits", P_FILE }, { "mounts", P_FILE },  { "mountinfo", P_FILE }, { "cgroup", P_FILE },
	{ "auxv", P_FILE },   { "exe", P_LINK },     { "cwd", P_LINK },       { "root", P_LINK },
	{ "fd", P_DIR },      { "fdinfo", P_DIR },   { "task", P_DIR },       { "pagemap", P_FILE },
	{ "net", P_DIR },     { NULL, 0 },
};
/* /proc/PID/net: the kernel's files of the sandbox's own network
 * namespace (procfs_gen.c procfs_gen_net). */
static const struct pentry net_entries[] = {
	{ "tcp", P_FILE },  { "tcp6", P_FILE },  { "udp", P_FILE },
	{ "udp6", P_FILE }, { "unix", P_FILE },  { "if_inet6", P_FILE },
	{ "dev", P_FILE },  { "route", P_FILE }, { NULL, 0 },
};
static const struct pentry sys_entries[] = {
	{ "kernel", P_DIR }, { "vm", P_DIR }, { "fs", P_DIR }, { NULL, 0 }
};
/* The read-only values (procfs_gen.c sys_passthrough) are the host
 * kernel's constants and limits, which hold in the sandbox too. */
/* clang-format off */
static const struct pentry sys_kernel_entries[] = {
	{ "hostname", P_FILE }, { "domainname", P_FILE }, { "osrelease", P_FILE },
	{ "ostype", P_FILE }, { "pid_max", P_FILE }, { "random", P_DIR },
	{ "cap_last_cap", P_FILE }, { "ngroups_max", P_FILE }, { "overflowuid", P_FILE },
	{ "overflowgid", P_FILE }, { "tainted", P_FILE }, { "threads-max", P_FILE },
	{ "shmmax", P_FILE }, { "shmall", P_FILE }, { "shmmni", P_FILE }, { "msgmax", P_FILE },
	{ "msgmnb", P_FILE }, { "msgmni", P_FILE }, { "sem", P_FILE }, { NULL, 0 },
};
static const struct pentry sys_fs_entries[] = {
	{ "pipe-max-size", P_FILE }, { "pipe-user-pages-soft", P_FILE },
	{ "pipe-user-pages-hard", P_FILE }, { "lease-break-time", P_FILE }, { "nr_open", P_FILE },
	{ "file-max", P_FILE }, { NULL, 0 },
};
/* clang-format on */
static const struct pentry sys_random_entries[] = { { "uuid", P_FILE },
						    { "boot_id", P_FILE },
						    { NULL, 0 } };
static const struct pentry sys_vm_entries[] = { { "overcommit_memory", P_FILE },
						{ "max_map_count", P_FILE },
						{ "mmap_min_addr", P_FILE },
						{ NULL, 0 } };

/* An entry the host's kernel may not have: config.gz is there only with
 * CONFIG_IKCONFIG_PROC. */
/* ... and net (a link at the top, a directory per process) only where
 * the sandbox has a network namespace of its own to show. */
static bool entry_present(const struct vfs *v, const struct pentry *e)
{
	if (strcmp(e->name, "net") == 0)
		return v->proc_net;
	return strcmp(e->name, "config.gz") != 0 || access("/proc/config.gz", R_OK) == 0;
}

static const struct pentry *find_entry(const struct vfs *v, const struct pentry *tab,
				       const char *name)
{
	for (; tab->name; tab++)
		if (strcmp(tab->name, name) == 0)
			return entry_present(v, tab) ? tab : NULL;
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

/* Split `dir` into *d (procfs.h): 0, or -ENOENT for a task/ entry that is
 * no tid. */
static int parse_dir(const char *dir, struct procfs_dir *d)
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
	st->st_mode = type == P_DIR    ? S_IFDIR | 0555
		      : type == P_LINK ? S_IFLNK | 0777
				       : S_IFREG | 0444;
	st->st_nlink = type == P_DIR ? 2 : 1;
	st->st_uid = v->uid;
	st->st_gid = v->gid;
	st->st_blksize = 1024;
}

/* What the sandbox is shown for host path `host` (a file an fd or a
 * mapping names): its virtual path; the name itself where it names no
 * host place (a memfd, SysV memory, the host devices /dev has); and a
 * neutral name for a host file outside every mount, whose path would
 * tell the sandbox where it is on the host. */
void procfs_shown_path(struct vfs *v, const char *host, char *out, size_t len)
{
	static const char deleted[] = " (deleted)";
	static const char *const devs[] = { "/dev/null",   "/dev/zero",    "/dev/full",
					    "/dev/random", "/dev/urandom", NULL };
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", host);
	size_t n = strlen(path);
	bool gone = n > sizeof deleted - 1 && strcmp(path + n - (sizeof deleted - 1), deleted) == 0;
	if (gone)
		path[n - (sizeof deleted - 1)] = '\0';
	bool keep = strncmp(path, "/memfd:", 7) == 0 || strncmp(path, "/SYSV", 5) == 0;
	for (const char *const *d = devs; *d && !keep; d++)
		keep = strcmp(path, *d) == 0;
	char vp[PATH_MAX];
	if (keep)
		snprintf(out, len, "%s", host);
	else if (vfs_vpath_of_host(v, path, vp, sizeof vp) == 0)
		snprintf(out, len, "%s%s", vp, gone ? deleted : "");
	else
		snprintf(out, len, "anon_inode:[moat-unknown]");
}

/* Is `pid` the caller's own process?  (Its /proc is always its to read:
 * creds_proc_own_begin.) */
static bool own_pid(const struct task *t, pid_t pid)
{
	return t && t->proc && t->proc->tgid == pid;
}

static void look_begin(const struct task *t, pid_t pid)
{
	creds_proc_begin();
	if (own_pid(t, pid))
		creds_proc_own_begin();
}

static void look_end(const struct task *t, pid_t pid)
{
	if (own_pid(t, pid))
		creds_proc_own_end();
	creds_proc_end();
}

static int fd_link(struct vfs *v, const struct task *t, pid_t pid, int fd, char *link, size_t len)
{
	char hp[64];
	snprintf(hp, sizeof hp, "/proc/%d/fd/%d", pid, fd);
	struct stat st;
	look_begin(t, pid);
	int sr = stat(hp, &st);
	look_end(t, pid);
	if (sr < 0)
		return -ENOENT;
	const char *vp = reg_get(st.st_dev, st.st_ino);
	if (vp) {
		snprintf(link, len, "%s", vp);
		return 0;
	}
	char host[PATH_MAX];
	look_begin(t, pid);
	ssize_t n = readlink(hp, host, sizeof host - 1);
	look_end(t, pid);
	if (n < 0)
		return -ENOENT;
	host[n] = '\0';
	if (host[0] != '/')
		snprintf(link, len, "%s", host); /* pipe:[...], socket:[...], anon_inode:... */
	else
		procfs_shown_path(v, host, link, len);
	return 0;
}

/* /proc/PID/cwd: where the cwd is now (it follows renames), and, as the
 * kernel writes it, " (deleted)" after a removed one. */
static void cwd_link(struct vfs *v, struct proc *p, char *link, size_t len)
{
	struct fsctx *fs = p->fs;
	char now[PATH_MAX];
	int r = fs->fd >= 0 ? fs_vpath_of_fd(v, fs->fd, now, sizeof now) : -EBADF;
	if (r == 0)
		snprintf(fs->cwd, sizeof fs->cwd, "%s", now);
	snprintf(link, len, "%s%s", fs->cwd, r == -ENOENT || fs->gone ? " (deleted)" : "");
}

int procfs_walk_step(struct vfs *v, struct task *t, const char *dir, const char *name,
		     struct stat *st, char *link, size_t linklen, int *magic_fd, pid_t *magic_pid)
{
	struct procfs_dir d;
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
		else if (strcmp(d.sub, "sys/fs") == 0)
			tab = sys_fs_entries;
		else if (d.sub[0])
			return -ENOENT;
		if (tab == top_entries && all_digits(name, strlen(name))) {
			if (!sandbox_pid(atoi(name), 0))
				return -ENOENT;
			synth_stat(st, P_DIR, v);
			return 0;
		}
		const struct pentry *e = find_entry(v, tab, name);
		if (!e)
			return -ENOENT;
		synth_stat(st, e->type, v);
		if (strcmp(name, "self") == 0 && tab == top_entries)
			snprintf(link, linklen, "%d", self);
		else if (strcmp(name, "thread-self") == 0 && tab == top_entries)
			snprintf(link, linklen, "%d/task/%d", self, t ? t->tid : 0);
		else if (strcmp(name, "mounts") == 0 && tab == top_entries)
			snprintf(link, linklen, "self/mounts");
		else if (strcmp(name, "net") == 0 && tab == top_entries)
			snprintf(link, linklen, "self/net");
		return 0;
	}
	if (!sandbox_pid(d.pid, 0) || (d.tid && !sandbox_pid(d.tid, d.pid)))
		return -ENOENT;
	struct proc *p = proc_find(d.pid);
	if (!p)
		return -ENOENT;
	if (d.sub[0] == '\0') {
		const struct pentry *e = find_entry(v, pid_entries, name);
		if (!e)
			return -ENOENT;
		synth_stat(st, e->type, v);
		if (strcmp(name, "exe") == 0)
			snprintf(link, linklen, "%s", p->exe);
		else if (strcmp(name, "cwd") == 0)
			cwd_link(v, p, link, linklen);
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
		if (fd_link(v, t, d.pid, fd, tmp, sizeof tmp) < 0)
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
	if (strcmp(d.sub, "net") == 0 && v->proc_net) {
		const struct pentry *e = find_entry(v, net_entries, name);
		if (!e)
			return -ENOENT;
		synth_stat(st, e->type, v);
		return 0;
	}
	return -ENOENT;
}

/* ---- serving ---- */

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

static int materialize_dir(struct vfs *v, struct task *t, const struct procfs_dir *d);

int procfs_open(struct vfs *v, struct task *t, struct vfs_path *p, int flags)
{
	/* O_CREAT of a file that exists only opens it, as on Linux. */
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return -EACCES;
	if (S_ISDIR(p->st.st_mode) || strcmp(p->rel, ".") == 0) {
		struct procfs_dir d;
		if (parse_dir(p->rel, &d) < 0)
			return -ENOENT;
		/* The listing is moat's, in its skeleton: made and opened
		 * with the skeleton's ids (creds_skel_begin). */
		creds_skel_begin(v->uid, v->gid);
		int fd = materialize_dir(v, t, &d);
		creds_skel_end();
		return fd;
	}
	if (flags & O_DIRECTORY)
		return -ENOTDIR;
	/* A file: dir part + name. */
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", p->rel);
	char *slash = strrchr(dir, '/');
	const char *name = slash ? slash + 1 : p->rel;
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	struct procfs_dir d;
	if (parse_dir(dir, &d) < 0)
		return -ENOENT;
	if (d.pid && !d.sub[0] && strcmp(name, "pagemap") == 0)
		return procfs_open_pagemap(t, &d);

	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		return -ENOMEM;
	int r;
	if (d.pid == 0)
		r = procfs_gen_top(v, d.sub, name, out);
	else if (strcmp(d.sub, "fdinfo") == 0 && all_digits(name, strlen(name)))
		r = procfs_gen_fdinfo(d.pid, own_pid(t, d.pid), name, out);
	else if (d.sub[0] == '\0')
		r = procfs_gen_pid(v, t, &d, name, out);
	else if (strcmp(d.sub, "net") == 0 && v->proc_net && find_entry(v, net_entries, name))
		r = procfs_gen_net(v, d.tid ? d.tid : d.pid, name, out);
	else
		r = -ENOENT;
	if (fclose(out) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = held_admit(v, len); /* the sandbox's memory, held by moat */
	int fd = r < 0 ? r : sealed_memfd(buf, len);
	free(buf);
	if (fd >= 0 && held_track(fd) < 0) {
		close(fd);
		return -ENOMEM;
	}
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

/* Listings are kept in moat's skeleton (a tmpfs: memory) while a program
 * may still read them: the PV_KEEP newest, and PV_ENTRIES_MAX entries in
 * all, a listing's own entries past that left out.  A program with more
 * fds than that sees a /proc/PID/fd cut short; without the bound, a
 * sandbox listing its 1M fds 64 times kept GBs in the host's memory. */
#define PV_KEEP 64
#define PV_ENTRIES_MAX 32768
static unsigned pv_entries[PV_KEEP], pv_total, pv_cur;
static int pv_oldest;

/* Remove the oldest listing, and its meaning from the registry (its inode
 * number may come back). */
static void pv_drop_oldest(struct vfs *v)
{
	char dir[PATH_MAX];
	struct stat st;
	snprintf(dir, sizeof dir, "%s/pv/%d", v->skel, pv_oldest);
	if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		reg_forget(st.st_dev, st.st_ino);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	pv_total -= pv_entries[pv_oldest % PV_KEEP];
	pv_entries[pv_oldest % PV_KEEP] = 0;
	pv_oldest++;
}

static int add_placeholder(const char *dir, const char *name, enum pent type, const char *link)
{
	if (pv_cur >= PV_ENTRIES_MAX)
		return -1;
	pv_cur++;
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

static int materialize_dir(struct vfs *v, struct task *t, const struct procfs_dir *d)
{
	char dir[PATH_MAX];
	while (pv_oldest < pv_counter &&
	       (pv_counter - pv_oldest >= PV_KEEP || pv_total >= PV_ENTRIES_MAX / 2))
		pv_drop_oldest(v);
	pv_cur = 0;
	int me = pv_counter;
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
		else if (strcmp(d->sub, "sys/fs") == 0)
			tab = sys_fs_entries;
	} else if (d->sub[0] == '\0') {
		tab = pid_entries;
	} else if (strcmp(d->sub, "net") == 0 && v->proc_net) {
		tab = net_entries;
	} else if (strcmp(d->sub, "fd") == 0 || strcmp(d->sub, "fdinfo") == 0 ||
		   strcmp(d->sub, "task") == 0) {
		char host[64];
		snprintf(host, sizeof host, "/proc/%d/%s", d->pid, d->sub);
		look_begin(t, d->pid);
		DIR *dp = opendir(host);
		look_end(t, d->pid);
		struct dirent *de;
		while (dp && pv_cur < PV_ENTRIES_MAX && (de = readdir(dp))) {
			if (de->d_name[0] == '.')
				continue;
			if (d->sub[0] == 't') {
				if (sandbox_pid(atoi(de->d_name), d->pid))
					add_placeholder(dir, de->d_name, P_DIR, NULL);
				continue;
			}
			char link[PATH_MAX];
			if (fd_link(v, t, d->pid, atoi(de->d_name), link, sizeof link) == 0)
				add_placeholder(dir, de->d_name, d->sub[2] == 'i' ? P_FILE : P_LINK,
						link);
		}
		if (dp)
			closedir(dp);
	}
	for (; tab && tab->name; tab++)
		if (entry_present(v, tab))
			add_placeholder(dir, tab->name, tab->type, NULL);
	pv_entries[me % PV_KEEP] = pv_cur;
	pv_total += pv_cur;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
