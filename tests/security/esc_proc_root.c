/* esc_proc_root — reach the host root through /proc magic links:
 * /proc/self/root, /proc/thread-self/root, /proc/1/root, /proc/PPID/root
 * (and /proc/self/cwd/../..), then the secret's path below them.
 *
 * Attacks rule 6 (the host's /proc is never passed through: /proc is
 * synthesized and shows only sandbox processes) and the bind backend's
 * RESOLVE_NO_MAGICLINKS.  Natively, as root, every one of these is "/".
 *
 * usage: ESC_TOKEN=... esc_proc_root /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);
	char path[8192];
	char ppid[32];
	snprintf(ppid, sizeof ppid, "%d", (int)getppid());
	const char *roots[] = {"/proc/self/root", "/proc/thread-self/root", "/proc/1/root", NULL};

	for (int i = 0; roots[i]; i++) {
		snprintf(path, sizeof path, "%s%s", roots[i], secret);
		esc_try_open("open(/proc root link)", path);
	}
	snprintf(path, sizeof path, "/proc/%s/root%s", ppid, secret);
	esc_try_open("open(/proc/PPID/root)", path);
	snprintf(path, sizeof path, "/proc/self/cwd/../../../../../..%s", secret);
	esc_try_open("open(/proc/self/cwd/..)", path);
	return esc_finish();
}
