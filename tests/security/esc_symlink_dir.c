/* esc_symlink_dir — a symlink to the secret's *directory*, then open
 * link/secret, openat on the directory fd the link yields, and list that fd
 * with getdents64.  Twice: with an absolute link (/tmp/l -> /var/tmp/moat-sec.X)
 * and with a relative one that climbs (/tmp/l -> ../../../../../../../../../../var/tmp/moat-sec.X).
 *
 * Attacks the path walk mid-path (docs/filesystem.md "How a path is walked": a symlink met in the
 * middle of a path is re-walked in the virtual namespace, not handed to the
 * kernel; ".." in a relative target never leaves the virtual root) and the fd
 * registry (an fd on a directory outside the view must never be granted:
 * openat(dirfd, "secret") would have a host directory to start from, and
 * getdents64 runs in the kernel on whatever fd we hold, so a host directory
 * fd we could list is an escape of its own).  Natively both links name the
 * secret's directory and every way reaches it.
 *
 * usage: ESC_TOKEN=... esc_symlink_dir /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"
#include <libgen.h>
#include <sys/syscall.h>

/* getdents64 on dfd: 1 if an entry is called name, 0 if not, -errno. */
static int lists(int dfd, const char *name, int *entries)
{
	char buf[8192];
	*entries = 0;
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (long off = 0; off < n;) {
			struct {
				unsigned long long ino;
				long long off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			if (strcmp(d->name, ".") && strcmp(d->name, ".."))
				++*entries;
			if (strcmp(d->name, name) == 0)
				return 1;
			off += d->reclen;
		}
	}
}

static void through(const char *kind, const char *target, const char *base)
{
	char link[256], path[8192], how[512];

	snprintf(link, sizeof link, "/tmp/esc_symlink_dir.%d", (int)getpid());
	unlink(link);
	if (symlink(target, link) < 0) {
		esc_held("%s symlink(%s, %s): %s", kind, target, link, esc_errname(errno));
		return;
	}

	snprintf(path, sizeof path, "%s/%s", link, base);
	snprintf(how, sizeof how, "open(%s dirlink/secret)", kind);
	esc_try_open(how, path);

	int dfd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		esc_held("open(%s dirlink, O_DIRECTORY): %s", kind, esc_errname(errno));
	} else {
		int r = esc_open_at_has_token(dfd, base);
		if (r == 1)
			esc_won("openat(fd of %s dirlink, %s): read the token", kind, base);
		else
			esc_held("openat(fd of %s dirlink, %s): %s", kind, base,
				 r == 0 ? "not the secret" : esc_errname(-r));
		int entries;
		r = lists(dfd, base, &entries);
		if (r == 1)
			esc_won("getdents64(fd of %s dirlink): listed the secret's directory (%s is in it)", kind,
				base);
		else
			esc_held("getdents64(fd of %s dirlink): %s", kind,
				 r == 0 ? "no entry of that name" : esc_errname(-r));
		close(dfd);
	}
	unlink(link);
}

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);
	char dir[4096], base[4096], rel[8192];

	snprintf(dir, sizeof dir, "%s", secret);
	snprintf(base, sizeof base, "%s", secret);
	const char *d = dirname(dir), *b = basename(base);

	through("absolute", d, b);

	/* /tmp/l -> ../../../(x10)var/tmp/moat-sec.X: natively the ".."s stop
	 * at "/", so it names the same directory. */
	size_t n = 0;
	for (int i = 0; i < 10; i++)
		n += (size_t)snprintf(rel + n, sizeof rel - n, "../");
	snprintf(rel + n, sizeof rel - n, "%s", d + 1);
	through("relative", rel, b);
	return esc_finish();
}
