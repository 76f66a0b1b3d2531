/* probe_utime — utimensat (explicit, UTIME_NOW, UTIME_OMIT, NOFOLLOW,
 * EMPTY_PATH), futimens, utimes, utime, futimesat.  Explicit times are read
 * back exactly; "now" is checked against the clock, never printed. */
#include "probe.h"
#include <sys/time.h>
#include <time.h>
#include <utime.h>

static struct timespec t0, t1; /* the clock around a "now" update */

static void mark(void) { clock_gettime(CLOCK_REALTIME, &t0); }

/* Print a timestamp: exact if it is an explicit one, else whether it is "now". */
static void pts(const char *which, const struct timespec *ts)
{
	if (ts->tv_sec >= 1700000000) { /* a "now" time */
		clock_gettime(CLOCK_REALTIME, &t1);
		int in = ts->tv_sec >= t0.tv_sec - 1 && ts->tv_sec <= t1.tv_sec + 1;
		printf(" %s=%s", which, in ? "now" : "NOT-NOW");
	} else {
		printf(" %s=%lld.%09ld", which, (long long)ts->tv_sec, ts->tv_nsec);
	}
}

static void times_(const char *step, const char *path)
{
	struct stat st;
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	printf("%s:", step);
	pts("atime", &st.st_atim);
	pts("mtime", &st.st_mtim);
	printf("\n");
}

static long ut(int dirfd, const char *path, long as, long ans, long ms, long mns, int flags)
{
	struct timespec ts[2] = {{as, ans}, {ms, mns}};
	return syscall(SYS_utimensat, dirfd, path, ts, flags);
}

int main(void)
{
	probe_init();
	ok("mkfile f", mkfile("f", "x"));
	ok("mkdir d", mkdir("d", 0755));
	ok("symlink f lf", symlink("f", "lf"));

	/* explicit times, exact readback */
	ok("utimensat f explicit", ut(AT_FDCWD, "f", 1000000000, 123456789, 1500000000, 987654321, 0));
	times_("times f", "f");
	ok("utimensat d explicit", ut(AT_FDCWD, "d", 1111111111, 1, 1222222222, 999999999, 0));
	times_("times d", "d");

	/* UTIME_OMIT / UTIME_NOW */
	mark();
	ok("utimensat f OMIT,NOW", ut(AT_FDCWD, "f", 0, UTIME_OMIT, 0, UTIME_NOW, 0));
	times_("times f", "f");
	ok("utimensat f explicit", ut(AT_FDCWD, "f", 1000000000, 5, 1500000000, 6, 0));
	mark();
	ok("utimensat f NOW,OMIT", ut(AT_FDCWD, "f", 0, UTIME_NOW, 0, UTIME_OMIT, 0));
	times_("times f", "f");
	ok("utimensat f OMIT,OMIT", ut(AT_FDCWD, "f", 7, UTIME_OMIT, 8, UTIME_OMIT, 0));
	times_("times f (unchanged)", "f");
	ok("utimensat f explicit", ut(AT_FDCWD, "f", 1000000000, 5, 1500000000, 6, 0));
	mark();
	ok("utimensat f NULL (both now)", syscall(SYS_utimensat, AT_FDCWD, "f", NULL, 0));
	times_("times f", "f");

	/* symlinks: follow by default, the link itself with NOFOLLOW */
	ok("utimensat f explicit", ut(AT_FDCWD, "f", 1000000000, 5, 1500000000, 6, 0));
	ok("utimensat lf NOFOLLOW", ut(AT_FDCWD, "lf", 1300000000, 0, 1300000001, 0, AT_SYMLINK_NOFOLLOW));
	times_("times lf (lstat)", "lf");
	times_("times f (unchanged)", "f");
	ok("utimensat lf (follows)", ut(AT_FDCWD, "lf", 1400000000, 0, 1400000001, 0, 0));
	times_("times f", "f");

	/* fd forms */
	int fd = okfd("open f O_RDONLY", open("f", O_RDONLY));
	int dfd = okfd("open d", open("d", O_RDONLY | O_DIRECTORY));
	struct timespec ts[2] = {{1600000000, 10}, {1600000000, 20}};
	ok("futimens fd", futimens(fd, ts));
	times_("times f", "f");
	ok("utimensat fd NULL path", ut(fd, NULL, 1600000001, 0, 1600000002, 0, 0));
	times_("times f", "f");
	ok("utimensat fd \"\" EMPTY_PATH", ut(fd, "", 1600000003, 0, 1600000004, 0, AT_EMPTY_PATH));
	times_("times f", "f");
	ok("mkfile d/g", mkfile("d/g", ""));
	ok("utimensat (dfd) g", ut(dfd, "g", 1000, 0, 2000, 0, 0));
	times_("times d/g", "d/g");

	/* errors */
	ok("utimensat missing", ut(AT_FDCWD, "missing", 1, 0, 1, 0, 0));
	ok("utimensat f nsec 1e9", ut(AT_FDCWD, "f", 1, 1000000000, 1, 0, 0));
	ok("utimensat f nsec -1", ut(AT_FDCWD, "f", 1, 0, 1, -1, 0));
	ok("utimensat bad flag", ut(AT_FDCWD, "f", 1, 0, 1, 0, 0x40000000));
	ok("utimensat closed fd", ut(999, "f", 1, 0, 1, 0, 0));

	/* legacy calls */
	struct timeval tv[2] = {{1500000000, 500000}, {1650000000, 250000}};
	ok("utimes f", syscall(SYS_utimes, "f", tv));
	times_("times f", "f");
	struct utimbuf ub = {1234567890, 1234567891};
	ok("utime f", syscall(SYS_utime, "f", &ub));
	times_("times f", "f");
	mark();
	ok("utime f NULL", syscall(SYS_utime, "f", NULL));
	times_("times f", "f");
	ok("futimesat (dfd) g", syscall(SYS_futimesat, dfd, "g", tv));
	times_("times d/g", "d/g");
	ok("utimes missing", syscall(SYS_utimes, "missing", tv));
	close(fd);
	close(dfd);
	return probe_done();
}
