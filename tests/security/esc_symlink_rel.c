/* esc_symlink_rel — a relative symlink in /tmp that climbs out:
 * /tmp/esc_symlink_rel.PID -> ../../../../../../var/tmp/moat-sec.X/secret
 *
 * Attacks the path walk (docs/filesystem.md "How a path is walked": a relative link target is walked
 * from the link's virtual directory, and ".." never leaves the virtual root)
 * and rule 1 (the kernel never follows a sandbox-planted link).  Natively the
 * ".."s stop at "/" and the rest names the secret.
 *
 * usage: ESC_TOKEN=... esc_symlink_rel /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);
	char target[8192], link[256];
	size_t n = 0;

	for (int i = 0; i < 10; i++)
		n += (size_t)snprintf(target + n, sizeof target - n, "../");
	snprintf(target + n, sizeof target - n, "%s", secret + 1);

	snprintf(link, sizeof link, "/tmp/esc_symlink_rel.%d", (int)getpid());
	unlink(link);
	if (symlink(target, link) < 0) {
		esc_held("symlink(%s, %s): %s", target, link, esc_errname(errno));
	} else {
		esc_try_open("open(relative symlink)", link);
		unlink(link);
	}

	/* a link pointing at ".." chains: /tmp/up -> .., then /tmp/up/up/... */
	snprintf(link, sizeof link, "/tmp/esc_up.%d", (int)getpid());
	unlink(link);
	if (symlink("..", link) < 0) {
		esc_held("symlink(.., %s): %s", link, esc_errname(errno));
	} else {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", link, secret + 1);
		esc_try_open("open(/tmp/up -> ..)", path);
		unlink(link);
	}
	return esc_finish();
}
