/* The run's directories, held for a moat that ends without its teardown
 * (scratch.h). */
#include "fs-emulation/scratch.h"

#include <dirent.h> /* DT_DIR, DT_UNKNOWN */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/creds.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; glibc 2.36 does not name it */
#endif

/* `on` is set once `path` is whole and cleared by whoever takes the
 * directory: the teardown (scratch_forget) or scratch_abandon. */
static struct {
	char path[PATH_MAX];
	int on;
} held[SCRATCH_MAX];

int scratch_hold(const char *dir)
{
	size_t n = strlen(dir);
	if (n >= PATH_MAX)
		return -ENAMETOOLONG;
	for (int i = 0; i < SCRATCH_MAX; i++) {
		if (__atomic_load_n(&held[i].on, __ATOMIC_ACQUIRE))
			continue;
		memcpy(held[i].path, dir, n + 1);
		__atomic_store_n(&held[i].on, 1, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

void scratch_forget(const char *dir)
{
	for (int i = 0; i < SCRATCH_MAX; i++)
		if (__atomic_load_n(&held[i].on, __ATOMIC_ACQUIRE) && !strcmp(held[i].path, dir))
			__atomic_store_n(&held[i].on, 0, __ATOMIC_RELEASE);
}

/* getdents64's record (glibc's readdir allocates: not here). */
struct dirent64_rec {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static bool empty_dir(int fd, dev_t dev, int depth, const char *top);

/* chmod of `name` in `fd`, never through a symbolic link (fchmodat2,
 * Linux 6.6; before it: nothing done). */
static int chmod_nofollow(int fd, const char *name, mode_t mode)
{
	return (int)syscall(SYS_fchmodat2, fd, name, mode, AT_SYMLINK_NOFOLLOW);
}

/* unlinkat of `name` in `fd`; *denied when `fd`'s own permissions
 * refused it (a directory made read-only: opened up, then tried again). */
static bool unlink_here(int fd, const char *name, int flags, bool *denied)
{
	if (unlinkat(fd, name, flags) == 0)
		return true;
	if (errno == EACCES || errno == EPERM)
		*denied = true;
	return false;
}

/* Remove `name` in the directory open at `fd` (on file system `dev`,
 * `depth` below the top directory `top`): true when it is gone; *denied
 * when `fd` refused an unlink of its own.  Every step is relative to an
 * fd and follows no symbolic link: what the sandbox left (or a handler
 * still running when a fatal signal came) cannot lead it out of `top`. */
static bool remove_entry(int fd, const char *name, unsigned char type, dev_t dev, int depth,
			 const char *top, bool *denied)
{
	if (type != DT_DIR && type != DT_UNKNOWN) /* a link goes, never what it names */
		return unlink_here(fd, name, 0, denied);
	/* an empty directory goes at once (a mount point answers EBUSY) */
	if (unlinkat(fd, name, AT_REMOVEDIR) == 0)
		return true;
	if (errno == ENOTDIR)
		return unlink_here(fd, name, 0, denied);
	if (errno == EACCES || errno == EPERM)
		*denied = true;
	struct stat st;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return unlink_here(fd, name, 0, denied);
	if (st.st_dev != dev && depth == 0) {
		/* A quota's tmpfs (fs-emulation/mount.c), mounted in moat's
		 * private namespace over an empty directory of the scratch. */
		char path[PATH_MAX];
		size_t tl = strlen(top), nl = strlen(name);
		if (tl + 1 + nl >= sizeof path)
			return false;
		memcpy(path, top, tl);
		path[tl] = '/';
		memcpy(path + tl + 1, name, nl + 1);
		return umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 &&
		       unlinkat(fd, name, AT_REMOVEDIR) == 0;
	}
	if (st.st_dev != dev || depth + 1 >= SCRATCH_DEPTH)
		return false;
	int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0 && errno == EACCES) {
		/* moat without root, a directory its sandbox made 0000 */
		chmod_nofollow(fd, name, 0700);
		sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (sub < 0)
		return false;
	bool emptied = empty_dir(sub, dev, depth + 1, top);
	close(sub);
	return emptied && unlink_here(fd, name, AT_REMOVEDIR, denied);
}

/* Remove what the directory open at `fd` holds: true when all of it is
 * gone.  A listing returns every entry that stays while others are
 * removed; a second pass, only after one that both removed and failed to
 * remove, is for a file system that does not keep to that.  (Never more:
 * a subtree that cannot go would be walked again at every level above.) */
static bool empty_dir(int fd, dev_t dev, int depth, const char *top)
{
	_Alignas(8) char buf[1024];
	for (int pass = 0; pass < 2; pass++) {
		bool removed = false, failed = false, denied = false;
		if (lseek(fd, 0, SEEK_SET) < 0)
			return false;
		long n;
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
			for (long off = 0; off < n;) {
				struct dirent64_rec *e = (struct dirent64_rec *)(buf + off);
				off += e->reclen;
				if (!strcmp(e->name, ".") || !strcmp(e->name, ".."))
					continue;
				if (remove_entry(fd, e->name, e->type, dev, depth, top, &denied))
					removed = true;
				else
					failed = true;
			}
		if (n < 0 || !failed)
			return n == 0;
		/* moat without root, a directory its sandbox made 0500: its
		 * own unlinks refused, opened up for the second pass — only
		 * when that changes something, so that a refusal that stays
		 * never makes a second pass (each would walk the subtree) */
		struct stat st;
		if (pass == 0 && denied && fstat(fd, &st) == 0 && (st.st_mode & 0300) != 0300 &&
		    fchmod(fd, 0700) == 0)
			removed = true;
		if (!removed)
			return false;
	}
	return false;
}

/* Remove directory `top` and all it holds. */
static void abandon_one(const char *top)
{
	struct stat st, up;
	if (lstat(top, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	/* The scratch itself a tmpfs (--disk-limit, in moat's private mount
	 * namespace): detached, its host directory is empty. */
	char parent[PATH_MAX];
	size_t tl = strlen(top);
	memcpy(parent, top, tl + 1);
	char *slash = strrchr(parent, '/');
	if (slash)
		*(slash == parent ? slash + 1 : slash) = '\0';
	if (slash && stat(parent, &up) == 0 && up.st_dev != st.st_dev &&
	    umount2(top, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 && lstat(top, &st) < 0)
		return;
	int fd = open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		empty_dir(fd, st.st_dev, 0, top);
		close(fd);
	}
	rmdir(top);
}

bool scratch_remove(const char *dir)
{
	abandon_one(dir);
	struct stat st;
	return lstat(dir, &st) < 0 && errno == ENOENT;
}

void scratch_abandon(void)
{
	/* From the loop's thread (a signal's handler) only the loop's
	 * capabilities are effective (core/creds.c): detaching a quota's
	 * mount takes SYS_ADMIN.  The fs ids are the caller's to restore
	 * (cgroup_abandon); the watchdog's thread never changed them. */
	creds_caps_back();
	for (int i = 0; i < SCRATCH_MAX; i++)
		if (__atomic_exchange_n(&held[i].on, 0, __ATOMIC_ACQ_REL))
			abandon_one(held[i].path);
}
