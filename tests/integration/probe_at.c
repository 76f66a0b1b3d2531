/* probe_at — a walk with the *at family relative to directory fds: plain,
 * O_PATH and dup'ed dirfds; a dirfd whose directory is renamed or removed;
 * dirfds across chdir and fork; absolute paths ignore the dirfd. */
#include "probe.h"
#include <sys/wait.h>

static const char *same_ino(int fd, const char *path)
{
	struct stat a, b;
	if (fstat(fd, &a) < 0 || stat(path, &b) < 0)
		return ename(errno);
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino ? "same" : "different";
}

int main(void)
{
	char abs[PATH_MAX + 32], buf[64];
	struct stat st;
	probe_init();

	ok("mkdir top", mkdir("top", 0755));
	ok("mkdir top/sub", mkdir("top/sub", 0755));
	int dir = okfd("open top O_DIRECTORY", open("top", O_RDONLY | O_DIRECTORY));
	int pth = okfd("open top O_PATH", open("top", O_PATH | O_DIRECTORY));

	/* a walk relative to dir */
	int fd = okfd("openat (top) sub/file O_CREAT", openat(dir, "sub/file", O_WRONLY | O_CREAT, 0640));
	ok("write", write(fd, "at-data", 7));
	close(fd);
	pst("fstatat (top) sub/file", fstatat(dir, "sub/file", &st, 0), &st);
	ok("mkdirat (top) sub/deeper", mkdirat(dir, "sub/deeper", 0750));
	cat("cat (top) sub/deeper/../file", dir, "sub/deeper/../file");
	ok("symlinkat file (top) sub/lnk", symlinkat("file", dir, "sub/lnk"));
	ok("readlinkat (top) sub/lnk", readlinkat(dir, "sub/lnk", buf, sizeof buf));
	cat("cat (top) sub/lnk", dir, "sub/lnk");
	ok("linkat (top) sub/file (top) hard", linkat(dir, "sub/file", dir, "hard", 0));
	pst("fstatat (top) hard", fstatat(dir, "hard", &st, 0), &st);
	ok("faccessat (top) sub/file R_OK", faccessat(dir, "sub/file", R_OK, 0));
	ok("fchmodat (top) sub/file 0600", fchmodat(dir, "sub/file", 0600, 0));
	ok("fchownat (top) sub/file self", fchownat(dir, "sub/file", geteuid(), getegid(), 0));
	ok("renameat (top) sub/file -> sub/deeper/moved", renameat(dir, "sub/file", dir, "sub/deeper/moved"));
	show("stat top/sub/deeper/moved", "top/sub/deeper/moved");
	cat("cat (top) sub/lnk (now dangling)", dir, "sub/lnk");
	ok("unlinkat (top) sub/lnk", unlinkat(dir, "sub/lnk", 0));
	ok("unlinkat (top) sub/deeper REMOVEDIR", unlinkat(dir, "sub/deeper", AT_REMOVEDIR));
	ok("truncate via openat (top) hard O_TRUNC", (fd = openat(dir, "hard", O_WRONLY | O_TRUNC)) < 0 ? -1 : 0);
	close(fd);
	show("stat top/sub/deeper/moved (size 0)", "top/sub/deeper/moved");

	/* the same through an O_PATH dirfd and a dup */
	cat("cat (O_PATH top) sub/deeper/moved", pth, "sub/deeper/moved");
	ok("mkdirat (O_PATH top) p", mkdirat(pth, "p", 0755));
	int dupfd = okfd("dup top", dup(dir));
	ok("unlinkat (dup top) p REMOVEDIR", unlinkat(dupfd, "p", AT_REMOVEDIR));
	int cx = okfd("F_DUPFD_CLOEXEC O_PATH top", fcntl(pth, F_DUPFD_CLOEXEC, 0));
	ok("faccessat (dup O_PATH) hard F_OK", faccessat(cx, "hard", F_OK, 0));
	close(dupfd);
	close(cx);

	/* dirfd and "..": one level up is the start */
	fd = okfd("openat (top) .. O_DIRECTORY", openat(dir, "..", O_RDONLY | O_DIRECTORY));
	printf("(top)/.. vs .: %s\n", same_ino(fd, "."));
	close(fd);

	/* relative to the dirfd, not the cwd */
	ok("chdir top/sub", chdir("top/sub"));
	ok("faccessat (top) hard", faccessat(dir, "hard", F_OK, 0));
	ok("faccessat AT_FDCWD hard", faccessat(AT_FDCWD, "hard", F_OK, 0));
	ok("chdir ../..", chdir("../.."));

	/* the directory behind the fd is renamed: the fd follows it */
	ok("rename top renamed", rename("top", "renamed"));
	cat("cat (top fd) sub/deeper/moved", dir, "sub/deeper/moved");
	ok("mkdirat (top fd) new", mkdirat(dir, "new", 0755));
	show("stat renamed/new", "renamed/new");
	fd = okfd("openat (top fd) .", openat(dir, ".", O_RDONLY | O_DIRECTORY));
	printf("(top fd)/. vs renamed: %s\n", same_ino(fd, "renamed"));
	close(fd);

	/* fork: the child walks from the inherited dirfd */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		cat("child: cat (top fd) sub/deeper/moved", dir, "sub/deeper/moved");
		ok("child: unlinkat (top fd) new REMOVEDIR", unlinkat(dir, "new", AT_REMOVEDIR));
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	show("stat renamed/new", "renamed/new");

	/* absolute paths ignore the dirfd; a file dirfd is ENOTDIR */
	snprintf(abs, sizeof abs, "%s/renamed/hard", strcmp(probe_start, "/") ? probe_start : "");
	int ffd = okfd("open renamed/hard", open("renamed/hard", O_RDONLY));
	ok("faccessat (closed fd) $START/renamed/hard", faccessat(999, abs, F_OK, 0));
	ok("faccessat (file fd) $START/renamed/hard", faccessat(ffd, abs, F_OK, 0));
	ok("faccessat (file fd) x", faccessat(ffd, "x", F_OK, 0));
	ok("faccessat (closed fd) x", faccessat(999, "x", F_OK, 0));
	ok("faccessat (fd -5) x", faccessat(-5, "x", F_OK, 0));
	close(ffd);

	/* the directory behind the fd is removed */
	ok("mkdir gone", mkdir("gone", 0755));
	int gfd = okfd("open gone", open("gone", O_RDONLY | O_DIRECTORY));
	ok("rmdir gone", rmdir("gone"));
	okfd("openat (gone fd) x O_CREAT", openat(gfd, "x", O_WRONLY | O_CREAT, 0644));
	ok("mkdirat (gone fd) y", mkdirat(gfd, "y", 0755));
	pst("fstatat (gone fd) \"\" EMPTY_PATH", fstatat(gfd, "", &st, AT_EMPTY_PATH), &st);
	close(gfd);
	close(dir);
	close(pth);
	return probe_done();
}
