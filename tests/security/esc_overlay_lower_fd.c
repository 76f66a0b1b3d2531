/* esc_overlay_lower_fd — change a lower-layer file of an overlay through an
 * fd opened read-only on it.
 *
 * Attacks the overlay rule (fs-emulation/overlay.c: "The lower layer is
 * never written") where it meets the fd model (docs/design.md: every fd is
 * a real kernel fd).  Opening a file of an overlay's lower layer for reading
 * gives the sandbox an fd of the HOST file itself, and the host file is the
 * sandbox's own (the runner makes it so: ovl_fixture), so the kernel would
 * let any call that changes it through that fd succeed.  Every such call must
 * be supervised and answer EROFS (or copy up and leave the host file alone).
 * We open FILE O_RDONLY and DIR O_RDONLY|O_DIRECTORY and try:
 *   - reopening: open("/proc/self/fd/N") O_WRONLY, O_RDWR|O_APPEND, O_TRUNC;
 *     open("/dev/fd/N", O_WRONLY); then write;
 *   - fchmod, fchown (to ourselves), futimens (NULL and explicit times),
 *     fsetxattr(user.*), ioctl(FS_IOC_SETFLAGS, +nodump), on FILE and DIR;
 *   - the *at calls on the fd itself: fchmodat2/fchownat/utimensat/linkat
 *     with AT_EMPTY_PATH, linkat("/proc/self/fd/N", AT_SYMLINK_FOLLOW);
 *   - write, ftruncate, fallocate, copy_file_range into it, and a shared
 *     writable mmap (the kernel refuses these on a read-only fd natively too:
 *     they must stay refused);
 *   - fchdir(DIR) and creating a file relative to it.
 * Each way is judged by its effect on the host file and directory, seen
 * through our own fds with the kernel's fstat (raw fstat(2), unsupervised),
 * pread and getdents: content, mode, owner, mtime, ctime, links, flags and
 * the directory's names.  The runner also compares the canaries on the host
 * before and after the moat run (ovl_state).
 *
 * Natively the runner runs us as the files' owner, and the ways that need
 * nothing but ownership change the host.  Under moat (FILE and DIR in
 * /etc/moat-esc-canary and in an --overlay) each must be held: EROFS, or a
 * change that lands in the upper layer only.  No audit record is expected.
 *
 * usage: esc_overlay_lower_fd FILE DIR [FILE DIR ...]
 */
#include "esc.h"
#include <dirent.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static const char *file, *dir;
static int fd, dfd; /* O_RDONLY on file and dir: our windows on the host inodes */

struct snap {
	char data[64];
	ssize_t len;
	struct stat st, dst;
	int flags, dflags;
	char names[512];
};

static void take(struct snap *s)
{
	memset(s, 0, sizeof *s);
	/* the kernel's, not a supervised newfstatat */
	if (syscall(SYS_fstat, fd, &s->st) < 0 || syscall(SYS_fstat, dfd, &s->dst) < 0)
		esc_usage("fstat of our own fd failed");
	s->len = pread(fd, s->data, sizeof s->data - 1, 0);
	for (ssize_t i = 0; i < s->len; i++)
		if (s->data[i] < 0x20 || s->data[i] > 0x7e)
			s->data[i] = '.';
	if (ioctl(fd, FS_IOC_GETFLAGS, &s->flags) < 0)
		s->flags = -1;
	if (ioctl(dfd, FS_IOC_GETFLAGS, &s->dflags) < 0)
		s->dflags = -1;
	/* the directory's names, through our own fd (raw getdents64) */
	char buf[4096];
	lseek(dfd, 0, SEEK_SET);
	long n;
	size_t len = 0;
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			len += (size_t)snprintf(s->names + len, len < sizeof s->names ? sizeof s->names - len : 0,
						"%s ", de->d_name);
			len = len < sizeof s->names ? len : sizeof s->names - 1;
			off += de->d_reclen;
		}
	}
}

static int ts_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static void stat_changes(const char *what, const struct stat *a, const struct stat *b, char *out,
			 size_t cap)
{
	size_t n = strlen(out);
#define ADD(...) (n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__), n = n < cap ? n : cap)
	if (a->st_mode != b->st_mode)
		ADD("%s mode %o -> %o ", what, (unsigned)(a->st_mode & 07777), (unsigned)(b->st_mode & 07777));
	if (a->st_uid != b->st_uid || a->st_gid != b->st_gid)
		ADD("%s owner changed ", what);
	if (!ts_eq(a->st_mtim, b->st_mtim))
		ADD("%s mtime changed ", what);
	if (!ts_eq(a->st_ctim, b->st_ctim))
		ADD("%s ctime changed ", what);
	if (a->st_nlink != b->st_nlink)
		ADD("%s links %lu -> %lu ", what, (unsigned long)a->st_nlink, (unsigned long)b->st_nlink);
#undef ADD
}

static void changes(const struct snap *a, const struct snap *b, char *out, size_t cap)
{
	out[0] = '\0';
	if (a->len != b->len || (a->len > 0 && memcmp(a->data, b->data, (size_t)a->len)))
		snprintf(out, cap, "content \"%s\" -> \"%s\" ", a->data, b->data);
	stat_changes("file", &a->st, &b->st, out, cap);
	stat_changes("dir", &a->dst, &b->dst, out, cap);
	size_t n = strlen(out);
	if (a->flags != b->flags || a->dflags != b->dflags)
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "flags changed ");
	if (n < cap && strcmp(a->names, b->names))
		snprintf(out + n, cap - n, "dir names \"%s\" -> \"%s\" ", a->names, b->names);
	n = strlen(out);
	if (n && out[n - 1] == ' ')
		out[n - 1] = '\0';
}

static int rc(long r)
{
	return r < 0 ? -errno : 0;
}

static int write_through(const char *path, int flags, const char *mark)
{
	int w = open(path, flags | O_CLOEXEC);
	if (w < 0)
		return -errno;
	int r = write(w, mark, strlen(mark)) < 0 ? -errno : 0;
	close(w);
	return r;
}

/* A second name in dir, then a write through it. */
static int link_and_write(int olddir, const char *old, int flags, const char *mark)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/esc-link", dir);
	if (linkat(olddir, old, AT_FDCWD, path, flags) < 0)
		return -errno;
	write_through(path, O_WRONLY, mark);
	unlink(path);
	return 0;
}

static int setflags(int f)
{
	int fl;
	if (ioctl(f, FS_IOC_GETFLAGS, &fl) < 0)
		return -errno;
	fl |= FS_NODUMP_FL;
	return rc(ioctl(f, FS_IOC_SETFLAGS, &fl));
}

static int mmap_write(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	memcpy(p, "MM", 2);
	msync(p, 4096, MS_SYNC);
	munmap(p, 4096);
	return 0;
}

static int copy_into(void)
{
	int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return -errno;
	int r = rc(syscall(SYS_copy_file_range, src, NULL, fd, NULL, 4, 0));
	close(src);
	return r;
}

static int fchdir_create(void)
{
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return -errno;
	if (fchdir(dfd) < 0)
		return -errno;
	int r = write_through("esc-new", O_WRONLY | O_CREAT | O_EXCL, "new");
	unlink("esc-new");
	if (chdir(cwd) < 0)
		esc_usage("cannot go back to the start directory");
	return r;
}

static int attempt(int w, char *how, size_t cap)
{
	char p[64];
	struct timespec ts[2] = { { 1234567890, 0 }, { 1234567890, 0 } };
	switch (w) {
	case 0:
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		snprintf(how, cap, "open(%s, O_WRONLY) and write", p);
		return write_through(p, O_WRONLY, "w1");
	case 1:
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		snprintf(how, cap, "open(%s, O_RDWR|O_APPEND) and write", p);
		return write_through(p, O_RDWR | O_APPEND, "w2");
	case 2:
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		snprintf(how, cap, "open(%s, O_WRONLY|O_TRUNC)", p);
		return write_through(p, O_WRONLY | O_TRUNC, "");
	case 3:
		snprintf(p, sizeof p, "/dev/fd/%d", fd);
		snprintf(how, cap, "open(%s, O_WRONLY) and write", p);
		return write_through(p, O_WRONLY, "w3");
	case 4: snprintf(how, cap, "fchmod(file fd, 0600)"); return rc(fchmod(fd, 0600));
	case 5: snprintf(how, cap, "fchmod(dir fd, 0700)"); return rc(fchmod(dfd, 0700));
	case 6: snprintf(how, cap, "fchown(file fd, self)"); return rc(fchown(fd, getuid(), getgid()));
	case 7: snprintf(how, cap, "fchown(dir fd, self)"); return rc(fchown(dfd, getuid(), getgid()));
	case 8: snprintf(how, cap, "futimens(file fd, NULL)"); return rc(futimens(fd, NULL));
	case 9: snprintf(how, cap, "futimens(file fd, 2009)"); return rc(futimens(fd, ts));
	case 10: snprintf(how, cap, "futimens(dir fd, NULL)"); return rc(futimens(dfd, NULL));
	case 11:
		snprintf(how, cap, "fsetxattr(file fd, user.moat_esc)");
		return rc(fsetxattr(fd, "user.moat_esc", "1", 1, 0));
	case 12:
		snprintf(how, cap, "fsetxattr(dir fd, user.moat_esc)");
		return rc(fsetxattr(dfd, "user.moat_esc", "1", 1, 0));
	case 13: snprintf(how, cap, "ioctl(file fd, FS_IOC_SETFLAGS, +nodump)"); return setflags(fd);
	case 14: snprintf(how, cap, "ioctl(dir fd, FS_IOC_SETFLAGS, +nodump)"); return setflags(dfd);
	case 15:
		snprintf(how, cap, "fchmodat2(file fd, \"\", 0640, AT_EMPTY_PATH)");
		return rc(syscall(SYS_fchmodat2, fd, "", 0640, AT_EMPTY_PATH));
	case 16:
		snprintf(how, cap, "fchownat(file fd, \"\", self, AT_EMPTY_PATH)");
		return rc(fchownat(fd, "", getuid(), getgid(), AT_EMPTY_PATH));
	case 17:
		snprintf(how, cap, "utimensat(file fd, \"\", 2009, AT_EMPTY_PATH)");
		return rc(utimensat(fd, "", ts, AT_EMPTY_PATH));
	case 18:
		snprintf(how, cap, "fchmodat2(dir fd, \"\", 0700, AT_EMPTY_PATH)");
		return rc(syscall(SYS_fchmodat2, dfd, "", 0700, AT_EMPTY_PATH));
	case 19:
		snprintf(how, cap, "linkat(file fd, \"\", DIR/esc-link, AT_EMPTY_PATH) and write");
		return link_and_write(fd, "", AT_EMPTY_PATH, "w4");
	case 20:
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		snprintf(how, cap, "linkat(%s, DIR/esc-link, AT_SYMLINK_FOLLOW) and write", p);
		return link_and_write(AT_FDCWD, p, AT_SYMLINK_FOLLOW, "w5");
	case 21: snprintf(how, cap, "write(file fd)"); return rc(write(fd, "w6", 2));
	case 22: snprintf(how, cap, "pwrite(file fd)"); return rc(pwrite(fd, "w7", 2, 0));
	case 23: snprintf(how, cap, "ftruncate(file fd, 0)"); return rc(ftruncate(fd, 0));
	case 24: snprintf(how, cap, "fallocate(file fd, 0, 0, 8192)"); return rc(fallocate(fd, 0, 0, 8192));
	case 25: snprintf(how, cap, "copy_file_range into file fd"); return copy_into();
	case 26: snprintf(how, cap, "mmap(file fd, PROT_WRITE, MAP_SHARED)"); return mmap_write();
	case 27: snprintf(how, cap, "fchdir(dir fd) and create esc-new"); return fchdir_create();
	}
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc % 2 == 0)
		esc_usage("esc_overlay_lower_fd FILE DIR [FILE DIR ...]");
	esc_token();
	fprintf(stderr, "# uid %d gid %d\n", (int)getuid(), (int)getgid());
	for (int t = 1; t + 1 < argc; t += 2) {
		file = argv[t];
		dir = argv[t + 1];
		fd = open(file, O_RDONLY | O_CLOEXEC);
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || dfd < 0)
			esc_usage("cannot open FILE or DIR for reading");
		for (int w = 0;; w++) {
			char how[256], changed[1024];
			struct snap before, after;
			/* ctime and mtime come from a coarse clock: let it tick */
			nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
			take(&before);
			int r = attempt(w, how, sizeof how);
			if (r == 1)
				break;
			take(&after);
			changes(&before, &after, changed, sizeof changed);
			if (changed[0])
				esc_won("%s: %s: %s", file, how, changed);
			else
				esc_held("%s: %s: %s", file, how, r < 0 ? esc_errname(-r) : "0, host unchanged");
		}
		close(fd);
		close(dfd);
	}
	return esc_finish();
}
