/* esc_host_env — look for the host's environment: a variable the runner
 * exported (MOAT_HOST_SECRET), any variable beyond the minimal set, and the
 * environment of our parent and of pid 1 through /proc/PID/environ.
 *
 * Attacks rule 5 (a minimal environment: PATH, HOME, LANG, TERM, plus what
 * --setenv adds — the runner's --setenv names all start with ESC_) and rule 6
 * (a sandbox process sees only sandbox processes in /proc).
 *
 * usage: ESC_TOKEN=... esc_host_env
 */
#include "esc.h"

extern char **environ;

static int minimal(const char *kv)
{
	static const char *ok[] = {"PATH=", "HOME=", "LANG=", "TERM=", "ESC_", NULL};
	for (int i = 0; ok[i]; i++)
		if (strncmp(kv, ok[i], strlen(ok[i])) == 0)
			return 1;
	return 0;
}

static void scan_environ_file(const char *path)
{
	char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		esc_held("open(%s): %s", path, esc_errname(errno));
		return;
	}
	ssize_t n = 0, k;
	while (n < (ssize_t)sizeof buf - 1 && (k = read(fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0)
		n += k;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1) {
		if (strncmp(buf + i, "MOAT_HOST_SECRET=", 17) == 0) {
			const char *v = buf + i + 17;
			if (esc_is_token(v, strlen(v)))
				esc_won("%s holds MOAT_HOST_SECRET", path);
			return;
		}
	}
	esc_held("%s: no MOAT_HOST_SECRET in %zd bytes", path, n);
}

int main(void)
{
	const char *s = getenv("MOAT_HOST_SECRET");
	if (s)
		esc_won("getenv(MOAT_HOST_SECRET) %s", esc_is_token(s, strlen(s)) ? "is the token" : "is set");
	else
		esc_held("getenv(MOAT_HOST_SECRET) is unset");

	char extra[2048] = "";
	size_t n = 0;
	for (char **e = environ; *e; e++) {
		if (minimal(*e))
			continue;
		size_t name = strcspn(*e, "=");
		n += (size_t)snprintf(extra + n, n < sizeof extra ? sizeof extra - n : 0, "%s%.*s",
				      n ? "," : "", (int)name, *e);
		if (n >= sizeof extra)
			break;
	}
	if (extra[0])
		esc_won("environment beyond the minimal set: %s", extra);
	const char *home = getenv("HOME");
	if (home && strcmp(home, "/root") == 0 && getuid() != 0)
		esc_won("HOME=/root leaked to uid %d", (int)getuid());

	char path[64];
	snprintf(path, sizeof path, "/proc/%d/environ", (int)getppid());
	scan_environ_file(path);
	scan_environ_file("/proc/1/environ");
	return esc_finish();
}
