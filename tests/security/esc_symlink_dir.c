/* esc_symlink_dir — a symlink to the secret's *directory*, then open
 * link/secret (and openat on the directory the link yields).
 *
 * Attacks the path walk mid-path (DESIGN "Path walk": a symlink met in the
 * middle of a path is re-walked in the virtual namespace, not handed to the
 * kernel) and the fd registry (an fd on a directory outside the view must
 * never be granted, so openat(dirfd, "secret") has nothing to start from).
 *
 * usage: ESC_TOKEN=... esc_symlink_dir /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"
#include <libgen.h>

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);
	char dir[4096], base[4096], link[256], path[8192];

	snprintf(dir, sizeof dir, "%s", secret);
	snprintf(base, sizeof base, "%s", secret);
	const char *d = dirname(dir), *b = basename(base);

	snprintf(link, sizeof link, "/tmp/esc_symlink_dir.%d", (int)getpid());
	unlink(link);
	if (symlink(d, link) < 0) {
		esc_held("symlink(%s, %s): %s", d, link, esc_errname(errno));
		return esc_finish();
	}

	snprintf(path, sizeof path, "%s/%s", link, b);
	esc_try_open("open(dirlink/secret)", path);

	int dfd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		esc_held("open(dirlink, O_DIRECTORY): %s", esc_errname(errno));
	} else {
		int r = esc_open_at_has_token(dfd, b);
		if (r == 1)
			esc_won("openat(fd of dirlink, %s): read the token", b);
		else
			esc_held("openat(fd of dirlink, %s): %s", b, r == 0 ? "not the secret" : esc_errname(-r));
		close(dfd);
	}
	unlink(link);
	return esc_finish();
}
