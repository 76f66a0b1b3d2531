/* esc_pts_host — open a terminal of the host by its /dev/pts number.
 *
 * Attacks the synthetic /dev: the host's /dev/pts holds every user's
 * terminals, and a sandbox that could open one by name could read what is
 * typed there or type into it.  The runner starts a pty on the host (a
 * process of the sandbox's uid holds its master, so host permissions would
 * let the attempt in) and passes its number.  Natively open("/dev/pts/N")
 * works.  Under moat a pty exists only if the sandbox holds its master
 * (dev.c): ENOENT, and /dev/pts lists nothing of the host's.
 *
 * usage: esc_pts_host N
 */
#include "esc.h"
#include <dirent.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		esc_usage("esc_pts_host N");
	char path[64];
	snprintf(path, sizeof path, "/dev/pts/%s", argv[1]);
	int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		if (isatty(fd))
			esc_won("open(%s) gave the host's terminal", path);
		else
			esc_held("open(%s) gave something that is not a terminal", path);
		close(fd);
	} else {
		esc_held("open(%s): %s", path, esc_errname(errno));
	}
	DIR *d = opendir("/dev/pts");
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			if (strcmp(de->d_name, argv[1]) == 0)
				esc_won("/dev/pts lists the host's pty %s", argv[1]);
		closedir(d);
	}
	return esc_finish();
}
