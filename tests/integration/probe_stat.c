/* probe_stat — stat, lstat, fstat, newfstatat, statx, statfs, fstatfs. */
#include "probe.h"
#include <sys/statfs.h>

static void st_(const char *step, long nr, const char *path)
{
	struct stat st;
	pst(step, syscall(nr, path, &st), &st);
}

static void at_(const char *step, int dirfd, const char *path, int flags)
{
	struct stat st;
	pst(step, syscall(SYS_newfstatat, dirfd, path, &st, flags), &st);
}

static void sx(const char *step, int dirfd, const char *path, int flags, unsigned mask)
{
	struct statx sx;
	if (syscall(SYS_statx, dirfd, path, flags, mask, &sx) < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	printf("%s: %c%04o nlink=%u", step, ftype(sx.stx_mode),
	       (unsigned)(sx.stx_mode & 07777), sx.stx_nlink);
	if (!S_ISDIR(sx.stx_mode))
		printf(" size=%llu", (unsigned long long)sx.stx_size);
	printf(" basic=%s\n",
	       (sx.stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS ? "yes" : "no");
}

static const char *same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino ? "same" : "different";
}

int main(void)
{
	struct stat a, b;
	struct statx x;
	struct statfs sf;
	probe_init();

	ok("mkfile f 12345", mkfile("f", "12345"));
	ok("mkdir d", mkdir("d", 0750));
	ok("mkdir d/e", mkdir("d/e", 0700));
	ok("symlink f l", symlink("f", "l"));
	ok("symlink d ld", symlink("d", "ld"));

	/* legacy stat / lstat */
	st_("stat f", SYS_stat, "f");
	st_("stat d", SYS_stat, "d");
	st_("stat l", SYS_stat, "l");
	st_("stat ld", SYS_stat, "ld");
	st_("stat ld/e", SYS_stat, "ld/e");
	st_("stat d/.", SYS_stat, "d/.");
	st_("stat d/e/..", SYS_stat, "d/e/..");
	st_("lstat l", SYS_lstat, "l");
	st_("lstat ld", SYS_lstat, "ld");
	st_("lstat ld/", SYS_lstat, "ld/");
	st_("stat missing", SYS_stat, "missing");
	st_("stat f/x", SYS_stat, "f/x");
	st_("stat f/", SYS_stat, "f/");
	st_("stat \"\"", SYS_stat, "");
	ok("mkdir d/e2", mkdir("d/e2", 0755));
	st_("stat d (nlink +1)", SYS_stat, "d");
	ok("rmdir d/e2", rmdir("d/e2"));
	st_("stat d (nlink -1)", SYS_stat, "d");

	/* fstat, identity */
	int fd = okfd("open f", open("f", O_RDONLY));
	pst("fstat f", fstat(fd, &a), &a);
	syscall(SYS_stat, "f", &b);
	printf("fstat(fd) vs stat(f) ino: %s\n", same(&a, &b));
	syscall(SYS_stat, "l", &b);
	printf("stat(l) vs fstat(fd) ino: %s\n", same(&a, &b));
	syscall(SYS_stat, "d", &b);
	printf("f and d on one st_dev: %s\n", a.st_dev == b.st_dev ? "yes" : "no");

	/* newfstatat */
	int dfd = okfd("open d O_DIRECTORY", open("d", O_RDONLY | O_DIRECTORY));
	int lfd = okfd("open l O_PATH|O_NOFOLLOW", open("l", O_PATH | O_NOFOLLOW));
	at_("fstatat l 0", AT_FDCWD, "l", 0);
	at_("fstatat l NOFOLLOW", AT_FDCWD, "l", AT_SYMLINK_NOFOLLOW);
	at_("fstatat (dfd) e", dfd, "e", 0);
	at_("fstatat (dfd) ../f", dfd, "../f", 0);
	at_("fstatat (dfd) missing", dfd, "missing", 0);
	at_("fstatat (fd f) x", fd, "x", 0);
	at_("fstatat fd \"\" EMPTY_PATH", fd, "", AT_EMPTY_PATH);
	at_("fstatat dfd \"\" EMPTY_PATH", dfd, "", AT_EMPTY_PATH);
	at_("fstatat lfd \"\" EMPTY_PATH", lfd, "", AT_EMPTY_PATH);
	at_("fstatat lfd \"\" EMPTY_PATH|NOFOLLOW", lfd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	at_("fstatat fd \"\" no EMPTY_PATH", fd, "", 0);
	at_("fstatat bad flag", AT_FDCWD, "f", 0x40000000);
	at_("fstatat closed fd rel", 999, "f", 0);
	at_("fstatat closed fd \"\" EMPTY_PATH", 999, "", AT_EMPTY_PATH);

	/* statx */
	sx("statx f", AT_FDCWD, "f", 0, STATX_BASIC_STATS);
	sx("statx l", AT_FDCWD, "l", 0, STATX_BASIC_STATS);
	sx("statx l NOFOLLOW", AT_FDCWD, "l", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS);
	sx("statx d", AT_FDCWD, "d", 0, STATX_BASIC_STATS);
	sx("statx (dfd) e", dfd, "e", 0, STATX_BASIC_STATS);
	sx("statx fd \"\" EMPTY_PATH", fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS);
	sx("statx dfd \"\" EMPTY_PATH", dfd, "", AT_EMPTY_PATH, STATX_BASIC_STATS);
	sx("statx lfd \"\" EMPTY_PATH", lfd, "", AT_EMPTY_PATH, STATX_BASIC_STATS);
	sx("statx missing", AT_FDCWD, "missing", 0, STATX_BASIC_STATS);
	sx("statx reserved mask", AT_FDCWD, "f", 0, STATX__RESERVED);
	sx("statx bad flag", AT_FDCWD, "f", 0x40000000, STATX_BASIC_STATS);
	sx("statx FORCE_SYNC|DONT_SYNC", AT_FDCWD, "f",
	   AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC, STATX_BASIC_STATS);
	syscall(SYS_stat, "f", &b);
	if (syscall(SYS_statx, AT_FDCWD, "f", 0, STATX_INO, &x) == 0)
		printf("statx ino vs stat ino: %s\n", x.stx_ino == b.st_ino ? "same" : "different");

	/* statfs (values are fs-dependent: only success is compared) */
	ok("statfs .", statfs(".", &sf));
	ok("statfs f", statfs("f", &sf));
	ok("statfs missing", statfs("missing", &sf));
	ok("fstatfs fd", fstatfs(fd, &sf));
	ok("fstatfs dfd", fstatfs(dfd, &sf));
	ok("fstatfs closed fd", fstatfs(999, &sf));

	close(fd);
	close(dfd);
	close(lfd);
	return probe_done();
}
