/* esc_reopen_stdin — change the host file behind an inherited read-only
 * stdin.
 *
 * Attacks the rule that an fd moat did not grant gives nothing beyond what
 * it is (docs/filesystem.md "Permissions": a /proc/self/fd/N reopened for
 * writing is refused unless N was already open for writing or its file is
 * in a writable mount — an inherited stdin from a host file stays
 * read-only — and fchmod, fchown, fsetxattr and futimens check the mount
 * of the fd's file).  The runner starts moat with a host file as stdin,
 * opened read-only; the file lies outside the view but belongs to the
 * sandbox's uid, 0644, so host permissions would let the sandbox write it:
 * only moat stands in the way.  We try:
 *   - open("/proc/self/fd/0", O_WRONLY) (and O_RDWR, and "/dev/stdin",
 *     "/dev/fd/0") and write;
 *   - fchmod(0, 0666); fchown(0, our uid, our gid); futimens(0, NULL);
 *     fsetxattr(0, "user.moat_esc").
 * Each way is judged by its effect on the host file, through fd 0 itself
 * with the kernel's fstat and pread: content, mode, owner, mtime, ctime.
 * The runner also compares the host file before and after the moat run.
 *
 * Natively the runner runs us as the file's owner (setpriv) with the same
 * stdin, and every way works.  Under moat they must fail with EROFS: the
 * file is in no writable mount, and moat answers as for a read-only file
 * system — an emulated error, not a policy denial, so no audit record is
 * expected.
 *
 * usage: esc_reopen_stdin < FILE   (FILE: ours, 0644, "orig", old mtime)
 */
#include "esc.h"
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>

struct snap {
	char data[64];
	ssize_t len;
	struct stat st;
};

static void take(struct snap *s)
{
	memset(s, 0, sizeof *s);
	if (syscall(SYS_fstat, 0, &s->st) < 0) /* the kernel's, not a supervised newfstatat */
		esc_usage("fstat of fd 0 failed");
	s->len = pread(0, s->data, sizeof s->data - 1, 0);
	for (ssize_t i = 0; i < s->len; i++)
		if (s->data[i] < 0x20 || s->data[i] > 0x7e)
			s->data[i] = '.';
}

static int ts_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

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
		ADD("owner changed ");
	if (!ts_eq(a->st.st_mtim, b->st.st_mtim))
		ADD("mtime changed ");
	if (!ts_eq(a->st.st_ctim, b->st.st_ctim))
		ADD("ctime changed ");
#undef ADD
	if (n && out[n - 1] == ' ')
		out[n - 1] = '\0';
}

static int write_through(const char *path, int flags, const char *mark)
{
	int w = open(path, flags | O_CLOEXEC);
	if (w < 0)
		return -errno;
	int r = pwrite(w, mark, strlen(mark), 0) < 0 ? -errno : 0;
	close(w);
	return r;
}

enum way { PROC_WRONLY, PROC_RDWR, DEV_STDIN, DEV_FD, FCHMOD, FCHOWN, FUTIMENS, FSETXATTR, NWAYS };

static int attempt(enum way w, char *how, size_t cap)
{
	switch (w) {
	case PROC_WRONLY:
		snprintf(how, cap, "open(/proc/self/fd/0, O_WRONLY) and write");
		return write_through("/proc/self/fd/0", O_WRONLY, "w1");
	case PROC_RDWR:
		snprintf(how, cap, "open(/proc/self/fd/0, O_RDWR) and write");
		return write_through("/proc/self/fd/0", O_RDWR, "w2");
	case DEV_STDIN:
		snprintf(how, cap, "open(/dev/stdin, O_WRONLY) and write");
		return write_through("/dev/stdin", O_WRONLY, "w3");
	case DEV_FD:
		snprintf(how, cap, "open(/dev/fd/0, O_WRONLY) and write");
		return write_through("/dev/fd/0", O_WRONLY, "w4");
	case FCHMOD:
		snprintf(how, cap, "fchmod(0, 0666)");
		return fchmod(0, 0666) < 0 ? -errno : 0;
	case FCHOWN:
		snprintf(how, cap, "fchown(0, %d, %d)", (int)getuid(), (int)getgid());
		return fchown(0, getuid(), getgid()) < 0 ? -errno : 0;
	case FUTIMENS:
		snprintf(how, cap, "futimens(0, NULL)");
		return futimens(0, NULL) < 0 ? -errno : 0;
	case FSETXATTR:
		snprintf(how, cap, "fsetxattr(0, user.moat_esc)");
		return fsetxattr(0, "user.moat_esc", "1", 1, 0) < 0 ? -errno : 0;
	case NWAYS:
		break;
	}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		esc_usage("esc_reopen_stdin < FILE");
	struct stat st;
	if (syscall(SYS_fstat, 0, &st) < 0 || !S_ISREG(st.st_mode) || (fcntl(0, F_GETFL) & O_ACCMODE) != O_RDONLY)
		esc_usage("stdin must be a regular file opened read-only");
	fprintf(stderr, "# uid %d gid %d; stdin: uid %d mode %o\n", (int)getuid(), (int)getgid(),
		(int)st.st_uid, (unsigned)(st.st_mode & 07777));

	for (enum way w = 0; w < NWAYS; w++) {
		char how[128], changed[512];
		struct snap before, after;
		/* ctime and mtime come from a coarse clock: let it tick */
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
		take(&before);
		int r = attempt(w, how, sizeof how);
		take(&after);
		changes(&before, &after, changed, sizeof changed);
		if (changed[0])
			esc_won("%s: %s", how, changed);
		else if (r < 0)
			esc_held("%s: %s", how, esc_errname(-r));
		else
			esc_held("%s: returned 0 but the host file is unchanged", how);
	}
	return esc_finish();
}
