/* probe_utime_rel — utimensat/futimens with UTIME_NOW and UTIME_OMIT, as
 * relations only: "unchanged", "now" (between a coarse clock reading taken
 * before the call — file times come from the coarse clock — and a fine one
 * after), and the ctime that every change moves forward.  {OMIT, OMIT}
 * changes nothing, not even ctime, and Linux returns 0 without looking at
 * the path, the fd or the flags ("we must not even check the path",
 * fs/utimes.c). */
#include "probe.h"
#include <time.h>

static struct timespec before, after;

static void mark(void)
{
	clock_gettime(CLOCK_REALTIME_COARSE, &before);
}

static int cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	return a->tv_nsec < b->tv_nsec ? -1 : a->tv_nsec > b->tv_nsec;
}

/* One timestamp against the previous one and the [before, after] window. */
static const char *rel(const struct timespec *now, const struct timespec *prev)
{
	if (cmp(now, prev) == 0)
		return "unchanged";
	if (cmp(now, &before) >= 0 && cmp(now, &after) <= 0)
		return "now";
	return cmp(now, prev) < 0 ? "went back" : "changed, not now";
}

static void times_(const char *step, const char *path, struct stat *prev)
{
	struct stat st;
	clock_gettime(CLOCK_REALTIME, &after);
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	printf("%s: atime %s, mtime %s, ctime %s\n", step, rel(&st.st_atim, &prev->st_atim),
	       rel(&st.st_mtim, &prev->st_mtim), rel(&st.st_ctim, &prev->st_ctim));
	*prev = st;
}

static long ut(int dirfd, const char *path, long ans, long mns, int flags)
{
	struct timespec ts[2] = { { 1000000000, ans }, { 1100000000, mns } };
	return syscall(SYS_utimensat, dirfd, path, ts, flags);
}

/* Old explicit times, so that "now" is always a change. */
static void reset(const char *path, struct stat *prev)
{
	struct timespec ts[2] = { { 1000000000, 1 }, { 1100000000, 2 } };
	if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
		printf("reset %s: %s\n", path, ename(errno));
	lstat(path, prev);
	/* let the coarse clock pass the ctime the reset just set */
	struct timespec ten_ms = { 0, 10000000 };
	nanosleep(&ten_ms, NULL);
}

int main(void)
{
	struct stat f, l, d;
	probe_init();
	ok("mkfile f", mkfile("f", "x"));
	ok("symlink f lf", symlink("f", "lf"));
	ok("mkdir d", mkdir("d", 0755));

	reset("f", &f);
	mark();
	ok("utimensat f NOW,OMIT", ut(AT_FDCWD, "f", UTIME_NOW, UTIME_OMIT, 0));
	times_("f", "f", &f);
	reset("f", &f);
	mark();
	ok("utimensat f OMIT,NOW", ut(AT_FDCWD, "f", UTIME_OMIT, UTIME_NOW, 0));
	times_("f", "f", &f);
	reset("f", &f);
	mark();
	ok("utimensat f NOW,NOW", ut(AT_FDCWD, "f", UTIME_NOW, UTIME_NOW, 0));
	times_("f", "f", &f);
	reset("f", &f);
	mark();
	ok("utimensat f NOW (tv_sec ignored),OMIT", syscall(SYS_utimensat, AT_FDCWD, "f",
		(struct timespec[2]){ { -5, UTIME_NOW }, { 7, UTIME_OMIT } }, 0));
	times_("f", "f", &f);
	mark();
	ok("utimensat f OMIT,OMIT", ut(AT_FDCWD, "f", UTIME_OMIT, UTIME_OMIT, 0));
	times_("f", "f", &f);

	/* {OMIT, OMIT}: nothing is looked at */
	ok("utimensat missing OMIT,OMIT", ut(AT_FDCWD, "missing", UTIME_OMIT, UTIME_OMIT, 0));
	ok("utimensat f OMIT,OMIT bad flag", ut(AT_FDCWD, "f", UTIME_OMIT, UTIME_OMIT, 0x40000000));
	ok("utimensat closed fd OMIT,OMIT", ut(999, "f", UTIME_OMIT, UTIME_OMIT, 0));
	ok("utimensat closed fd NULL path OMIT,OMIT", ut(999, NULL, UTIME_OMIT, UTIME_OMIT, 0));
	ok("utimensat missing NOW,OMIT", ut(AT_FDCWD, "missing", UTIME_NOW, UTIME_OMIT, 0));
	ok("utimensat f OMIT,NOW bad flag", ut(AT_FDCWD, "f", UTIME_OMIT, UTIME_NOW, 0x40000000));

	/* fd forms */
	int fd = okfd("open f O_RDONLY", open("f", O_RDONLY));
	reset("f", &f);
	mark();
	ok("futimens O_RDONLY fd OMIT,NOW", futimens(fd, (struct timespec[2]){ { 0, UTIME_OMIT }, { 0, UTIME_NOW } }));
	times_("f", "f", &f);
	reset("f", &f);
	mark();
	ok("utimensat fd NULL path NOW,OMIT", ut(fd, NULL, UTIME_NOW, UTIME_OMIT, 0));
	times_("f", "f", &f);
	reset("f", &f);
	mark();
	ok("utimensat fd \"\" EMPTY_PATH NOW,NOW", ut(fd, "", UTIME_NOW, UTIME_NOW, AT_EMPTY_PATH));
	times_("f", "f", &f);
	close(fd);

	/* the owner may set "now" and explicit times without write permission */
	ok("chmod f 0444", chmod("f", 0444));
	reset("f", &f);
	mark();
	ok("utimensat 0444 f NOW,NOW", ut(AT_FDCWD, "f", UTIME_NOW, UTIME_NOW, 0));
	times_("f", "f", &f);
	ok("chmod f 0644", chmod("f", 0644));

	/* a symlink itself, and its target untouched */
	reset("f", &f);
	reset("lf", &l);
	mark();
	ok("utimensat lf NOFOLLOW NOW,OMIT", ut(AT_FDCWD, "lf", UTIME_NOW, UTIME_OMIT, AT_SYMLINK_NOFOLLOW));
	times_("lf", "lf", &l);
	times_("f", "f", &f);
	mark();
	/* (the link's own atime is not printed here: following it reads it,
	 * and relatime decides from times set within the same tick) */
	ok("utimensat lf OMIT,NOW (follows)", ut(AT_FDCWD, "lf", UTIME_OMIT, UTIME_NOW, 0));
	times_("f", "f", &f);

	/* writes, creations and chmod move the times the kernel says */
	reset("f", &f);
	mark();
	ok("write f", (fd = open("f", O_WRONLY)) >= 0 ? write(fd, "y", 1) : -1);
	close(fd);
	times_("f after write", "f", &f);
	reset("f", &f);
	mark();
	ok("chmod f 0600", chmod("f", 0600));
	times_("f after chmod", "f", &f);
	reset("d", &d);
	mark();
	ok("mkfile d/g", mkfile("d/g", ""));
	times_("d after create", "d", &d);
	reset("d", &d);
	mark();
	ok("unlink d/g", unlink("d/g"));
	times_("d after unlink", "d", &d);
	return probe_done();
}
