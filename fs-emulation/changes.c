/* The files a run created or changed in the sandbox's writable mounts, for
 * the run report (docs/limits.md "files"). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-emulation/vfs.h"

struct walk_ctx {
	const struct vfs *v;
	struct timespec since;
	vfs_change_fn fn;
	void *arg;
	unsigned left; /* files still to report */
	struct vfs_changes_cut *cut;
};

static bool newer(const struct timespec *a, const struct timespec *since)
{
	return a->tv_sec > since->tv_sec ||
	       (a->tv_sec == since->tv_sec && a->tv_nsec >= since->tv_nsec);
}

/* An overlay placeholder (a hard link to a phantom inode standing for a
 * lower entry, or a placeholder directory's .moat-lower marker) is not a
 * file of the run's.  Any other name is, whatever it starts with: the
 * sandbox may name its files .moat-anything. */
static bool phantom(const struct vfs *v, const struct stat *st)
{
	for (int i = 0; i < v->nphantom; i++)
		if (v->phantom[i].dev == st->st_dev && v->phantom[i].ino == st->st_ino)
			return true;
	return false;
}

static void walk_dir(struct walk_ctx *w, int dfd, char *vpath, size_t vlen, int depth)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) < 0 || phantom(w->v, &st))
			continue;
		size_t nl = strlen(n);
		bool fits = vlen + 1 + nl + 1 <= PATH_MAX;
		if (S_ISDIR(st.st_mode)) {
			/* One fd a level: deeper than that, or past what a path
			 * can name, the directory is counted, not walked. */
			if (!fits || depth >= VFS_CHANGES_DEPTH) {
				w->cut->dirs++;
				continue;
			}
		} else if (!S_ISREG(st.st_mode) || !newer(&st.st_ctim, &w->since)) {
			continue;
		} else if (!fits || !w->left) {
			w->cut->files++;
			continue;
		}
		snprintf(vpath + vlen, PATH_MAX - vlen, "%s%s",
			 vlen && vpath[vlen - 1] == '/' ? "" : "/", n);
		size_t sub = strlen(vpath);
		if (S_ISDIR(st.st_mode)) {
			int c = openat(dirfd(d), n,
				       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (c >= 0)
				walk_dir(w, c, vpath, sub, depth + 1);
		} else {
			w->left--;
			int f = openat(dirfd(d), n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			w->fn(w->arg, vpath, &st, f);
			if (f >= 0)
				close(f);
		}
		vpath[vlen] = '\0';
	}
	closedir(d);
}

void vfs_changed_files(const struct vfs *v, struct timespec since, unsigned max, vfs_change_fn fn,
		       void *arg, struct vfs_changes_cut *cut)
{
	*cut = (struct vfs_changes_cut){ 0, 0 };
	struct walk_ctx w = { v, since, fn, arg, max, cut };
	for (int i = 0; i < v->nmnt; i++) {
		const struct vfs_mount *m = &v->mnt[i];
		int root = -1;
		if ((m->kind == MNT_TMPFS || m->kind == MNT_BIND) && !m->ro)
			root = m->root_fd;
		else if (m->kind == MNT_OVERLAY && m->upper_real)
			root = m->upper_fd;
		if (root < 0)
			continue;
		int d = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (d < 0)
			continue;
		char vpath[PATH_MAX];
		snprintf(vpath, sizeof vpath, "%s", strcmp(m->vpath, "/") ? m->vpath : "");
		walk_dir(&w, d, vpath, strlen(vpath), 0);
	}
}
