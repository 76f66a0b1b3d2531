/* probe_tmpfile — O_TMPFILE and giving it a name: an unnamed file (nlink 0,
 * mode from the umask, not in the listing) is linked in with
 * linkat(AT_FDCWD, "/proc/self/fd/N", dir, name, AT_SYMLINK_FOLLOW) — the
 * man page's way for unprivileged callers — once: after its names are gone
 * again it cannot be relinked.  O_TMPFILE|O_EXCL files never can (ENOENT).
 * Without AT_SYMLINK_FOLLOW the magic link itself would be linked: it
 * lives in /proc, another mount (EXDEV). */
#include "probe.h"
#include <dirent.h>

static char self[64];

static const char *magic(int fd)
{
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	return self;
}

static long flink(int fd, int dirfd, const char *name, int flags)
{
	return syscall(SYS_linkat, AT_FDCWD, magic(fd), dirfd, name, flags);
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return d ? n : -1;
}

int main(void)
{
	struct stat st;
	probe_init();
	ok("mkdir d", mkdir("d", 0755));
	int before = entries(".");

	int fd = okfd("open . O_TMPFILE|O_RDWR 0666", open(".", O_TMPFILE | O_RDWR, 0666));
	pst("fstat", fstat(fd, &st), &st);
	ok("write", write(fd, "tmpdata", 7));
	printf("listing of . unchanged: %s\n", entries(".") == before ? "yes" : "no");
	ok("linkat fd magic named (no FOLLOW: links the /proc link)", flink(fd, AT_FDCWD, "named", 0));
	ok("linkat fd magic named FOLLOW", flink(fd, AT_FDCWD, "named", AT_SYMLINK_FOLLOW));
	show("stat named", "named");
	pst("fstat", fstat(fd, &st), &st);
	cat("cat named", AT_FDCWD, "named");
	ok("linkat fd magic named FOLLOW (exists)", flink(fd, AT_FDCWD, "named", AT_SYMLINK_FOLLOW));
	ok("linkat fd magic d/second FOLLOW", flink(fd, AT_FDCWD, "d/second", AT_SYMLINK_FOLLOW));
	pst("fstat (two names)", fstat(fd, &st), &st);
	ok("unlink named", unlink("named"));
	ok("unlink d/second", unlink("d/second"));
	pst("fstat (no names)", fstat(fd, &st), &st);
	ok("linkat fd magic again FOLLOW (was linked once)", flink(fd, AT_FDCWD, "again", AT_SYMLINK_FOLLOW));
	show("stat again", "again");
	close(fd);

	/* O_TMPFILE|O_EXCL: never linkable */
	fd = okfd("open . O_TMPFILE|O_EXCL|O_RDWR", open(".", O_TMPFILE | O_EXCL | O_RDWR, 0600));
	ok("linkat excl magic x FOLLOW", flink(fd, AT_FDCWD, "x", AT_SYMLINK_FOLLOW));
	show("stat x", "x");
	close(fd);
	fd = okfd("open d O_TMPFILE|O_EXCL|O_RDWR", open("d", O_TMPFILE | O_EXCL | O_RDWR, 0600));
	ok("linkat excl magic d/x FOLLOW", flink(fd, AT_FDCWD, "d/x", AT_SYMLINK_FOLLOW));
	show("stat d/x", "d/x");
	close(fd);

	/* via a dirfd, write-only, into another directory, a 0555 directory */
	int dfd = okfd("open d", open("d", O_RDONLY | O_DIRECTORY));
	fd = okfd("openat (dfd) . O_TMPFILE|O_WRONLY 0640", openat(dfd, ".", O_TMPFILE | O_WRONLY, 0640));
	ok("write", write(fd, "wo", 2));
	pst("fstat", fstat(fd, &st), &st);
	ok("linkat fd magic (dfd) wo FOLLOW", flink(fd, dfd, "wo", AT_SYMLINK_FOLLOW));
	cat("cat d/wo", AT_FDCWD, "d/wo");
	close(fd);
	fd = okfd("open d O_TMPFILE|O_RDWR", open("d", O_TMPFILE | O_RDWR, 0600));
	ok("linkat fd magic top FOLLOW (other dir, same mount)", flink(fd, AT_FDCWD, "top", AT_SYMLINK_FOLLOW));
	show("stat top", "top");
	ok("mkdir ro 0555", mkdir("ro", 0555));
	ok("linkat fd magic ro/x FOLLOW (0555 dir)", flink(fd, AT_FDCWD, "ro/x", AT_SYMLINK_FOLLOW));
	ok("linkat fd magic missing/x FOLLOW", flink(fd, AT_FDCWD, "missing/x", AT_SYMLINK_FOLLOW));
	ok("linkat fd magic y/ FOLLOW (trailing slash)", flink(fd, AT_FDCWD, "y/", AT_SYMLINK_FOLLOW));
	close(fd);
	close(dfd);

	/* reopening the unnamed file through its magic link */
	fd = okfd("open . O_TMPFILE|O_RDWR", open(".", O_TMPFILE | O_RDWR, 0600));
	ok("write", write(fd, "reopen", 6));
	cat("cat /proc/self/fd/N", AT_FDCWD, magic(fd));
	int ro = okfd("open /proc/self/fd/N O_RDONLY", open(magic(fd), O_RDONLY));
	pst("fstat reopened", fstat(ro, &st), &st);
	close(ro);
	ok("fchmod fd 0400", fchmod(fd, 0400));
	ok("linkat fd magic m FOLLOW (mode 0400)", flink(fd, AT_FDCWD, "m", AT_SYMLINK_FOLLOW));
	show("stat m", "m");
	close(fd);

	/* the umask applies to O_TMPFILE's mode */
	umask(077);
	fd = okfd("umask 077, open . O_TMPFILE|O_RDWR 0666", open(".", O_TMPFILE | O_RDWR, 0666));
	pst("fstat", fstat(fd, &st), &st);
	close(fd);
	umask(022);
	return probe_done();
}
