/* esc_audit_erase — erase or forge moat's audit log from inside.
 *
 * A moat-side attempt (run.sh: side=moat).  The audit log is what a
 * security team reads after a run; the sandbox must not be able to touch
 * it.  `--audit-log FILE` where FILE sits in a directory the sandbox can
 * write (a writable --bind, reached by another spelling of its path; the
 * upper layer of an --overlay kept with --persist) — moat, as root, creates
 * it there 0600, but the directory is the sandbox's: it can unlink the log
 * (moat then writes to a file nobody will find) or rename a forged one over
 * it.  First we are denied something the log must show (an open of
 * /root/moat-esc-alog-TOKEN), then (WAY):
 *
 *   unlink    unlink(LOG);
 *   forge     write a harmless-looking record to LOG's directory and
 *             rename it over LOG;
 *   none      nothing more (esc_audit_symlink: the log's name is a
 *             symlink planted before the run, to a root-only host file);
 *
 * then we are denied once more (/root/moat-esc-alog2-TOKEN).
 *
 * The runner judges on the host: the log must still hold the record of
 * the first denial (or moat refused the configuration: exit 125, one line,
 * the sandbox never run — what the fixed moat does with an --audit-log
 * inside a writable --bind or --persist directory of the same run); for
 * `none`, the symlink's victim must be unchanged (the fixed moat opens the
 * log with O_NOFOLLOW).
 *
 * Natively (--native) the same on a plain directory: UNSUPPORTED.
 *
 * usage: esc_audit_erase [--native] unlink|forge|none LOG
 */
#include "esc.h"
#include <libgen.h>

static void denied(const char *tag)
{
	char p[256];
	snprintf(p, sizeof p, "/root/moat-esc-%s-%s", tag, esc_token());
	int fd = open(p, O_RDONLY);
	fprintf(stderr, "# open %s: %s\n", p, fd < 0 ? esc_errname(errno) : "opened?");
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	int i = 1, native = 0;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc != i + 2)
		esc_usage("esc_audit_erase [--native] unlink|forge|none LOG");
	const char *way = argv[i], *log = argv[i + 1];
	char what[8192] = "";

	denied("alog");
	if (strcmp(way, "unlink") == 0) {
		if (unlink(log) < 0) {
			esc_held("unlink %s: %s", log, esc_errname(errno));
			return esc_finish();
		}
		snprintf(what, sizeof what, "unlinked the audit log %s", log);
	} else if (strcmp(way, "forge") == 0) {
		char d[4096], forged[8192];
		snprintf(d, sizeof d, "%s", log);
		snprintf(forged, sizeof forged, "%s/.forged-audit", dirname(d));
		FILE *f = fopen(forged, "w");
		if (!f) {
			esc_held("create %s: %s", forged, esc_errname(errno));
			return esc_finish();
		}
		fprintf(f, "{\"time\":\"2026-01-01T00:00:00.000000Z\",\"pid\":1,\"tid\":1,\"comm\":\"sh\","
			   "\"exe\":\"/bin/sh\",\"syscall\":\"getpid\",\"result\":1,\"decision\":\"allow\"}\n");
		if (fclose(f) != 0 || rename(forged, log) < 0) {
			esc_held("rename %s over %s: %s", forged, log, esc_errname(errno));
			return esc_finish();
		}
		snprintf(what, sizeof what, "renamed a forged log over %s", log);
	} else if (strcmp(way, "none") == 0) {
		snprintf(what, sizeof what, "was denied (the log's name is the runner's symlink)");
	} else {
		esc_usage("WAY is unlink, forge or none");
	}
	denied("alog2");
	fprintf(stderr, "# %s\n", what);
	if (native)
		esc_unsupported("moat-side: natively there is no audit log (did: %s)", what);
	esc_held("%s; the runner judges the log on the host", what);
	return esc_finish();
}
