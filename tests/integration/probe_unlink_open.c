/* probe_unlink_open — a file unlinked while open lives on through its fds:
 * read, write, fstat (st_nlink 0), ftruncate, fchmod, another process's fd,
 * a reopen through /proc/self/fd/N, and a new file under the old name is a
 * different file.  It cannot get a name again (linkat of its magic link:
 * ENOENT).  A removed directory held open lists nothing and takes no new
 * entries. */
#include "probe.h"
#include <sys/wait.h>

static void rd(const char *step, int fd, off_t off)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof buf - 1, off);
	if (n < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	buf[n] = 0;
	printf("%s: \"%s\"\n", step, buf);
}

int main(void)
{
	struct stat st, st2;
	char self[64], target[PATH_MAX];
	probe_init();

	ok("mkfile f", mkfile("f", "hello"));
	int fd = okfd("open f O_RDWR", open("f", O_RDWR));
	int ro = okfd("open f O_RDONLY", open("f", O_RDONLY));
	ok("unlink f", unlink("f"));
	show("stat f", "f");
	pst("fstat fd", fstat(fd, &st), &st);
	rd("pread fd", fd, 0);
	ok("pwrite ' world' at 5", pwrite(fd, " world", 6, 5));
	rd("pread O_RDONLY fd (sees the write)", ro, 0);
	pst("fstat O_RDONLY fd", fstat(ro, &st), &st);
	ok("ftruncate fd 4", ftruncate(fd, 4));
	rd("pread O_RDONLY fd", ro, 0);
	ok("fchmod fd 0600", fchmod(fd, 0600));
	pst("fstat fd", fstat(fd, &st), &st);
	int dfd2 = okfd("dup fd", dup(fd));
	pst("fstat dup", fstat(dfd2, &st), &st);
	close(dfd2);

	/* the name is free again: a new, different file */
	ok("mkfile f (new)", mkfile("f", "second"));
	fstat(fd, &st);
	stat("f", &st2);
	printf("old fd and new f: %s\n", st.st_ino == st2.st_ino && st.st_dev == st2.st_dev ? "same file" : "different files");
	rd("pread old fd", fd, 0);
	cat("cat f", AT_FDCWD, "f");

	/* through /proc/self/fd */
	snprintf(self, sizeof self, "/proc/self/fd/%d", ro);
	ssize_t n = readlink(self, target, sizeof target - 1);
	if (n < 0)
		printf("readlink /proc/self/fd/N: %s\n", ename(errno));
	else {
		target[n] = 0;
		printf("readlink /proc/self/fd/N: %s\n", relpath(target));
	}
	int re = okfd("open /proc/self/fd/N O_RDONLY", open(self, O_RDONLY));
	if (re >= 0) {
		rd("pread reopened", re, 0);
		close(re);
	}
	re = okfd("open /proc/self/fd/N O_RDWR", open(self, O_RDWR));
	if (re >= 0) {
		ok("pwrite reopened", pwrite(re, "J", 1, 0));
		close(re);
	}
	rd("pread fd", fd, 0);
	ok("linkat /proc/self/fd/N again FOLLOW", syscall(SYS_linkat, AT_FDCWD, self, AT_FDCWD, "again", AT_SYMLINK_FOLLOW));
	show("stat again", "again");

	/* a second link keeps the file named */
	ok("mkfile h", mkfile("h", "h"));
	int hfd = okfd("open h", open("h", O_RDONLY));
	ok("link h h2", link("h", "h2"));
	ok("unlink h", unlink("h"));
	pst("fstat h fd (nlink 1)", fstat(hfd, &st), &st);
	ok("unlink h2", unlink("h2"));
	pst("fstat h fd (nlink 0)", fstat(hfd, &st), &st);
	close(hfd);

	/* another process holds the only fd */
	ok("mkfile c", mkfile("c", "child-data"));
	int cfd = okfd("open c", open("c", O_RDONLY));
	int sync[2];
	if (pipe(sync) < 0)
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char b;
		close(sync[1]);
		if (read(sync[0], &b, 1) < 0)
			_exit(1);
		rd("child: pread c after parent unlinked and closed", cfd, 0);
		fstat(cfd, &st);
		printf("child: nlink %lu\n", (unsigned long)st.st_nlink);
		_exit(0);
	}
	close(sync[0]);
	ok("parent: unlink c", unlink("c"));
	close(cfd);
	fflush(stdout);
	close(sync[1]);
	int status;
	waitpid(pid, &status, 0);

	/* a removed directory held open */
	ok("mkdir dir", mkdir("dir", 0755));
	int dfd = okfd("open dir", open("dir", O_RDONLY | O_DIRECTORY));
	ok("rmdir dir", rmdir("dir"));
	pst("fstat dir fd", fstat(dfd, &st), &st);
	char dents[1024];
	ok("getdents64 removed dir", syscall(SYS_getdents64, dfd, dents, sizeof dents));
	okfd("openat (dfd) x O_CREAT", openat(dfd, "x", O_WRONLY | O_CREAT, 0644));
	ok("mkdirat (dfd) y", mkdirat(dfd, "y", 0755));
	okfd("openat (dfd) .", openat(dfd, ".", O_RDONLY));
	ok("fstatat (dfd) ..", fstatat(dfd, "..", &st, 0));
	close(dfd);
	close(fd);
	close(ro);
	return probe_done();
}
