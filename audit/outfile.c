/* moat's own output files (see outfile.h for the rules and why). */
#include "audit/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

/* The fd a name stands for when a shell's redirection would read it so:
 * "-" (stderr), /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N;
 * -1 for any other name. */
static int named_fd(const char *path)
{
	if (!strcmp(path, "-") || !strcmp(path, "/dev/stderr"))
		return 2;
	if (!strcmp(path, "/dev/stdout"))
		return 1;
	const char *n = NULL;
	if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	if (!n || !*n)
		return -1;
	char *end;
	long v = strtol(n, &end, 10);
	return *end || v < 0 || v > INT_MAX ? -1 : (int)v;
}

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
	snprintf(err, errlen, "%s: %s", path, what);
	return -1;
}

int outfile_open(struct outfile *o, const char *path, bool append, mode_t mode, char *err,
		 size_t errlen)
{
	*o = (struct outfile){ .path = path, .fd = -1, .dirfd = -1 };
	int std = named_fd(path);
	if (std >= 0) {
		int fl = fcntl(std, F_GETFL);
		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
			return fail(err, errlen, path,
				    "not an fd open for writing in moat's caller");
		o->fd = fcntl(std, F_DUPFD_CLOEXEC, 3);
		return o->fd < 0 ? fail(err, errlen, path, strerror(errno)) : 0;
	}
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) > NAME_MAX)
		return fail(err, errlen, path, "not a file name (name a file, not a directory)");
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	snprintf(o->name, sizeof o->name, "%s", name);
	/* No link on the way either: one left in a directory that a sandbox
	 * of an earlier run could write (out/sub -> /etc/sudoers.d) would
	 * have moat make its file, as root, wherever it points. */
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS };
	o->dirfd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
	if (o->dirfd < 0) {
		char what[PATH_MAX + 200];
		if (errno == ELOOP)
			snprintf(
				what, sizeof what,
				"a symbolic link in the way to %s: moat follows none for its own output "
				"(name the directory without links: realpath %s)",
				dir, dir);
		else
			snprintf(what, sizeof what, "its directory %s: %s", dir, strerror(errno));
		return fail(err, errlen, path, what);
	}
	int flags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
		    (append ? O_APPEND : 0);
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 3; tries++) {
		fd = openat(o->dirfd, name, flags);
		if (fd < 0 && errno == ENOENT) {
			fd = openat(o->dirfd, name, flags | O_CREAT | O_EXCL, mode);
			o->created = fd >= 0;
			if (fd < 0 && errno == EEXIST)
				continue; /* made meanwhile: look again */
		}
		break;
	}
	if (fd < 0) {
		int e = errno;
		outfile_close(o, false);
		if (e == ELOOP)
			return fail(
				err, errlen, path,
				"a symbolic link: moat never follows one for its own output (a link "
				"in a directory a sandbox could write may be a sandbox's); remove it "
				"or name the file itself");
		if (e == ENXIO)
			return fail(err, errlen, path,
				    "a FIFO no one reads: start its reader first");
		return fail(err, errlen, path, strerror(e));
	}
	o->fd = fd;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		outfile_close(o, o->created);
		return fail(err, errlen, path, strerror(errno));
	}
	if (S_ISREG(st.st_mode)) {
		/* A second name could be a hard link a sandbox made to a file
		 * of the host's: writing would change that file. */
		if (st.st_nlink != 1) {
			outfile_close(o, false);
			return fail(
				err, errlen, path,
				"a file with other hard links: moat writes only a file that has no "
				"other name; remove it first");
		}
		o->regular = true;
		o->dev = st.st_dev;
		o->ino = st.st_ino;
		return 0;
	}
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		/* A reader is there (the open did not fail with ENXIO): from
		 * now on moat's writes may wait for it, as any writer's. */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		close(o->dirfd);
		o->dirfd = -1;
		return 0;
	}
	outfile_close(o, false);
	return fail(err, errlen, path, "not a regular file, a FIFO or a character device");
}

bool outfile_below(const struct outfile *o, int dir_fd)
{
	struct stat top;
	if (o->dirfd < 0 || dir_fd < 0 || fstat(dir_fd, &top) < 0)
		return false;
	int cur = openat(o->dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	bool below = false;
	for (int depth = 0; cur >= 0 && depth < 4096; depth++) {
		struct stat st;
		if (fstat(cur, &st) < 0)
			break;
		if (st.st_dev == top.st_dev && st.st_ino == top.st_ino) {
			below = true;
			break;
		}
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat ust;
		bool root = up < 0 || fstat(up, &ust) < 0 ||
			    (ust.st_dev == st.st_dev && ust.st_ino == st.st_ino);
		close(cur);
		cur = up;
		if (root)
			break;
	}
	if (cur >= 0)
		close(cur);
	return below;
}

static int print_to(int fd, void (*write_fn)(FILE *f, void *arg), void *arg)
{
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	write_fn(f, arg);
	return fclose(f) == 0 ? 0 : -EIO;
}

int outfile_rewrite(struct outfile *o, void (*write_fn)(FILE *f, void *arg), void *arg)
{
	if (o->fd < 0)
		return -EBADF;
	if (!o->regular) {
		int fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : print_to(fd, write_fn, arg);
	}
	/* Still the file opened at the start, under its name, with no other
	 * name: rewrite it in place. */
	struct stat st;
	if (fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_dev == o->dev && st.st_ino == o->ino && st.st_nlink == 1) {
		if (ftruncate(o->fd, 0) < 0 || lseek(o->fd, 0, SEEK_SET) < 0)
			return -errno;
		int fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : print_to(fd, write_fn, arg);
	}
	/* The name was taken over meanwhile (a link, a FIFO, another file):
	 * a new file, renamed over whatever is there, never opened through
	 * it. */
	unsigned char rnd[6];
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
		return -EIO;
	char tmp[NAME_MAX + 1];
	snprintf(tmp, sizeof tmp, ".moat-out-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5]);
	int fd = openat(o->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int r = print_to(fd, write_fn, arg);
	if (r == 0 && renameat(o->dirfd, tmp, o->dirfd, o->name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(o->dirfd, tmp, 0);
	return r;
}

void outfile_close(struct outfile *o, bool discard)
{
	if (discard && o->created && o->regular && o->dirfd >= 0) {
		struct stat st;
		if (fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_dev == o->dev && st.st_ino == o->ino)
			unlinkat(o->dirfd, o->name, 0);
	}
	if (o->fd >= 0)
		close(o->fd);
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->fd = o->dirfd = -1;
}
