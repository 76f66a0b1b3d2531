/* probe_cwd — getcwd, chdir, fchdir; `..` at /, a renamed and a removed cwd,
 * cwd after fork (copied) and in a thread (shared). Paths are printed
 * relative to the starting directory ($START). */
#include "probe.h"
#include <pthread.h>
#include <sys/wait.h>

static void cwd(const char *step)
{
	char buf[PATH_MAX];
	if (!getcwd(buf, sizeof buf))
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: %s\n", step, relpath(buf));
}

static void *thread_chdir(void *unused)
{
	(void)unused;
	ok("thread: chdir d2/e", chdir("d2/e"));
	return NULL;
}

int main(void)
{
	char buf[PATH_MAX];
	struct stat a, b;
	probe_init();
	int start = okfd("open . O_DIRECTORY", open(".", O_RDONLY | O_DIRECTORY));

	cwd("getcwd");
	ok("mkdir d", mkdir("d", 0755));
	ok("mkdir d/e", mkdir("d/e", 0755));
	ok("mkfile d/e/file", mkfile("d/e/file", "in-e"));
	ok("mkfile f", mkfile("f", "x"));
	ok("symlink d ld", symlink("d", "ld"));
	ok("mkdir nox", mkdir("nox", 0600));

	/* chdir */
	ok("chdir d", syscall(SYS_chdir, "d"));
	cwd("getcwd");
	ok("chdir e", syscall(SYS_chdir, "e"));
	cwd("getcwd");
	cat("cat file (relative to cwd)", AT_FDCWD, "file");
	ok("chdir ..", syscall(SYS_chdir, ".."));
	cwd("getcwd");
	ok("chdir ./e/../..", syscall(SYS_chdir, "./e/../.."));
	cwd("getcwd");
	ok("chdir ld (symlink)", syscall(SYS_chdir, "ld"));
	cwd("getcwd (physical)");
	ok("chdir ..", syscall(SYS_chdir, ".."));
	ok("chdir f", syscall(SYS_chdir, "f"));
	ok("chdir f/", syscall(SYS_chdir, "f/"));
	ok("chdir missing", syscall(SYS_chdir, "missing"));
	ok("chdir \"\"", syscall(SYS_chdir, ""));
	ok("chdir nox (mode 0600)", syscall(SYS_chdir, "nox"));
	cwd("getcwd (unchanged)");

	/* fchdir */
	int dfd = okfd("open d O_DIRECTORY", open("d", O_RDONLY | O_DIRECTORY));
	int pfd = okfd("open d/e O_PATH", open("d/e", O_PATH));
	int ffd = okfd("open f O_RDONLY", open("f", O_RDONLY));
	ok("fchdir dfd", syscall(SYS_fchdir, dfd));
	cwd("getcwd");
	ok("fchdir O_PATH fd", syscall(SYS_fchdir, pfd));
	cwd("getcwd");
	cat("cat file", AT_FDCWD, "file");
	ok("fchdir file fd", syscall(SYS_fchdir, ffd));
	ok("fchdir closed fd", syscall(SYS_fchdir, 999));
	cwd("getcwd (unchanged)");
	ok("fchdir start", syscall(SYS_fchdir, start));
	cwd("getcwd");

	/* `..` at the root stays at the root */
	ok("chdir /", chdir("/"));
	cwd("getcwd");
	ok("chdir ..", chdir(".."));
	cwd("getcwd");
	ok("chdir ../../..", chdir("../../.."));
	cwd("getcwd");
	stat("/", &a);
	stat("..", &b);
	printf("stat .. vs stat /: %s\n", a.st_ino == b.st_ino && a.st_dev == b.st_dev ? "same" : "different");
	ok("fchdir start", fchdir(start));

	/* getcwd buffer sizes (raw syscall) */
	ok("getcwd size 1", syscall(SYS_getcwd, buf, 1) < 0 ? -1 : 0);
	ok("getcwd size 0", syscall(SYS_getcwd, buf, 0) < 0 ? -1 : 0);
	ok("getcwd size PATH_MAX", syscall(SYS_getcwd, buf, sizeof buf) < 0 ? -1 : 0);

	/* the cwd is renamed, then removed */
	ok("chdir d/e", chdir("d/e"));
	ok("rename ../../d ../../d2", rename("../../d", "../../d2"));
	cwd("getcwd after rename");
	cat("cat file", AT_FDCWD, "file");
	ok("fchdir start", fchdir(start));
	ok("mkdir gone", mkdir("gone", 0755));
	ok("chdir gone", chdir("gone"));
	ok("rmdir ../gone", rmdir("../gone"));
	cwd("getcwd in removed dir");
	okfd("open x O_CREAT in removed dir", open("x", O_CREAT | O_WRONLY, 0644));
	ok("mkdir y in removed dir", mkdir("y", 0755));
	ok("chdir .. from removed dir", chdir(".."));
	cwd("getcwd");
	ok("fchdir start", fchdir(start));

	/* fork copies the cwd; a thread shares it */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		ok("child: chdir d2", chdir("d2"));
		cwd("child: getcwd");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	cwd("parent: getcwd after child chdir");
	pthread_t t;
	pthread_create(&t, NULL, thread_chdir, NULL);
	pthread_join(t, NULL);
	cwd("main thread: getcwd after thread chdir");
	return probe_done();
}
