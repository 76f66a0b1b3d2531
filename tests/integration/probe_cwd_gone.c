/* probe_cwd_gone — the cwd after its directory was removed (by this
 * process, a child, or a thread; after a rename; with a new directory of
 * the same name in its place): getcwd(2) answers ENOENT (glibc's getcwd
 * passes that on; the "(unreachable)" prefix is for a cwd outside the
 * process's root, which an unprivileged probe cannot arrange), "." still
 * names the dead directory (nlink 0, empty, takes no entries), ".." still
 * leads to the parent, /proc/self/cwd says "(deleted)", and a forked child
 * inherits all of it. */
#include "probe.h"
#include <pthread.h>
#include <sys/wait.h>

static void raw_getcwd(const char *step)
{
	char buf[PATH_MAX];
	long r = syscall(SYS_getcwd, buf, sizeof buf);
	if (r < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: %s\n", step, relpath(buf));
}

static void glibc_getcwd(const char *step)
{
	char buf[PATH_MAX];
	if (!getcwd(buf, sizeof buf))
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: %s\n", step, relpath(buf));
}

static void proc_cwd(const char *step)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/cwd", buf, sizeof buf - 1);
	if (n < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	buf[n] = 0;
	printf("%s: %s\n", step, relpath(buf));
}

/* Everything a removed cwd answers. */
static void probe_dead(const char *who)
{
	char step[128];
	struct stat st;
	snprintf(step, sizeof step, "%s: getcwd syscall", who);
	raw_getcwd(step);
	snprintf(step, sizeof step, "%s: glibc getcwd", who);
	glibc_getcwd(step);
	snprintf(step, sizeof step, "%s: readlink /proc/self/cwd", who);
	proc_cwd(step);
	snprintf(step, sizeof step, "%s: stat .", who);
	pst(step, stat(".", &st), &st);
	int fd = open(".", O_RDONLY | O_DIRECTORY);
	snprintf(step, sizeof step, "%s: open .", who);
	okfd(step, fd);
	if (fd >= 0) {
		char d[512];
		snprintf(step, sizeof step, "%s: getdents64 .", who);
		ok(step, syscall(SYS_getdents64, fd, d, sizeof d));
		close(fd);
	}
	snprintf(step, sizeof step, "%s: open x O_CREAT", who);
	okfd(step, open("x", O_WRONLY | O_CREAT, 0644));
	snprintf(step, sizeof step, "%s: mkdir y", who);
	ok(step, mkdir("y", 0755));
	snprintf(step, sizeof step, "%s: stat ../marker", who);
	pst(step, stat("../marker", &st), &st);
}

static void *thread_rmdir(void *arg)
{
	ok("thread: rmdir", rmdir((const char *)arg));
	return NULL;
}

int main(void)
{
	char abs[PATH_MAX + 16];
	probe_init();
	int start = open(".", O_RDONLY | O_DIRECTORY);
	ok("mkfile marker", mkfile("marker", "m"));

	/* removed by this process */
	ok("mkdir a", mkdir("a", 0755));
	ok("chdir a", chdir("a"));
	raw_getcwd("getcwd syscall before");
	ok("rmdir ../a", rmdir("../a"));
	probe_dead("self-removed");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		probe_dead("forked child");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	ok("chdir ..", chdir(".."));
	raw_getcwd("getcwd syscall after chdir ..");

	/* removed by a child process */
	ok("mkdir b", mkdir("b", 0755));
	ok("chdir b", chdir("b"));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		ok("child: rmdir ../b", rmdir("../b"));
		_exit(0);
	}
	waitpid(pid, &status, 0);
	raw_getcwd("getcwd syscall after a child removed it");
	ok("fchdir start", fchdir(start));

	/* removed by a thread, through an absolute path */
	ok("mkdir c", mkdir("c", 0755));
	ok("chdir c", chdir("c"));
	snprintf(abs, sizeof abs, "%s/c", strcmp(probe_start, "/") ? probe_start : "");
	pthread_t t;
	pthread_create(&t, NULL, thread_rmdir, abs);
	pthread_join(t, NULL);
	raw_getcwd("getcwd syscall after a thread removed it");
	ok("fchdir start", fchdir(start));

	/* renamed, then removed; and a new directory of the old name */
	ok("mkdir d", mkdir("d", 0755));
	ok("chdir d", chdir("d"));
	ok("rename ../d ../d2", rename("../d", "../d2"));
	proc_cwd("readlink /proc/self/cwd after rename");
	raw_getcwd("getcwd syscall after rename");
	ok("rmdir ../d2", rmdir("../d2"));
	raw_getcwd("getcwd syscall after rmdir");
	ok("mkdir ../d (a new one)", mkdir("../d", 0755));
	ok("mkfile ../d/new", mkfile("../d/new", ""));
	raw_getcwd("getcwd syscall with a new d");
	struct stat st;
	ok("stat new (not in the dead cwd)", stat("new", &st));
	ok("stat ../d/new", stat("../d/new", &st));
	ok("chdir ../d", chdir("../d"));
	raw_getcwd("getcwd syscall in the new d");
	ok("fchdir start", fchdir(start));
	close(start);
	return probe_done();
}
