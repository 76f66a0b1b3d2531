/* esc_ro_bind_write — change a file of a read-only bind (--ro-bind) through
 * the fd we may legitimately hold on it.
 *
 * Attacks the read-only mount rule (docs/filesystem.md "Permissions":
 * read-only mounts answer EROFS to writes, creation, removal and attribute
 * changes — also through an fd).  moat enforces --ro-bind in the supervisor,
 * not in the kernel: the host directory behind it is writable to the kernel
 * (the runner makes the file owned by the sandbox's own uid, mode 0644, so
 * host permissions do not stand in the way either), and an fd moat granted
 * on it is a real host fd.  So every call that changes a file through an fd,
 * or turns a read-only fd into a writable one, must be supervised and
 * check the mount of the fd's file.  We open FILE O_RDONLY (allowed) and try:
 *   - open("/proc/self/fd/N", O_WRONLY) (and "/dev/fd/N"), then write;
 *   - fchmod(fd, 0777); fchown(fd, our uid, our gid); futimens(fd, NULL);
 *     fsetxattr(fd, "user.moat_esc");
 *   - linkat(fd, "", LINKDIR/x, AT_EMPTY_PATH) and linkat("/proc/self/fd/N",
 *     LINKDIR/y, AT_SYMLINK_FOLLOW): a second name in a writable mount,
 *     which is then opened for writing;
 *   - open(FILE, O_WRONLY), truncate(FILE, 0), chmod(FILE, 0600).
 * Each way is judged by its effect on the host file, seen through our own
 * fd with the kernel's fstat and pread: content, mode, owner, mtime, ctime
 * (fchown to our own ids changes nothing else) and link count.  The runner
 * also compares the host file before and after the moat run.
 *
 * Natively the runner runs us as the file's owner (setpriv), and every way
 * works.  Under moat (FILE = /r/f, LINKDIR = /tmp) they must answer EROFS,
 * EXDEV or EPERM: emulated errors of a read-only file system, not policy
 * denials, so no audit record is expected.
 *
 * usage: esc_ro_bind_write FILE LINKDIR
 *        (FILE: our uid's, 0644, "orig"; LINKDIR: writable, on FILE's file
 *        system natively)
 */
#include "esc.h"
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>

static const char *file, *linkdir;
static int fd; /* O_RDONLY on file: our window on the host inode */

struct snap {
	char data[64];
	ssize_t len;
	struct stat st;
};

static void take(struct snap *s)
{
	memset(s, 0, sizeof *s);
	if (syscall(SYS_fstat, fd, &s->st) < 0) /* the kernel's, not a supervised newfstatat */
		esc_usage("fstat of our own fd failed");
	s->len = pread(fd, s->data, sizeof s->data - 1, 0);
	for (ssize_t i = 0; i < s->len; i++) /* one line for the report */
		if (s->data[i] < 0x20 || s->data[i] > 0x7e)
			s->data[i] = '.';
}

static int ts_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* What changed between a and b, into out ("" if nothing). */
static void changes(const struct snap *a, const struct snap *b, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__), n = n < cap ? n : cap)
	if (a->len != b->len || (a->len > 0 && memcmp(a->data, b->data, (size_t)a->len)))
		ADD("content \"%s\" -> \"%s\" ", a->data, b->data);
	if (a->st.st_mode != b->st.st_mode)
		ADD("mode %o -> %o ", (unsigned)(a->st.st_mode & 07777), (unsigned)(b->st.st_mode & 07777));
	if (a->st.st_uid != b->st.st_uid || a->st.st_gid != b->st.st_gid)
		ADD("owner %d:%d -> %d:%d ", (int)a->st.st_uid, (int)a->st.st_gid, (int)b->st.st_uid,
		    (int)b->st.st_gid);
	if (!ts_eq(a->st.st_mtim, b->st.st_mtim))
		ADD("mtime changed ");
	if (!ts_eq(a->st.st_ctim, b->st.st_ctim))
		ADD("ctime changed ");
	if (a->st.st_nlink != b->st.st_nlink)
		ADD("links %lu -> %lu ", (unsigned long)a->st.st_nlink, (unsigned long)b->st.st_nlink);
#undef ADD
	if (n && out[n - 1] == ' ')
		out[n - 1] = '\0';
}

/* Open path for writing and overwrite the start with mark.  0 or -errno. */
static int write_through(const char *path, const char *mark)
{
	int w = open(path, O_WRONLY | O_CLOEXEC);
	if (w < 0)
		return -errno;
	int r = pwrite(w, mark, strlen(mark), 0) < 0 ? -errno : 0;
	close(w);
	return r;
}

/* Make a second name, then write through it.  0 or -errno (of linkat). */
static int link_and_write(int olddir, const char *old, const char *name, int flags, const char *mark,
			  char *note, size_t cap)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", linkdir, name);
	unlink(path);
	if (linkat(olddir, old, AT_FDCWD, path, flags) < 0)
		return -errno;
	int r = write_through(path, mark);
	snprintf(note, cap, " (the new name %s; writing through it: %s)", path, r ? esc_errname(-r) : "ok");
	return 0; /* main removes the name once it has looked at the file */
}

static void unlink_links(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/x", linkdir);
	unlink(path);
	snprintf(path, sizeof path, "%s/y", linkdir);
	unlink(path);
}

enum way {
	PROC_REOPEN, DEV_FD_REOPEN, FCHMOD, FCHOWN, FUTIMENS, FSETXATTR, LINK_EMPTY_PATH, LINK_PROC_FD,
	OPEN_WRONLY, TRUNCATE, CHMOD, NWAYS
};

static int attempt(enum way w, char *how, size_t cap, char *note, size_t ncap)
{
	char p[64];
	note[0] = '\0';
	switch (w) {
	case PROC_REOPEN:
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		snprintf(how, cap, "open(%s, O_WRONLY) and write", p);
		return write_through(p, "w1");
	case DEV_FD_REOPEN:
		snprintf(p, sizeof p, "/dev/fd/%d", fd);
		snprintf(how, cap, "open(%s, O_WRONLY) and write", p);
		return write_through(p, "w2");
	case FCHMOD:
		snprintf(how, cap, "fchmod(fd, 0777)");
		return fchmod(fd, 0777) < 0 ? -errno : 0;
	case FCHOWN:
		snprintf(how, cap, "fchown(fd, %d, %d)", (int)getuid(), (int)getgid());
		return fchown(fd, getuid(), getgid()) < 0 ? -errno : 0;
	case FUTIMENS:
		snprintf(how, cap, "futimens(fd, NULL)");
		return futimens(fd, NULL) < 0 ? -errno : 0;
	case FSETXATTR:
		snprintf(how, cap, "fsetxattr(fd, user.moat_esc)");
		return fsetxattr(fd, "user.moat_esc", "1", 1, 0) < 0 ? -errno : 0;
	case LINK_EMPTY_PATH:
		snprintf(how, cap, "linkat(fd, \"\", %s/x, AT_EMPTY_PATH)", linkdir);
		return link_and_write(fd, "", "x", AT_EMPTY_PATH, "w5", note, ncap);
	case LINK_PROC_FD:
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		snprintf(how, cap, "linkat(%s, %s/y, AT_SYMLINK_FOLLOW)", p, linkdir);
		return link_and_write(AT_FDCWD, p, "y", AT_SYMLINK_FOLLOW, "w6", note, ncap);
	case OPEN_WRONLY:
		snprintf(how, cap, "open(%s, O_WRONLY) and write", file);
		return write_through(file, "w7");
	case TRUNCATE:
		snprintf(how, cap, "truncate(%s, 0)", file);
		return truncate(file, 0) < 0 ? -errno : 0;
	case CHMOD:
		snprintf(how, cap, "chmod(%s, 0600)", file);
		return chmod(file, 0600) < 0 ? -errno : 0;
	case NWAYS:
		break;
	}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || argv[1][0] != '/' || argv[2][0] != '/')
		esc_usage("esc_ro_bind_write FILE LINKDIR");
	file = argv[1];
	linkdir = argv[2];
	fprintf(stderr, "# uid %d gid %d\n", (int)getuid(), (int)getgid());
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		esc_usage("cannot open FILE for reading");
	unlink_links();

	for (enum way w = 0; w < NWAYS; w++) {
		char how[256], note[4352], changed[512];
		struct snap before, after;
		/* ctime and mtime come from a coarse clock: let it tick, so that
		 * a change is visible even when only a time moves. */
		nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
		take(&before);
		int r = attempt(w, how, sizeof how, note, sizeof note);
		take(&after);
		unlink_links();
		changes(&before, &after, changed, sizeof changed);
		if (changed[0])
			esc_won("%s: %s%s", how, changed, note);
		else if (r < 0)
			esc_held("%s: %s", how, esc_errname(-r));
		else
			esc_held("%s: returned 0 but the host file is unchanged%s", how, note);
	}
	close(fd);
	return esc_finish();
}
