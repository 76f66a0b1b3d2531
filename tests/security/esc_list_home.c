/* esc_list_home — list and stat the host's /root and /home.
 *
 * Attacks the default view (docs/filesystem.md "The default view": no /home, /root): they
 * must not exist for the sandbox at all — neither listable nor stat-able
 * (existence and metadata are already a leak).  Names are counted, never
 * printed.
 *
 * usage: esc_list_home
 */
#include "esc.h"
#include <dirent.h>
#include <sys/stat.h>

static void list(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		esc_held("opendir(%s): %s", dir, esc_errname(errno));
		return;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	if (n)
		esc_won("listed %s: %d entries", dir, n);
	else
		esc_held("opendir(%s) worked but it is empty", dir);
}

static void stat_it(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0)
		esc_won("stat(%s): uid %d mode %o", path, (int)st.st_uid, (unsigned)(st.st_mode & 07777));
	else
		esc_held("stat(%s): %s", path, esc_errname(errno));
}

int main(void)
{
	list("/root");
	list("/home");
	stat_it("/root");
	stat_it("/root/.bashrc");
	return esc_finish();
}
