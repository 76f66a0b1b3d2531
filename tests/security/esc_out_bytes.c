/* esc_out_bytes — names the sandbox chooses, in what moat writes for a
 * reader: the audit log, the run report, --json.
 *
 * A moat-side attempt (run.sh: side=moat).  Every name in moat's records
 * may be the sandbox's: a path it opens, its command name, the path of the
 * program it runs, the names of the files it writes, the bytes of its
 * stdout.  A reader takes these files as UTF-8 JSON, one object a line, and
 * people look at them in terminals.  We choose bytes that break either:
 *   \x9b       a raw C1 CSI (not UTF-8: a strict decoder fails; a terminal
 *              in an 8-bit mode starts an escape sequence),
 *   \xc2\x9b   U+009B, CSI as valid UTF-8,
 *   \x1b[2J    ESC: clears the screen,
 *   \xe2\x80\xae U+202E, right-to-left override,
 *   \xff       never valid UTF-8,
 * and put them in: our command name (prctl PR_SET_NAME), the path of a
 * copy of ourselves in /tmp that we exec (exe), a denied open of
 * /root/moat-esc-c1-<bytes>-TOKEN (path, resolved, args), files we create
 * in /workspace and in DIR (a --bind: the report's `files`), and our stdout
 * (--json's `stdout`).
 *
 * The runner judges (bytes_judge): every line of the audit log, the report
 * and moat's --json output must decode as strict UTF-8 and parse as JSON,
 * and hold no raw C1 control (U+0080-U+009F), ESC, line/paragraph
 * separator or bidirectional control.  The fixed moat writes them with
 * \uXXXX escapes, and bytes that are not UTF-8 as U+FFFD with the exact
 * bytes in a `*-hex` field (docs/audit.md "Strings").
 *
 * Natively (--native) we make the same names and answer UNSUPPORTED.
 *
 * usage: esc_out_bytes [--native] DIR          (DIR: /b under moat)
 *        esc_out_bytes --child                 (the copy in /tmp)
 */
#include "esc.h"
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const char *const bad[] = { "\x9b", "\xc2\x9b", "\x1b[2J", "\xe2\x80\xae", "\xff" };
enum { NBAD = 5 };

static void denied(void)
{
	char p[512];
	snprintf(p, sizeof p, "/root/moat-esc-c1-\x9b-\xc2\x9b-\x1b[2J-\xe2\x80\xae-\xff-%s", esc_token());
	int fd = open(p, O_RDONLY);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--child") == 0) {
		prctl(PR_SET_NAME, "c\x9b\xc2\x9b\x1b[2J\xe2\x80\xae\xff", 0, 0, 0);
		denied();
		return 0;
	}
	int i = 1, native = 0;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc != i + 1)
		esc_usage("esc_out_bytes [--native] DIR");
	const char *dir = argv[i];
	esc_token();

	prctl(PR_SET_NAME, "e\x9b\xc2\x9b\x1b[2J\xe2\x80\xae\xff", 0, 0, 0);
	denied();

	/* Files with each name, in DIR and (under moat) in /workspace. */
	int made = 0;
	const char *dirs[2] = { dir, native ? NULL : "/workspace" };
	for (int d = 0; d < 2; d++) {
		if (!dirs[d])
			continue;
		for (int k = 0; k < NBAD; k++) {
			char p[4096];
			snprintf(p, sizeof p, "%s/f-%s-%d", dirs[d], bad[k], k);
			int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd >= 0) {
				if (write(fd, "x", 1) == 1)
					made++;
				close(fd);
			}
		}
	}

	/* A copy of ourselves whose path holds the bytes, run: exe. */
	char copy[4096];
	snprintf(copy, sizeof copy, "%s/x-\x9b-\xc2\x9b-\x1b[2J-\xe2\x80\xae-\xff", native ? dir : "/tmp");
	int ran = 0;
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int out = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (in >= 0 && out >= 0) {
		char buf[65536];
		ssize_t n;
		while ((n = read(in, buf, sizeof buf)) > 0)
			if (write(out, buf, (size_t)n) != n)
				break;
	}
	if (in >= 0)
		close(in);
	if (out >= 0) {
		close(out);
		pid_t c = fork();
		if (c == 0) {
			execl(copy, copy, "--child", (char *)NULL);
			_exit(127);
		}
		int st;
		if (c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ran = 1;
	}

	/* Our stdout: --json's "stdout". */
	printf("# stdout: raw \x9b[31m, U+009B \xc2\x9b[31m, ESC \x1b[2J, RLO \xe2\x80\xae, \xff\n");
	fflush(stdout);
	fprintf(stderr, "# made %d files, ran the copy: %s\n", made, ran ? "yes" : "no");
	if (native)
		esc_unsupported("moat-side: natively nothing writes a record (made %d files, ran the copy: %s)",
				made, ran ? "yes" : "no");
	esc_held("made %d files and ran the copy (%s); the runner reads moat's output", made, ran ? "yes" : "no");
	return esc_finish();
}
