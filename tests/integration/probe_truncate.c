/* probe_truncate — truncate(2) and ftruncate(2): growing (a hole of zeros),
 * shrinking, the file offset left alone, through a symlink, and the
 * errors: a read-only fd (EINVAL, not EBADF), a directory (EISDIR by path,
 * EINVAL by fd), a FIFO or pipe (EINVAL), no write permission (EACCES),
 * negative lengths (EINVAL), RLIMIT_FSIZE (EFBIG). */
#include "probe.h"
#include <signal.h>
#include <sys/resource.h>

static void sz(const char *step, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: size=%lld\n", step, (long long)st.st_size);
}

/* The bytes of a file, NULs shown as '0'. */
static void dump(const char *step, const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = '0';
	buf[n] = 0;
	printf("%s: \"%s\"\n", step, buf);
}

int main(void)
{
	probe_init();
	signal(SIGXFSZ, SIG_IGN);
	ok("mkfile f", mkfile("f", "abcdef"));

	/* by path */
	ok("truncate f 10 (grow)", truncate("f", 10));
	dump("f", "f");
	ok("truncate f 3 (shrink)", truncate("f", 3));
	dump("f", "f");
	ok("truncate f 3 (same)", truncate("f", 3));
	ok("truncate f 0", truncate("f", 0));
	sz("f", "f");
	ok("truncate f -1", truncate("f", -1));
	ok("mkfile f", mkfile("f", "abcdef"));
	ok("symlink f lf", symlink("f", "lf"));
	ok("truncate lf 2 (follows)", truncate("lf", 2));
	dump("f", "f");
	show("lstat lf", "lf");
	ok("mkdir d", mkdir("d", 0755));
	ok("truncate d", truncate("d", 0));
	ok("truncate missing", truncate("missing", 0));
	ok("truncate f/ (trailing slash)", truncate("f/", 0));
	ok("truncate \"\"", truncate("", 0));
	ok("mkfifo p", mkfifo("p", 0644));
	ok("truncate p (fifo)", truncate("p", 0));
	ok("mkfile ro", mkfile("ro", "readonly"));
	ok("chmod ro 0444", chmod("ro", 0444));
	ok("truncate ro (0444, own file)", truncate("ro", 1));
	sz("ro", "ro");
	ok("mkdir nx", mkdir("nx", 0755));
	ok("mkfile nx/f", mkfile("nx/f", "x"));
	ok("chmod nx 0600", chmod("nx", 0600));
	ok("truncate nx/f (dir not searchable)", truncate("nx/f", 0));
	ok("chmod nx 0755", chmod("nx", 0755));

	/* by fd */
	int fd = okfd("open f O_RDWR", open("f", O_RDWR));
	ok("lseek 2 SET", lseek(fd, 2, SEEK_SET));
	ok("ftruncate 8 (grow)", ftruncate(fd, 8));
	ok("lseek CUR (offset unchanged)", lseek(fd, 0, SEEK_CUR));
	ok("ftruncate 1 (shrink below the offset)", ftruncate(fd, 1));
	ok("lseek CUR (offset unchanged)", lseek(fd, 0, SEEK_CUR));
	ok("write X at offset 2", write(fd, "X", 1));
	dump("f", "f");
	ok("ftruncate -5", ftruncate(fd, -5));
	close(fd);
	fd = okfd("open f O_RDONLY", open("f", O_RDONLY));
	ok("ftruncate O_RDONLY fd", ftruncate(fd, 0));
	close(fd);
	fd = okfd("open f O_WRONLY|O_APPEND", open("f", O_WRONLY | O_APPEND));
	ok("ftruncate O_APPEND fd 1", ftruncate(fd, 1));
	close(fd);
	dump("f", "f");
	fd = okfd("open d O_DIRECTORY", open("d", O_RDONLY | O_DIRECTORY));
	ok("ftruncate dir fd", ftruncate(fd, 0));
	close(fd);
	int pp[2];
	if (pipe(pp) == 0) {
		ok("ftruncate pipe", ftruncate(pp[1], 0));
		close(pp[0]);
		close(pp[1]);
	}
	ok("ftruncate closed fd", ftruncate(999, 0));
	fd = okfd("open ro O_RDONLY (0444)", open("ro", O_RDONLY));
	ok("ftruncate it", ftruncate(fd, 0));
	close(fd);

	/* another fd of the file sees the new size at once */
	fd = okfd("open f O_RDWR", open("f", O_RDWR));
	int fd2 = okfd("open f O_RDONLY", open("f", O_RDONLY));
	ok("truncate f 5 by path", truncate("f", 5));
	struct stat st;
	fstat(fd2, &st);
	printf("fstat other fd: size=%lld\n", (long long)st.st_size);
	ok("ftruncate fd 2", ftruncate(fd, 2));
	fstat(fd2, &st);
	printf("fstat other fd: size=%lld\n", (long long)st.st_size);
	close(fd);
	close(fd2);

	/* RLIMIT_FSIZE (SIGXFSZ ignored: the call fails with EFBIG) */
	struct rlimit rl = { 4096, 4096 };
	ok("setrlimit FSIZE 4096", setrlimit(RLIMIT_FSIZE, &rl));
	ok("truncate f 8192 (over the limit)", truncate("f", 8192));
	sz("f", "f");
	ok("truncate f 4096 (at the limit)", truncate("f", 4096));
	fd = okfd("open f O_RDWR", open("f", O_RDWR));
	ok("ftruncate 8192 (over the limit)", ftruncate(fd, 8192));
	close(fd);
	sz("f", "f");
	return probe_done();
}
