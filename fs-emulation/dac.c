/* The root inside's DAC override (docs/filesystem.md "Permissions").
 *
 * The sandbox's root is served as host root without capabilities, so the
 * kernel's permission checks on what moat does for it are those of a
 * plain owner: a directory another sandbox id closed (0700) stays closed.
 * A container's root passes them: CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH over what its namespace owns.  moat gives the same
 * over the sandbox's own layers — a tmpfs mount, an overlay's upper
 * layer — and nothing else: what the kernel refused with EACCES is done
 * again with those two capabilities, for a node owned by host root or one
 * of the sandbox's ids, decided on an fd of the node itself or of the
 * directory the call changes (never by a name a racing rename could point
 * elsewhere).  A host user's file renamed into the sandbox's layers from a
 * writable bind stays closed: its owner is not the sandbox's. */
#include "fs-emulation/vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/creds.h"

/* A mount of the sandbox's own, and a caller the override is for (the
 * node's owner aside). */
static bool own_layer(const struct vfs_mount *m, bool upper)
{
	return m && (m->kind == MNT_TMPFS || (m->kind == MNT_OVERLAY && upper)) && creds_dac_may(0);
}

bool vfs_dac_fd(const struct vfs_mount *m, bool upper, int fd)
{
	struct stat st;
	return own_layer(m, upper) && fd >= 0 && fstat(fd, &st) == 0 && creds_dac_may(st.st_uid);
}

int vfs_dac_reopen(const struct vfs_mount *m, bool upper, int dir, const char *name, int flags,
		   const struct stat *walked)
{
	if (!own_layer(m, upper))
		return -EACCES;
	int o = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (o < 0 && errno == EACCES && vfs_dac_fd(m, upper, dir)) {
		creds_dac_begin(); /* its directory's search permission */
		o = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		creds_dac_end();
	}
	if (o < 0)
		return -EACCES;
	struct stat st;
	int fd = -EACCES;
	/* the node the walk found, and the sandbox's */
	if (fstat(o, &st) == 0 && st.st_dev == walked->st_dev && st.st_ino == walked->st_ino &&
	    creds_dac_may(st.st_uid)) {
		char self[64];
		snprintf(self, sizeof self, "/proc/self/fd/%d", o);
		creds_dac_begin();
		fd = open(self, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
		creds_dac_end();
	}
	close(o);
	return fd;
}

int vfs_dac_open_beneath(const struct vfs_mount *m, int root, const char *rel)
{
	if (!own_layer(m, false) || strlen(rel) >= PATH_MAX)
		return -EACCES;
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", rel);
	int cur = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (char *s = buf, *e; cur >= 0 && s && *s; s = e) {
		e = strchr(s, '/');
		if (e)
			*e++ = '\0';
		if (!strcmp(s, ".") || !strcmp(s, "..")) { /* the walk gives none */
			close(cur);
			return -EACCES;
		}
		int next = openat(cur, s, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = next < 0 ? errno : 0;
		if (err == EACCES && vfs_dac_fd(m, false, cur)) {
			creds_dac_begin();
			next = openat(cur, s, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			err = next < 0 ? errno : 0;
			creds_dac_end();
		}
		close(cur);
		if (next < 0)
			return err == ELOOP ? -ENOTDIR : -err;
		cur = next;
	}
	return cur < 0 ? -errno : cur;
}

bool vfs_dac_enter(const struct vfs_path *p)
{
	if (errno != EACCES || p->kind != VN_HOST || p->parent < 0 ||
	    !vfs_dac_fd(p->mnt, p->upper, p->parent))
		return false;
	creds_dac_begin();
	return true;
}

bool vfs_dac_enter_node(const struct vfs_path *p)
{
	int e = errno;
	if ((e != EACCES && e != EPERM) || p->kind != VN_HOST || p->parent < 0 ||
	    !vfs_dac_fd(p->mnt, p->upper, p->parent) || !creds_dac_may(p->st.st_uid))
		return false;
	creds_sticky_begin();
	return true;
}

void vfs_dac_leave(void)
{
	int e = errno;
	creds_dac_end();
	errno = e;
}

int vfs_dac_access(const struct vfs_path *p, int mode)
{
	if (p->kind != VN_HOST || p->parent < 0 || !own_layer(p->mnt, p->upper))
		return -EACCES;
	int o;
	VFS_DAC_RETRY(p, o, openat(p->parent, p->name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
	if (o < 0)
		return -EACCES;
	struct stat st;
	int r = -EACCES;
	if (fstat(o, &st) == 0 && st.st_dev == p->st.st_dev && st.st_ino == p->st.st_ino &&
	    creds_dac_may(st.st_uid)) {
		creds_dac_begin();
		r = faccessat(o, "", mode, AT_EACCESS | AT_EMPTY_PATH) < 0 ? -errno : 0;
		creds_dac_end();
	}
	close(o);
	return r;
}

int vfs_dac_unlink_sticky(const struct vfs_path *p, bool dir)
{
	struct stat d;
	if (p->kind != VN_HOST || p->parent < 0 || !own_layer(p->mnt, p->upper) ||
	    fstat(p->parent, &d) < 0 || !(d.st_mode & S_ISVTX) || !creds_dac_may(d.st_uid) ||
	    !creds_dac_may(p->st.st_uid)) {
		errno = EPERM;
		return -1;
	}
	creds_sticky_begin();
	int r = unlinkat(p->parent, p->name, dir ? AT_REMOVEDIR : 0);
	vfs_dac_leave();
	return r;
}

int vfs_dac_rename(const struct vfs_path *a, const struct vfs_path *b, unsigned flags)
{
	struct stat d;
	int e = errno; /* the kernel's answer, where the override does not apply */
	bool ok = a->kind == VN_HOST && b->kind == VN_HOST && a->parent >= 0 && b->parent >= 0 &&
		  vfs_dac_fd(a->mnt, a->upper, a->parent) &&
		  vfs_dac_fd(b->mnt, b->upper, b->parent);
	if (!ok) {
		errno = e;
		return -1;
	}
	/* a sticky directory on either side: root's CAP_FOWNER for a node of
	 * another sandbox id */
	bool sticky = (fstat(a->parent, &d) == 0 && (d.st_mode & S_ISVTX)) ||
		      (fstat(b->parent, &d) == 0 && (d.st_mode & S_ISVTX));
	if (sticky &&
	    (!creds_dac_may(a->st.st_uid) || (b->exists && !creds_dac_may(b->st.st_uid)))) {
		errno = e;
		return -1;
	}
	if (sticky)
		creds_sticky_begin();
	else
		creds_dac_begin();
	int r = (int)syscall(SYS_renameat2, a->parent, a->name, b->parent, b->name, flags);
	vfs_dac_leave();
	return r;
}
