/* What moat holds for the sandbox in files it handed over (vfs.h
 * "held_admit"): synthetic /proc and /etc files live in memfds that moat
 * makes and gives away, so their pages are moat's, charged to moat's own
 * cgroup, and stay for as long as any sandbox fd or mapping keeps them.
 * Unwatched, a sandbox under --memory-limit 32M held 450 MiB of host memory
 * through fds of /proc/self/smaps (docs/security.md, class 3).
 *
 * Each memfd is watched with inotify: when the kernel frees it (its last
 * fd closed, its last mapping gone) the watch goes with it (IN_IGNORED),
 * and its bytes come off the account.  The account and what the sandbox's
 * processes use together stay within its memory limit; past it the open
 * is refused with ENOMEM.  At most HELD_MAX are alive at once (two events
 * each at most: the inotify queue cannot overflow). */
#include "fs-emulation/vfs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
	int wd;
	uint64_t bytes;
} held[HELD_MAX];
static int nheld = 0, ino = -2; /* -2: not made yet; -1: could not be */
static uint64_t bytes_now, bytes_peak;

/* Take off the account what the kernel freed since the last look. */
static void drain(void)
{
	if (ino < 0)
		return;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(ino, buf, sizeof buf)) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			if (e->mask & IN_IGNORED)
				for (int i = 0; i < nheld; i++)
					if (held[i].wd == e->wd) {
						bytes_now -= held[i].bytes;
						held[i] = held[--nheld];
						break;
					}
			p += sizeof *e + e->len;
		}
	}
}

int held_admit(struct vfs *v, size_t len)
{
	if (ino == -2)
		ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino < 0)
		return -ENOMEM; /* nothing could be watched: nothing is made (fail closed) */
	drain();
	if (nheld >= HELD_MAX)
		return -EMFILE;
	uint64_t limit = v->mem_limit ? v->mem_limit : HELD_CAP_DEFAULT;
	uint64_t used = v->mem_used ? v->mem_used(v->mem_ctx) : 0;
	uint64_t want = ((uint64_t)len + 4095) & ~4095ULL;
	if (used >= limit || bytes_now + want > limit - used)
		return -ENOMEM;
	return 0;
}

int held_track(int fd)
{
	struct stat st;
	char self[64];
	if (ino < 0 || nheld >= HELD_MAX || fstat(fd, &st) < 0)
		return -ENOMEM;
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	/* IN_DELETE_SELF: it comes when the memfd is freed, with IN_IGNORED;
	 * nothing the sandbox does to it (a chmod) reports anything else. */
	int wd = inotify_add_watch(ino, self, IN_DELETE_SELF);
	if (wd < 0)
		return -ENOMEM;
	/* Its pages, and a page at least for the inode and file of it. */
	uint64_t b = (uint64_t)st.st_blocks * 512;
	if (b < (uint64_t)st.st_size)
		b = ((uint64_t)st.st_size + 4095) & ~4095ULL;
	if (b < 4096)
		b = 4096;
	for (int i = 0; i < nheld; i++)
		if (held[i].wd == wd)
			return 0; /* the same file again (a reopen): counted once */
	held[nheld].wd = wd;
	held[nheld].bytes = b;
	nheld++;
	bytes_now += b;
	if (bytes_now > bytes_peak)
		bytes_peak = bytes_now;
	return 0;
}

uint64_t held_peak(void)
{
	return bytes_peak;
}

uint64_t held_now(void)
{
	drain();
	return bytes_now;
}
