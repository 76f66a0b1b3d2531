/* probe_umask — the umask applied to what open(O_CREAT), O_TMPFILE, mkdir,
 * mknod (FIFO, regular) and bind(AF_UNIX) create; never to symlinks, chmod
 * or an existing file; set-id and sticky bits; inheritance: a forked child
 * gets a copy, threads and CLONE_FS children share one (it lives in the
 * fs_struct with the cwd). */
#include "probe.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

static void mode(const char *step, const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: %c%04o\n", step, ftype(st.st_mode), (unsigned)(st.st_mode & 07777));
}

static void fmode(const char *step, int fd)
{
	struct stat st;
	if (fd < 0)
		printf("%s: %s\n", step, ename(errno));
	else if (fstat(fd, &st) < 0)
		printf("%s: fstat %s\n", step, ename(errno));
	else
		printf("%s: %c%04o\n", step, ftype(st.st_mode), (unsigned)(st.st_mode & 07777));
}

static void create_all(const char *tag)
{
	char p[64], step[96];
	int fd;
	snprintf(p, sizeof p, "%s-open", tag);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (fd >= 0)
		close(fd);
	snprintf(step, sizeof step, "%s open 0666", tag);
	mode(step, p);
	snprintf(p, sizeof p, "%s-open777", tag);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0777);
	if (fd >= 0)
		close(fd);
	snprintf(step, sizeof step, "%s open 0777", tag);
	mode(step, p);
	snprintf(p, sizeof p, "%s-dir", tag);
	mkdir(p, 0777);
	snprintf(step, sizeof step, "%s mkdir 0777", tag);
	mode(step, p);
	snprintf(p, sizeof p, "%s-fifo", tag);
	mknod(p, S_IFIFO | 0666, 0);
	snprintf(step, sizeof step, "%s mknod FIFO 0666", tag);
	mode(step, p);
	snprintf(p, sizeof p, "%s-reg", tag);
	mknod(p, S_IFREG | 0666, 0);
	snprintf(step, sizeof step, "%s mknod REG 0666", tag);
	mode(step, p);
	snprintf(p, sizeof p, "%s-mkfifo", tag);
	mkfifo(p, 0777);
	snprintf(step, sizeof step, "%s mkfifo 0777", tag);
	mode(step, p);
	fd = open(".", O_TMPFILE | O_RDWR, 0666);
	snprintf(step, sizeof step, "%s O_TMPFILE 0666", tag);
	fmode(step, fd);
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof p, "%s-sock", tag);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
	if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0) {
		snprintf(step, sizeof step, "%s bind AF_UNIX", tag);
		mode(step, p);
	} else {
		printf("%s bind AF_UNIX: %s\n", tag, ename(errno));
	}
	if (s >= 0)
		close(s);
	snprintf(p, sizeof p, "%s-link", tag);
	symlink("x", p);
	snprintf(step, sizeof step, "%s symlink", tag);
	mode(step, p);
}

static void *thread_umask(void *unused)
{
	(void)unused;
	printf("thread: umask(077) returned %04o\n", (unsigned)umask(077));
	return NULL;
}

static int clone_child(void *unused)
{
	(void)unused;
	umask(0077);
	return 0;
}

int main(void)
{
	char name[32];
	probe_init();
	printf("umask(0) returned %04o\n", (unsigned)umask(0));
	create_all("u000");
	printf("umask(077) returned %04o\n", (unsigned)umask(077));
	create_all("u077");
	umask(027);
	create_all("u027");
	umask(0707);
	create_all("u707");
	umask(0777);
	create_all("u777");
	printf("umask(07777) returned %04o\n", (unsigned)umask(07777));
	printf("umask(022) returned %04o (only the 0777 bits are kept)\n", (unsigned)umask(022));

	/* not applied */
	ok("mkfile m", mkfile("m", ""));
	ok("chmod m 0777", chmod("m", 0777));
	mode("m after chmod", "m");
	int fd = open("m", O_RDONLY);
	ok("fchmod m 0666", fchmod(fd, 0666));
	close(fd);
	mode("m after fchmod", "m");
	fd = open("m", O_WRONLY | O_CREAT, 0600);
	close(fd);
	mode("m after O_CREAT 0600 of the existing file", "m");

	/* set-id and sticky bits */
	umask(0);
	fd = open("s", O_WRONLY | O_CREAT | O_EXCL, 07777);
	close(fd);
	mode("umask 0: open 07777", "s");
	mkdir("sd", 07777);
	mode("umask 0: mkdir 07777", "sd");
	umask(022);
	ok("mkdir sg", mkdir("sg", 0755));
	ok("chmod sg 02755", chmod("sg", 02755));
	ok("mkdir sg/sub 0777", mkdir("sg/sub", 0777));
	mode("sg/sub (setgid inherited)", "sg/sub");

	/* fork: a copy */
	umask(022);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		create_all("child-inherits-022");
		umask(077);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	ok("mkfile after-fork", mkfile("after-fork", ""));
	mode("parent after the child's umask(077)", "after-fork");

	/* a thread: shared */
	pthread_t t;
	pthread_create(&t, NULL, thread_umask, NULL);
	pthread_join(t, NULL);
	ok("mkfile after-thread", mkfile("after-thread", ""));
	mode("main thread after the thread's umask(077)", "after-thread");
	ok("mkdir after-thread-dir", mkdir("after-thread-dir", 0777));
	mode("mkdir after the thread's umask(077)", "after-thread-dir");
	printf("umask(022) returned %04o\n", (unsigned)umask(022));

	/* clone(CLONE_FS): shared, like the cwd.  The parent creates before it
	 * calls umask itself. */
	static char stack[64 * 1024];
	pid = clone(clone_child, stack + sizeof stack, CLONE_FS | SIGCHLD, NULL);
	if (pid < 0)
		printf("clone CLONE_FS: %s\n", ename(errno));
	waitpid(pid, &status, 0);
	for (int i = 0; i < 3; i++) {
		static const char *const what[] = { "open", "mkdir", "mknod FIFO" };
		snprintf(name, sizeof name, "after-clone-%d", i);
		if (i == 0)
			fd = open(name, O_WRONLY | O_CREAT, 0666), close(fd);
		else if (i == 1)
			mkdir(name, 0777);
		else
			mknod(name, S_IFIFO | 0666, 0);
		char step[96];
		snprintf(step, sizeof step, "%s after a CLONE_FS child's umask(077)", what[i]);
		mode(step, name);
	}
	printf("umask(022) returned %04o\n", (unsigned)umask(022));
	return probe_done();
}
