/* probe_open_flags — open(2) flag combinations probe_open does not cover:
 * O_CREAT|O_EXCL against every kind of existing name, O_TRUNC with each
 * access mode and on non-files, O_APPEND with pwrite and lseek, O_DIRECTORY
 * and O_NOFOLLOW through symlinks, O_CREAT through dangling symlinks and
 * with trailing slashes, write opens of directories, O_TMPFILE's argument
 * checks (probe_tmpfile covers linking). */
#include "probe.h"

static long op(const char *path, int flags) { return syscall(SYS_open, path, flags, 0644); }

static void size_of(const char *step, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: size=%lld\n", step, (long long)st.st_size);
}

/* open, print the outcome, close. */
static void try_open(const char *step, const char *path, int flags)
{
	int fd = okfd(step, op(path, flags));
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	char buf[64];
	struct stat st;
	int fd;
	probe_init();

	ok("mkfile f", mkfile("f", "0123456789"));
	ok("mkdir d", mkdir("d", 0755));
	ok("mkfile d/g", mkfile("d/g", "g"));
	ok("symlink f lf", symlink("f", "lf"));
	ok("symlink d ld", symlink("d", "ld"));
	ok("symlink nowhere dang", symlink("nowhere", "dang"));
	ok("symlink missing/x dangdir", symlink("missing/x", "dangdir"));
	ok("symlink newdir/ dangslash", symlink("newdir/", "dangslash"));
	ok("symlink dang dang2 (chain)", symlink("dang", "dang2"));
	ok("mkfifo p", mkfifo("p", 0644));

	/* O_CREAT|O_EXCL: any existing name, even a symlink, is EEXIST */
	try_open("O_CREAT|O_EXCL f (file)", "f", O_WRONLY | O_CREAT | O_EXCL);
	try_open("O_CREAT|O_EXCL d (dir)", "d", O_RDONLY | O_CREAT | O_EXCL);
	try_open("O_CREAT|O_EXCL lf (link to file)", "lf", O_WRONLY | O_CREAT | O_EXCL);
	try_open("O_CREAT|O_EXCL ld (link to dir)", "ld", O_WRONLY | O_CREAT | O_EXCL);
	try_open("O_CREAT|O_EXCL dang2 (link chain)", "dang2", O_WRONLY | O_CREAT | O_EXCL);
	try_open("O_CREAT|O_EXCL p (fifo)", "p", O_WRONLY | O_CREAT | O_EXCL);
	try_open("O_CREAT|O_EXCL ld/g (link mid-path)", "ld/g", O_WRONLY | O_CREAT | O_EXCL);
	try_open("O_CREAT|O_EXCL ld/new (link mid-path)", "ld/new", O_WRONLY | O_CREAT | O_EXCL);
	show("stat d/new", "d/new");
	try_open("O_CREAT|O_EXCL new/ (trailing slash)", "new/", O_WRONLY | O_CREAT | O_EXCL);
	try_open("O_EXCL without O_CREAT f", "f", O_RDONLY | O_EXCL);
	fd = okfd("O_CREAT 0600 on existing f", syscall(SYS_open, "f", O_RDONLY | O_CREAT, 0600));
	pst("fstat f (mode unchanged)", fstat(fd, &st), &st);
	close(fd);

	/* O_TRUNC */
	fd = okfd("O_RDONLY|O_TRUNC f", op("f", O_RDONLY | O_TRUNC));
	ok("read after O_RDONLY|O_TRUNC", read(fd, buf, sizeof buf));
	close(fd);
	size_of("stat f", "f");
	ok("mkfile f 10 bytes", mkfile("f", "0123456789"));
	try_open("O_WRONLY|O_TRUNC lf (through link)", "lf", O_WRONLY | O_TRUNC);
	size_of("stat f", "f");
	show("lstat lf (still a link)", "lf");
	try_open("O_RDONLY|O_TRUNC d (dir)", "d", O_RDONLY | O_TRUNC);
	try_open("O_RDONLY|O_TRUNC|O_DIRECTORY d", "d", O_RDONLY | O_TRUNC | O_DIRECTORY);
	try_open("O_RDWR|O_TRUNC|O_NONBLOCK p (fifo)", "p", O_RDWR | O_TRUNC | O_NONBLOCK);
	ok("mkfile ro 10 bytes", mkfile("ro", "0123456789"));
	ok("chmod ro 0444", chmod("ro", 0444));
	try_open("O_RDONLY|O_TRUNC ro (0444)", "ro", O_RDONLY | O_TRUNC);
	size_of("stat ro", "ro");
	try_open("O_RDONLY ro (0444)", "ro", O_RDONLY);

	/* O_APPEND: every write goes to the end, pwrite too (a Linux bug the
	 * man page documents); reads follow the file offset */
	ok("mkfile a", mkfile("a", "start"));
	fd = okfd("O_RDWR|O_APPEND a", op("a", O_RDWR | O_APPEND));
	ok("lseek CUR after open", lseek(fd, 0, SEEK_CUR));
	ok("read 3", read(fd, buf, 3));
	ok("write -1-", write(fd, "-1-", 3));
	ok("lseek CUR after write", lseek(fd, 0, SEEK_CUR));
	ok("pwrite -2- at 0", pwrite(fd, "-2-", 3, 0));
	ok("lseek CUR after pwrite", lseek(fd, 0, SEEK_CUR));
	ok("lseek 1 SET", lseek(fd, 1, SEEK_SET));
	ok("write -3-", write(fd, "-3-", 3));
	close(fd);
	cat("cat a", AT_FDCWD, "a");
	fd = okfd("O_WRONLY|O_APPEND|O_TRUNC a", op("a", O_WRONLY | O_APPEND | O_TRUNC));
	ok("write x", write(fd, "x", 1));
	close(fd);
	cat("cat a", AT_FDCWD, "a");
	fd = okfd("O_RDONLY|O_APPEND a", op("a", O_RDONLY | O_APPEND));
	ok("write on O_RDONLY|O_APPEND", write(fd, "y", 1));
	close(fd);

	/* O_DIRECTORY */
	try_open("O_DIRECTORY f (file)", "f", O_RDONLY | O_DIRECTORY);
	try_open("O_DIRECTORY lf (link to file)", "lf", O_RDONLY | O_DIRECTORY);
	try_open("O_DIRECTORY ld (link to dir)", "ld", O_RDONLY | O_DIRECTORY);
	try_open("O_DIRECTORY dang (dangling)", "dang", O_RDONLY | O_DIRECTORY);
	try_open("O_DIRECTORY p (fifo)", "p", O_RDONLY | O_DIRECTORY | O_NONBLOCK);
	try_open("O_DIRECTORY|O_NOFOLLOW ld", "ld", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	try_open("O_DIRECTORY|O_RDWR d", "d", O_RDWR | O_DIRECTORY);
	try_open("O_DIRECTORY|O_CREAT newd (new)", "newd", O_RDONLY | O_DIRECTORY | O_CREAT);
	show("stat newd", "newd");
	try_open("O_DIRECTORY|O_CREAT d (existing dir)", "d", O_RDONLY | O_DIRECTORY | O_CREAT);
	try_open("O_DIRECTORY|O_CREAT . (the start dir)", ".", O_RDONLY | O_DIRECTORY | O_CREAT);
	try_open("O_DIRECTORY f/ (trailing slash)", "f/", O_RDONLY | O_DIRECTORY);

	/* O_NOFOLLOW: only the last component */
	try_open("O_NOFOLLOW lf", "lf", O_RDONLY | O_NOFOLLOW);
	try_open("O_NOFOLLOW ld", "ld", O_RDONLY | O_NOFOLLOW);
	try_open("O_NOFOLLOW dang", "dang", O_RDONLY | O_NOFOLLOW);
	try_open("O_NOFOLLOW ld/g (link mid-path)", "ld/g", O_RDONLY | O_NOFOLLOW);
	try_open("O_NOFOLLOW ld/ (trailing slash)", "ld/", O_RDONLY | O_NOFOLLOW);
	try_open("O_NOFOLLOW f (no link)", "f", O_RDONLY | O_NOFOLLOW);
	try_open("O_NOFOLLOW|O_CREAT dang", "dang", O_WRONLY | O_CREAT | O_NOFOLLOW);
	show("lstat nowhere (not created)", "nowhere");
	try_open("O_NOFOLLOW|O_CREAT|O_EXCL dang", "dang", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW);
	try_open("O_NOFOLLOW|O_TRUNC lf", "lf", O_WRONLY | O_TRUNC | O_NOFOLLOW);

	/* O_CREAT through dangling symlinks */
	try_open("O_CREAT dang2 (chain to dang)", "dang2", O_WRONLY | O_CREAT);
	show("stat nowhere (created through 2 links)", "nowhere");
	show("lstat dang (still a link)", "dang");
	try_open("O_CREAT dangdir (target dir missing)", "dangdir", O_WRONLY | O_CREAT);
	try_open("O_CREAT dangslash (target ends in /)", "dangslash", O_WRONLY | O_CREAT);
	show("stat newdir", "newdir");

	/* trailing slashes and write opens of directories */
	try_open("O_CREAT f/ (existing file)", "f/", O_WRONLY | O_CREAT);
	try_open("O_CREAT|O_EXCL f/ (existing file)", "f/", O_WRONLY | O_CREAT | O_EXCL);
	try_open("O_CREAT d/ (existing dir)", "d/", O_RDONLY | O_CREAT);
	try_open("O_WRONLY d/", "d/", O_WRONLY);
	try_open("O_WRONLY ld (link to dir)", "ld", O_WRONLY);
	try_open("O_WRONLY|O_CREAT d", "d", O_WRONLY | O_CREAT);
	try_open("O_RDWR .", ".", O_RDWR);
	try_open("O_RDONLY|O_CREAT . (the start dir)", ".", O_RDONLY | O_CREAT);
	try_open("O_RDONLY|O_CREAT d", "d", O_RDONLY | O_CREAT);
	try_open("O_WRONLY f/", "f/", O_WRONLY);

	/* O_TMPFILE's own argument rules */
	try_open("O_TMPFILE|O_RDONLY .", ".", O_TMPFILE | O_RDONLY);
	try_open("O_TMPFILE|O_RDWR|O_CREAT .", ".", O_TMPFILE | O_RDWR | O_CREAT);
	try_open("O_TMPFILE|O_RDWR|O_CREAT d", "d", O_TMPFILE | O_RDWR | O_CREAT);
	try_open("O_TMPFILE|O_RDONLY d", "d", O_TMPFILE | O_RDONLY);
	try_open("O_TMPFILE|O_RDWR f (a file)", "f", O_TMPFILE | O_RDWR);
	try_open("O_TMPFILE|O_RDWR missing", "missing", O_TMPFILE | O_RDWR);
	try_open("O_TMPFILE|O_RDWR lf (link to file)", "lf", O_TMPFILE | O_RDWR);
	try_open("O_TMPFILE|O_RDWR ld (link to dir)", "ld", O_TMPFILE | O_RDWR);
	try_open("O_TMPFILE|O_RDWR|O_NOFOLLOW ld", "ld", O_TMPFILE | O_RDWR | O_NOFOLLOW);
	ok("mkdir rodir 0555", mkdir("rodir", 0555));
	try_open("O_TMPFILE|O_RDWR rodir (0555)", "rodir", O_TMPFILE | O_RDWR);
	try_open("O_CREAT rodir/x (0555)", "rodir/x", O_WRONLY | O_CREAT);
	return probe_done();
}
