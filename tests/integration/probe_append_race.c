/* probe_append_race — O_APPEND from two processes: each appends N
 * fixed-size records, through its own open file description and through
 * one shared across fork.  Every write lands at the end of the file at
 * the time of the write, so the final size is exact and no record is lost
 * or torn; each writer's records stay in its own order.  Only totals are
 * printed: the interleaving is the scheduler's. */
#include "probe.h"
#include <sys/wait.h>

#define N 500
#define RECLEN 32

static void writer(const char *path, int fd, char who)
{
	char rec[RECLEN + 1];
	int own = fd < 0;
	if (own)
		fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0)
		_exit(2);
	for (int i = 0; i < N; i++) {
		/* "W NNNNN ", dots, a newline: RECLEN bytes */
		memset(rec, '.', RECLEN);
		snprintf(rec, sizeof rec, "%c %05d ", who, i);
		rec[8] = '.';
		rec[RECLEN - 1] = '\n';
		if (write(fd, rec, RECLEN) != RECLEN)
			_exit(3);
	}
	if (own)
		close(fd);
}

static void check(const char *step, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	static char buf[2 * N * RECLEN + 1];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
	if (fd >= 0)
		close(fd);
	int count[2] = { 0, 0 }, next[2] = { 0, 0 }, torn = 0, order = 1;
	for (ssize_t off = 0; n > 0 && off + RECLEN <= n; off += RECLEN) {
		char *r = buf + off;
		int w = r[0] == 'P' ? 0 : r[0] == 'C' ? 1 : -1;
		int seq = atoi(r + 2);
		if (w < 0 || r[1] != ' ' || r[RECLEN - 1] != '\n' || r[RECLEN - 2] != '.') {
			torn++;
			continue;
		}
		count[w]++;
		if (seq != next[w])
			order = 0;
		next[w] = seq + 1;
	}
	printf("%s: size=%lld (expected %d), parent records %d, child records %d, torn %d, each in order: %s\n",
	       step, (long long)st.st_size, 2 * N * RECLEN, count[0], count[1], torn,
	       order ? "yes" : "no");
}

static void run(const char *path, int shared)
{
	int fd = -1;
	if (shared)
		fd = open(path, O_WRONLY | O_APPEND);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		writer(path, fd, 'C');
		_exit(0);
	}
	writer(path, fd, 'P');
	int status;
	waitpid(pid, &status, 0);
	printf("child exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	probe_init();
	ok("mkfile own", mkfile("own", ""));
	run("own", 0);
	check("two O_APPEND opens", "own");
	ok("mkfile shared", mkfile("shared", ""));
	run("shared", 1);
	check("one O_APPEND open shared by fork", "shared");
	/* the same, after the file already has data: appends start at its end */
	ok("mkfile pre", mkfile("pre", ""));
	run("pre", 0);
	int fd = okfd("open pre O_WRONLY|O_APPEND", open("pre", O_WRONLY | O_APPEND));
	ok("lseek pre 0 SET", lseek(fd, 0, SEEK_SET));
	char rec[RECLEN + 1];
	memset(rec, '.', RECLEN);
	rec[RECLEN - 1] = '\n';
	ok("write one more record", write(fd, rec, RECLEN));
	ok("lseek CUR (the new end)", lseek(fd, 0, SEEK_CUR));
	close(fd);
	return probe_done();
}
