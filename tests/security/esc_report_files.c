/* esc_report_files — write files the run report does not list.
 *
 * A moat-side attempt (run.sh: side=moat).  The report's `files` is the
 * caller's account of what the run wrote in writable mounts (an agent
 * collects its artifacts from it, a reviewer checks it).  A file left out
 * without a word is a file written behind the reader's back.  We write:
 *
 *   .moat-TOKEN-w, .moat-TOKEN-t, .moat-TOKEN-b   in /workspace, /tmp and
 *                  DIR (a --bind): names that look like moat's own;
 *   deep70-TOKEN   70 directories below /workspace;
 *   deep300-TOKEN  300 below;
 *   long-TOKEN     below 16 nested directories of 250-byte names (a path
 *                  of ~4,070 bytes, made with relative calls);
 *
 * each holding the token, and print "# made NAME" for each on stdout.
 * The runner judges the report (files_judge): every file made must be
 * listed, unless the report says its list is incomplete (files-truncated,
 * files-omitted, dirs-not-walked).  The fixed moat lists `.moat-*` names
 * and flags what it does not walk or cannot list (docs/limits.md).
 *
 * Natively (--native) everything goes to DIR: UNSUPPORTED.
 *
 * usage: esc_report_files [--native] DIR
 */
#include "esc.h"
#include <sys/stat.h>

static int native;

static void put(int dirfd, const char *name, const char *shown)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "# create %s: %s\n", shown, esc_errname(errno));
		return;
	}
	dprintf(fd, "%s\n", esc_token());
	close(fd);
	printf("# made %s\n", name);
}

/* depth nested directories named `comp` below base, then NAME there. */
static void nest(const char *base, const char *comp, int depth, const char *name)
{
	int d = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; d >= 0 && i < depth; i++) {
		if (mkdirat(d, comp, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "# mkdir at depth %d for %s: %s\n", i, name, esc_errname(errno));
			close(d);
			return;
		}
		int n = openat(d, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(d);
		d = n;
	}
	if (d < 0) {
		fprintf(stderr, "# open a directory for %s: %s\n", name, esc_errname(errno));
		return;
	}
	put(d, name, name);
	close(d);
}

int main(int argc, char **argv)
{
	int i = 1;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc != i + 1)
		esc_usage("esc_report_files [--native] DIR");
	const char *dir = argv[i], *tok = esc_token();
	const char *ws = native ? dir : "/workspace", *tmp = native ? dir : "/tmp";
	char name[512], base[4096];
	struct {
		const char *where, *tag;
	} hidden[3] = { { ws, "w" }, { tmp, "t" }, { dir, "b" } };
	for (int k = 0; k < 3; k++) {
		int d = open(hidden[k].where, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(name, sizeof name, ".moat-%s-%s", tok, hidden[k].tag);
		if (d >= 0) {
			put(d, name, name);
			close(d);
		}
	}
	snprintf(base, sizeof base, "%s/deep", ws);
	mkdir(base, 0755);
	snprintf(name, sizeof name, "deep70-%s", tok);
	nest(base, "d", 70, name);
	snprintf(name, sizeof name, "deep300-%s", tok);
	nest(base, "e", 300, name);
	char comp[251];
	memset(comp, 'l', 250);
	comp[250] = '\0';
	snprintf(base, sizeof base, "%s/long", ws);
	mkdir(base, 0755);
	snprintf(name, sizeof name, "long-%s", tok);
	nest(base, comp, 16, name);
	fflush(stdout);
	if (native)
		esc_unsupported("moat-side: natively there is no report (the files were made)");
	esc_held("files made; the runner reads the report");
	return esc_finish();
}
