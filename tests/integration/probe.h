/* probe.h — shared helpers for the integration probes.
 *
 * A probe runs a fixed sequence of syscalls in its current directory (a fresh
 * scratch directory) and prints one line per step.  Lines hold only what is
 * comparable between a native run and a run under moat: return values (fds
 * are printed as "fd"), errno names, sizes, modes, nlink, file types, sorted
 * listings, paths relative to the starting directory.  run.sh diffs them.
 *
 * Raw syscall(2) is used where the exact syscall matters (glibc turns stat()
 * into newfstatat, open() into openat, ...), so both the legacy calls and the
 * *at calls reach the handlers.
 */
#ifndef MOAT_PROBE_H
#define MOAT_PROBE_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char probe_start[PATH_MAX]; /* the scratch dir, as getcwd saw it */

static inline void probe_init(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);
	if (!getcwd(probe_start, sizeof probe_start)) {
		printf("getcwd at start: %s\n", strerrorname_np(errno));
		exit(2);
	}
}

static inline const char *ename(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E???";
}

/* A call returning a number (or -1 with errno). */
static inline long ok(const char *step, long r)
{
	if (r < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: %ld\n", step, r);
	return r;
}

/* A call returning an fd: the number itself is not comparable. */
static inline int okfd(const char *step, long r)
{
	if (r < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: fd\n", step);
	return (int)r;
}

/* A path relative to the starting directory ("." for the start itself). */
static inline const char *relpath(const char *abs)
{
	static char buf[PATH_MAX + 8];
	size_t n = strlen(probe_start);
	if (strcmp(probe_start, "/") == 0)
		n = 0;
	if (strncmp(abs, probe_start, n) == 0 && (abs[n] == '/' || abs[n] == 0)) {
		snprintf(buf, sizeof buf, "$START%s", abs + n);
		return buf;
	}
	return abs;
}

static inline char ftype(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return '-';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	}
	return '?';
}

/* type, permission bits, nlink, size (not for directories: fs-dependent),
 * owner relative to the caller. */
static inline void pst(const char *step, long r, const struct stat *st)
{
	if (r < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	printf("%s: %c%04o nlink=%lu", step, ftype(st->st_mode),
	       (unsigned)(st->st_mode & 07777), (unsigned long)st->st_nlink);
	if (!S_ISDIR(st->st_mode))
		printf(" size=%lld", (long long)st->st_size);
	printf(" uid=%s gid=%s\n", st->st_uid == geteuid() ? "self" : "other",
	       st->st_gid == getegid() ? "self" : "other");
}

/* fstatat(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW) and print. */
static inline void show(const char *step, const char *path)
{
	struct stat st;
	long r = fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW);
	pst(step, r, &st);
}

/* Write a small file; returns 0 or -1. */
static inline int mkfile(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, data, strlen(data));
	close(fd);
	return n == (ssize_t)strlen(data) ? 0 : -1;
}

/* Print the contents of a file (up to 255 bytes), or the open errno. */
/* File contents on one line: a newline as "\n", so that one step is one
 * line of output (known-differences matches lines). */
static inline void put_escaped(const char *s)
{
	for (; *s; s++)
		if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
}

static inline void cat(const char *step, int dirfd, const char *path)
{
	char buf[256];
	int fd = openat(dirfd, path, O_RDONLY);
	if (fd < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0) {
		printf("%s: read %s\n", step, ename(errno));
		return;
	}
	buf[n] = 0;
	printf("%s: \"", step);
	put_escaped(buf);
	printf("\"\n");
}

static inline int probe_done(void)
{
	printf("done\n");
	return 0;
}

#endif
