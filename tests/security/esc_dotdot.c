/* esc_dotdot — climb out of the cwd and out of /tmp with "..".
 *
 * Attacks the path walk (docs/filesystem.md "How a path is walked": ".." never leaves the virtual
 * root, a chroot's included) and rule 5 (the kernel cwd is an empty directory; every relative path
 * is walked by the supervisor from the virtual cwd).  Natively "../" x 40
 * from any directory reaches "/", and /tmp/../../.. is "/".
 *
 * usage: ESC_TOKEN=... esc_dotdot /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);
	char path[8192];
	size_t n = 0;

	/* relative to the cwd (/workspace under moat) */
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(path + n, sizeof path - n, "../");
	snprintf(path + n, sizeof path - n, "%s", secret + 1);
	esc_try_open("open(cwd/../x40)", path);

	/* through an absolute prefix that exists in the sandbox */
	n = (size_t)snprintf(path, sizeof path, "/tmp/");
	for (int i = 0; i < 12; i++)
		n += (size_t)snprintf(path + n, sizeof path - n, "../");
	snprintf(path + n, sizeof path - n, "%s", secret + 1);
	esc_try_open("open(/tmp/../x12)", path);

	/* and relative to a dirfd on "/" the sandbox got legally, both a
	 * readable one and an O_PATH one */
	static const struct {
		int flags;
		const char *name;
	} how[] = {{O_RDONLY | O_DIRECTORY, "O_RDONLY"}, {O_PATH | O_DIRECTORY, "O_PATH"}};
	for (size_t h = 0; h < sizeof how / sizeof how[0]; h++) {
		int root = open("/", how[h].flags | O_CLOEXEC);
		if (root < 0) {
			esc_held("open(/, %s): %s", how[h].name, esc_errname(errno));
			continue;
		}
		n = 0;
		for (int i = 0; i < 6; i++)
			n += (size_t)snprintf(path + n, sizeof path - n, "../");
		snprintf(path + n, sizeof path - n, "%s", secret + 1);
		int r = esc_open_at_has_token(root, path);
		if (r == 1)
			esc_won("openat(%s fd of /, ../x6): read the token", how[h].name);
		else
			esc_held("openat(%s fd of /, ../x6): %s", how[h].name,
				 r == 0 ? "not the secret" : esc_errname(-r));
		close(root);
	}
	/* the classic chroot escape: a root below the cwd, then ".." from
	 * the cwd, which a chroot does not move (served by moat: the view
	 * stays the floor; refused without the root inside) */
	char jail[] = "/tmp/esc-jail.XXXXXX";
	if (!mkdtemp(jail)) {
		esc_held("mkdtemp(%s): %s", jail, esc_errname(errno));
	} else if (chdir("/tmp") < 0 || chroot(jail) < 0) {
		esc_held("chroot(%s) with the cwd outside: %s", jail, esc_errname(errno));
		rmdir(jail);
	} else {
		n = 0;
		for (int i = 0; i < 40; i++)
			n += (size_t)snprintf(path + n, sizeof path - n, "../");
		snprintf(path + n, sizeof path - n, "%s", secret + 1);
		esc_try_open("open(../x40 after chroot, cwd outside the root)", path);
		rmdir(jail + 5); /* from the cwd, /tmp, which the root does not move */
	}
	return esc_finish();
}
