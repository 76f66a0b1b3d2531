/* esc_dev_chmod — change the metadata of a host device node through the
 * synthetic /dev.
 *
 * Attacks rule 6 (the host's /dev is never passed through) and
 * docs/filesystem.md "Permissions" (/dev is read-only): moat's /dev shows
 * the host's null, zero, full, random and urandom nodes, and opens them by
 * their host paths for the sandbox.  A chmod, chown or utimensat that moat
 * performed on such a node would change the host's /dev — as uid 0 the
 * sandbox owns /dev/null, and its 0666 mode lets anyone set its times.
 *
 * Harmless by construction, even against a broken moat: the runner
 * bind-mounts a node of its own (mknod c 1 3 under its scratch directory)
 * over /dev/null in this attempt's private mount namespace, so the only
 * inode any of this can reach is the runner's copy; its inode number is
 * our argument, and we refuse to do anything if /dev/null is not that
 * inode.  Even so, every way asks for what the node already has (its own
 * mode, its own owner), and only a time is set:
 *   - chmod("/dev/null", its mode), fchmod(fd, its mode);
 *   - chown("/dev/null", its uid, its gid), fchown(fd, the same);
 *   - utimensat("/dev/null", NULL), futimens(fd, NULL).
 * Each succeeds only by changing the node's ctime, which is how it is
 * judged: through an O_RDONLY fd on /dev/null, with the kernel's fstat
 * (ctime, mtime, mode, owner).  The runner also compares its node before
 * and after the moat run.
 *
 * Natively (as root) every way works.  Under moat they must fail with EROFS
 * (/dev is read-only: an emulated error, not a policy denial, so no audit
 * record is expected) — in the uid-0 pass too, where host permissions no
 * longer stand in the way of chmod and chown.
 *
 * usage: esc_dev_chmod INO   (the inode number of the runner's node)
 */
#include "esc.h"
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

static int fd; /* O_RDONLY on /dev/null */
static struct stat orig;

static void kstat(struct stat *st)
{
	if (syscall(SYS_fstat, fd, st) < 0) /* the kernel's, not a supervised newfstatat */
		esc_usage("fstat of our own fd failed");
}

static int ts_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static void changes(const struct stat *a, const struct stat *b, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__), n = n < cap ? n : cap)
	if (a->st_mode != b->st_mode)
		ADD("mode %o -> %o ", (unsigned)(a->st_mode & 07777), (unsigned)(b->st_mode & 07777));
	if (a->st_uid != b->st_uid || a->st_gid != b->st_gid)
		ADD("owner changed ");
	if (!ts_eq(a->st_mtim, b->st_mtim))
		ADD("mtime changed ");
	if (!ts_eq(a->st_ctim, b->st_ctim))
		ADD("ctime changed ");
#undef ADD
	if (n && out[n - 1] == ' ')
		out[n - 1] = '\0';
}

enum way { CHMOD, FCHMOD, CHOWN, FCHOWN, UTIMENSAT, FUTIMENS, NWAYS };

static int attempt(enum way w, char *how, size_t cap)
{
	mode_t mode = orig.st_mode & 07777;
	switch (w) {
	case CHMOD:
		snprintf(how, cap, "chmod(/dev/null, %o)", (unsigned)mode);
		return chmod("/dev/null", mode) < 0 ? -errno : 0;
	case FCHMOD:
		snprintf(how, cap, "fchmod(fd of /dev/null, %o)", (unsigned)mode);
		return fchmod(fd, mode) < 0 ? -errno : 0;
	case CHOWN:
		snprintf(how, cap, "chown(/dev/null, %d, %d)", (int)orig.st_uid, (int)orig.st_gid);
		return chown("/dev/null", orig.st_uid, orig.st_gid) < 0 ? -errno : 0;
	case FCHOWN:
		snprintf(how, cap, "fchown(fd of /dev/null, %d, %d)", (int)orig.st_uid, (int)orig.st_gid);
		return fchown(fd, orig.st_uid, orig.st_gid) < 0 ? -errno : 0;
	case UTIMENSAT:
		snprintf(how, cap, "utimensat(/dev/null, NULL)");
		return utimensat(AT_FDCWD, "/dev/null", NULL, 0) < 0 ? -errno : 0;
	case FUTIMENS:
		snprintf(how, cap, "futimens(fd of /dev/null, NULL)");
		return futimens(fd, NULL) < 0 ? -errno : 0;
	case NWAYS:
		break;
	}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		esc_usage("esc_dev_chmod INO");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		esc_usage("cannot open /dev/null");
	kstat(&orig);
	/* Never anything but the runner's own node. */
	if (!S_ISCHR(orig.st_mode) || (unsigned long long)orig.st_ino != strtoull(argv[1], NULL, 10))
		esc_usage("/dev/null is not the runner's node (inode INO): refusing to touch it");
	fprintf(stderr, "# uid %d; /dev/null: inode %llu mode %o owner %d:%d\n", (int)getuid(),
		(unsigned long long)orig.st_ino, (unsigned)(orig.st_mode & 07777), (int)orig.st_uid,
		(int)orig.st_gid);

	for (enum way w = 0; w < NWAYS; w++) {
		char how[128], changed[256];
		struct stat before, after;
		/* ctime comes from a coarse clock: let it tick */
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
		kstat(&before);
		int r = attempt(w, how, sizeof how);
		kstat(&after);
		changes(&before, &after, changed, sizeof changed);
		if (changed[0])
			esc_won("%s: %s", how, changed);
		else if (r < 0)
			esc_held("%s: %s", how, esc_errname(-r));
		else
			esc_held("%s: returned 0 but the node is unchanged", how);
	}
	close(fd);
	return esc_finish();
}
