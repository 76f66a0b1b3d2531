/* esc_hardlink — link(secret, writable place) and read the new name.
 *
 * Attacks the default view and rule 1 for two-path calls: the old path of
 * link/linkat must be walked in the virtual namespace like any other path,
 * so a host file outside the view can never be given a second name inside a
 * writable mount (/tmp, /workspace).
 *
 * usage: ESC_TOKEN=... esc_hardlink /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"

static void via(const char *secret, const char *name, int use_linkat)
{
	unlink(name);
	int r = use_linkat ? linkat(AT_FDCWD, secret, AT_FDCWD, name, 0) : link(secret, name);
	if (r < 0) {
		esc_held("%s(secret, %s): %s", use_linkat ? "linkat" : "link", name, esc_errname(errno));
		return;
	}
	esc_try_open(use_linkat ? "linkat+open" : "link+open", name);
	unlink(name);
}

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);
	char name[256];

	/* /tmp (natively only if it shares a filesystem with the secret) */
	snprintf(name, sizeof name, "/tmp/esc_hardlink.%d", (int)getpid());
	via(secret, name, 0);
	/* the cwd (/workspace under moat; natively a directory beside the secret) */
	snprintf(name, sizeof name, "esc_hardlink.%d", (int)getpid());
	via(secret, name, 1);
	return esc_finish();
}
