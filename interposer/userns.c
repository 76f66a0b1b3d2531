/* The sandbox's user namespace: a range of host ids, and its maps. */
#include "interposer/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/creds.h"

int userns_take(uid_t *base)
{
	/* /run/moat: root's own, 0700 (a directory another user made there
	 * first is refused, not used). */
	if (mkdir("/run/moat", 0700) < 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (lstat("/run/moat", &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return -EPERM;
	int fd = open(USERNS_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	for (unsigned slot = 0; slot < USERNS_SLOTS; slot++) {
		struct flock l = { .l_type = F_WRLCK,
				   .l_whence = SEEK_SET,
				   .l_start = slot,
				   .l_len = 1 };
		if (fcntl(fd, F_OFD_SETLK, &l) == 0) {
			*base = USERNS_BASE + slot * CREDS_NS_RANGE;
			return 0; /* fd stays open: the lock is the claim */
		}
		if (errno != EAGAIN && errno != EACCES) {
			int e = errno;
			close(fd);
			return -e;
		}
	}
	close(fd);
	return -EAGAIN;
}

static int write_map(pid_t pid, const char *file, uid_t base)
{
	char path[64], line[64];
	snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
	int n = snprintf(line, sizeof line, "0 %u %u\n", (unsigned)base, (unsigned)CREDS_NS_RANGE);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = write(fd, line, (size_t)n) == n ? 0 : -errno;
	close(fd);
	return r;
}

int userns_map(pid_t pid, uid_t base)
{
	int r = write_map(pid, "uid_map", base);
	return r < 0 ? r : write_map(pid, "gid_map", base);
}
