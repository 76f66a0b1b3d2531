/* esc_symlink_abs — plant a symlink to the secret's absolute host path in a
 * writable place (/tmp, the cwd) and open through it.
 *
 * Attacks the path walk (docs/filesystem.md "How a path is walked": symlinks are read and re-walked
 * in the virtual namespace) and rule 1 (the kernel must never follow a link
 * the sandbox planted: the supervisor opens with RESOLVE_NO_SYMLINKS and walks
 * the target itself).  The link itself may be created; following it must not
 * reach the host.
 *
 * usage: ESC_TOKEN=... esc_symlink_abs /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"

static const char *esc_secret_path;

static void via(const char *link)
{
	unlink(link);
	if (symlink(esc_secret_path, link) < 0) {
		esc_held("symlink(secret, %s): %s", link, esc_errname(errno));
		return;
	}
	esc_try_open("open(symlink)", link);
	unlink(link);
}

int main(int argc, char **argv)
{
	esc_secret_path = esc_secret_arg(argc, argv);
	char link[256];

	snprintf(link, sizeof link, "/tmp/esc_symlink_abs.%d", (int)getpid());
	via(link);
	snprintf(link, sizeof link, "esc_symlink_abs.%d", (int)getpid());
	via(link);
	return esc_finish();
}
