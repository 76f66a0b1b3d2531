/* percall: ns per call of the calls a file-heavy program makes most, one
 * mode after another: the per-call table of `make bench`.
 *
 *     percall N [-w] MODE...      (MODE: a name below, or "all")
 *
 *   stat       stat("/nonexistent-moat-bench/x") -> ENOENT
 *   open       openat(AT_FDCWD, "/usr/lib/os-release", O_RDONLY) + close
 *   fstat      newfstatat(fd, "", AT_EMPTY_PATH): glibc < 2.39's fstat
 *   fstat5     fstat(fd), nr 5: glibc >= 2.39's, musl's and Go's fstat
 *   deny       keyctl(KEYCTL_GET_KEYRING_ID, an id no keyring has, 0): EINVAL
 *              natively, denied by moat (table.deny, ENOSYS)
 *   opendir    openat(AT_FDCWD, "/usr/lib", O_DIRECTORY) + close
 *   statat     newfstatat(dirfd /usr/lib, "os-release", AT_SYMLINK_NOFOLLOW):
 *              find's lstat
 *   opendirat  openat(dirfd /usr/lib, "apt", O_DIRECTORY | O_NOFOLLOW ...) +
 *              close: find's open of a subdirectory
 *   getppid    getppid(): served by the kernel (under moat: the filter only)
 *
 * Per mode: 50 calls to warm up, each checked to behave as expected (a mode
 * that does not prints why and fails the run), then N calls timed in 5
 * batches (N = 0: the warm-up only).  Prints one line per mode,
 * "percall MODE <median of the batches' ns per call> ns/call", flushed at
 * once.
 *
 * With -w (for counting the supervisor's own syscalls from outside, with a
 * counter that starts and stops between modes): prints "percall ready" once
 * set up, and before each mode waits for one byte on stdin.  Between a mode's
 * result line and the next byte the supervisor is idle: a counter started
 * before the byte and stopped on the result line sees that mode's calls, the
 * relay of one line, and nothing of the start or of another mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 5
#define WARMUP 50
#define MISSING "/nonexistent-moat-bench/x"
#define DIR "/usr/lib"
#define FILE_IN_DIR "os-release" /* os-release(5): every systemd-era system */
#define SUBDIR "apt"             /* Debian's; the bench assumes Debian */
#define NO_KEYRING 0x6d6f6174 /* not a special keyring id: EINVAL */

static int file_fd = -1; /* DIR/FILE_IN_DIR, for the fstats */
static int dir_fd = -1;  /* DIR, for the dirfd-relative calls */

/* Each one call (and the close that goes with an open) returns 0 when the
 * call behaved as the mode expects. */
static int one_stat(void)
{
	struct stat st;
	return stat(MISSING, &st) == 0 || errno != ENOENT;
}

static int open_close(int dfd, const char *path, int flags)
{
	int fd = openat(dfd, path, flags);
	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

static int one_open(void)
{
	return open_close(AT_FDCWD, DIR "/" FILE_IN_DIR, O_RDONLY | O_CLOEXEC);
}

static int one_fstat(void)
{
	struct stat st;
	/* the raw call: glibc 2.39 and later would make it nr 5 */
	return syscall(SYS_newfstatat, file_fd, "", &st, AT_EMPTY_PATH) != 0;
}

static int one_fstat5(void)
{
	struct stat st;
	return syscall(SYS_fstat, file_fd, &st) != 0;
}

static int one_deny(void)
{
	return syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, NO_KEYRING, 0) >= 0;
}

static int one_opendir(void)
{
	/* opendir(3)'s flags */
	return open_close(AT_FDCWD, DIR, O_RDONLY | O_NONBLOCK | O_DIRECTORY | O_CLOEXEC);
}

static int one_statat(void)
{
	struct stat st;
	return syscall(SYS_newfstatat, dir_fd, FILE_IN_DIR, &st, AT_SYMLINK_NOFOLLOW) != 0;
}

static int one_opendirat(void)
{
	/* fts(3)'s flags, as find opens a subdirectory */
	return open_close(dir_fd, SUBDIR,
			  O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_DIRECTORY);
}

static int one_getppid(void)
{
	/* the raw call, no libc caching; 0 where the parent is outside the pid
	 * namespace (gVisor) */
	return syscall(SYS_getppid) < 0;
}

static const struct mode {
	const char *name;
	int (*one)(void);
} modes[] = {
	{ "stat", one_stat },     { "open", one_open },           { "fstat", one_fstat },
	{ "fstat5", one_fstat5 }, { "deny", one_deny },           { "opendir", one_opendir },
	{ "statat", one_statat }, { "opendirat", one_opendirat }, { "getppid", one_getppid },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One mode: 0, or 1 when the call does not behave as expected (or, with
 * wait, stdin ended). */
static int measure(const struct mode *m, long n, int wait)
{
	char go;
	if (wait && read(0, &go, 1) != 1) /* in the kernel: an inherited fd */
		return 1;
	for (int i = 0; i < WARMUP; i++) {
		errno = 0;
		if (m->one()) {
			fprintf(stderr, "percall: %s does not behave as expected (errno %d: %s)\n",
				m->name, errno, strerror(errno));
			return 1;
		}
	}
	double per[BATCHES] = { 0 };
	/* N = 0: the warm-up only, a baseline for counting the supervisor's calls */
	long per_batch = n > 0 && n < BATCHES ? 1 : n / BATCHES;
	for (int b = 0; b < BATCHES && per_batch > 0; b++) {
		double t0 = now_ns();
		for (long i = 0; i < per_batch; i++)
			m->one();
		per[b] = (now_ns() - t0) / per_batch;
	}
	qsort(per, BATCHES, sizeof(double), cmp_double);
	printf("percall %s %.1f ns/call\n", m->name, per[BATCHES / 2]);
	fflush(stdout);
	return 0;
}

static const struct mode *find_mode(const char *name)
{
	for (size_t i = 0; i < NMODES; i++)
		if (strcmp(modes[i].name, name) == 0)
			return &modes[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: percall N [-w] MODE... (or all)\n");
		return 2;
	}
	long n = atol(argv[1]);
	int first = 2;
	int wait = strcmp(argv[2], "-w") == 0;
	if (wait)
		first = 3;
	/* refuse an unknown mode before measuring anything */
	for (int a = first; a < argc; a++)
		if (strcmp(argv[a], "all") != 0 && !find_mode(argv[a])) {
			fprintf(stderr, "percall: no mode %s\n", argv[a]);
			return 2;
		}
	file_fd = open(DIR "/" FILE_IN_DIR, O_RDONLY | O_CLOEXEC);
	dir_fd = open(DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (file_fd < 0 || dir_fd < 0) {
		fprintf(stderr, "percall: cannot open %s or %s/%s: %s\n", DIR, DIR, FILE_IN_DIR,
			strerror(errno));
		return 1;
	}
	if (wait) {
		printf("percall ready\n");
		fflush(stdout);
	}
	int bad = 0;
	for (int a = first; a < argc; a++) {
		if (strcmp(argv[a], "all") == 0)
			for (size_t i = 0; i < NMODES; i++)
				bad |= measure(&modes[i], n, wait);
		else
			bad |= measure(find_mode(argv[a]), n, wait);
	}
	return bad;
}
