/* esc_report_symlink — make moat's own report write land on a host file.
 *
 * A moat-side attempt (run.sh: side=moat).  `moat run --report FILE` with
 * FILE inside a writable --bind directory: moat, as root, writes the report
 * there at the end of the run, after the sandbox is gone — into whatever
 * the sandbox left at that name.  We leave (WAY):
 *
 *   symlink   DIR/report.json -> TARGET, a root-owned 0600 host file
 *             outside the view: a moat that opens the name (following it)
 *             truncates and rewrites the host file;
 *   dangling  the same with TARGET a name not yet there in a root-only
 *             host directory: O_CREAT through the link makes it;
 *   fifo      a FIFO at DIR/report.json: a moat that opens it for writing
 *             waits for a reader forever, and never exits;
 *   parent    DIR/sub (the report's parent; FILE is DIR/sub/report.json)
 *             moved away and replaced by a symlink -> TARGET, a root-only
 *             host directory: the report lands in it.
 *
 * We cannot see what moat does after we are gone, so the runner judges on
 * the host: the victim (state) must be unchanged, and moat must exit within
 * a few seconds (wall).  What the fixed moat does (docs/limits.md): the
 * report's file is opened before the sandbox starts (O_NOFOLLOW, O_NONBLOCK,
 * a regular file with one link), and written at the end through that fd or,
 * when the name was replaced meanwhile, as a new file renamed over the name
 * in the directory it opened then — never through what the sandbox left.
 *
 * Natively (--native, DIR a plain directory of the sandbox's uid) we plant
 * the same and answer UNSUPPORTED: nothing here can escape without moat.
 *
 * usage: esc_report_symlink [--native] WAY DIR TARGET
 */
#include "esc.h"
#include <sys/stat.h>

int main(int argc, char **argv)
{
	int i = 1, native = 0;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc != i + 3)
		esc_usage("esc_report_symlink [--native] symlink|dangling|fifo|parent|planted DIR TARGET");
	const char *way = argv[i], *dir = argv[i + 1], *target = argv[i + 2];
	char name[4096], moved[4096], what[8192];
	struct stat st;

	if (strcmp(way, "planted") == 0) {
		/* An earlier run left the link (the runner's fixture plays
		 * that run): nothing to do but be run. */
		snprintf(name, sizeof name, "%s/sub", dir);
		snprintf(what, sizeof what, "an earlier run left %s -> %s", name, target);
	} else if (strcmp(way, "parent") == 0) {
		snprintf(name, sizeof name, "%s/sub", dir);
		snprintf(moved, sizeof moved, "%s/sub.old", dir);
		if (rename(name, moved) < 0) {
			esc_held("rename %s -> %s: %s", name, moved, esc_errname(errno));
			return esc_finish();
		}
		if (symlink(target, name) < 0) {
			esc_held("symlink %s -> %s: %s", name, target, esc_errname(errno));
			return esc_finish();
		}
		snprintf(what, sizeof what, "moved the report's parent %s away and left a symlink to %s", name,
			 target);
	} else {
		snprintf(name, sizeof name, "%s/report.json", dir);
		if (unlink(name) < 0 && errno != ENOENT) {
			esc_held("unlink %s: %s", name, esc_errname(errno));
			return esc_finish();
		}
		int r;
		if (strcmp(way, "fifo") == 0)
			r = mkfifo(name, 0644);
		else if (strcmp(way, "symlink") == 0 || strcmp(way, "dangling") == 0)
			r = symlink(target, name);
		else
			esc_usage("WAY is symlink, dangling, fifo or parent");
		if (r < 0) {
			esc_held("%s at %s: %s", way, name, esc_errname(errno));
			return esc_finish();
		}
		if (strcmp(way, "fifo") == 0)
			snprintf(what, sizeof what, "left a FIFO at %s", name);
		else
			snprintf(what, sizeof what, "left %s -> %s", name, target);
	}
	if (lstat(name, &st) < 0) {
		esc_held("%s: gone right after: %s", name, esc_errname(errno));
		return esc_finish();
	}
	fprintf(stderr, "# %s\n", what);
	if (native)
		esc_unsupported("moat-side: natively there is no report to write (planted: %s)", what);
	esc_held("%s; the runner judges what moat then wrote", what);
	return esc_finish();
}
