/* esc_proc_leak — learn about the host from /proc: read every readable
 * file below it (recursively; every listing, every link's target) and look
 * for what belongs to the host:
 *
 *   - the host's host name (argv[1], hex: passed so, it is in no argv or
 *     environment to be found by accident), as a whole word;
 *   - a pid outside the sandbox: 1 (the runner's shell), our parent, and
 *     moat's own pid ($ESC_MOAT_PID, which run.sh hands to the moat run) —
 *     as a /proc entry, in status's pid lines, in stat's ppid/pgrp/session
 *     fields, or in a link's target;
 *   - a host path: argv[2] (hex; the repository holding the bound
 *     attempts), moat's scratch directory ("moat-" and 16 hex digits) and
 *     its skeleton ("moat-skel-").
 *
 * Attacks rule 6 (/proc is synthesized and shows only sandbox processes)
 * and the generated files of docs/filesystem.md.  Natively the host name
 * is in /proc/sys/kernel/hostname, pid 1 is listed, and the repository
 * is in our maps.
 *
 * usage: ESC_TOKEN=... esc_proc_leak HOSTNAME_HEX HOSTPATH_HEX
 */
#include "esc.h"

#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MAX_FILE (256 * 1024) /* natively /proc/kcore is the size of memory */
#define MAX_NOTES 4           /* findings spelled out per kind */

static char host_name[256];
static char host_path[4096];
static pid_t outside[3];
static int noutside;
static int found[3], files_read, links_read, dirs_read;

enum kind { K_NAME, K_PID, K_PATH };
static const char *const kind_name[] = { "host name", "outside pid", "host path" };

static void hit(enum kind k, const char *where, const char *what)
{
	if (found[k]++ < MAX_NOTES)
		esc_won("%s %s in %s", kind_name[k], what, where);
}

static int unhex(const char *hex, char *out, size_t len)
{
	size_t n = strlen(hex);
	if (n % 2 || n / 2 >= len)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (char)v;
	}
	out[n / 2] = '\0';
	return 0;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_';
}

static bool path_char(char c)
{
	return word_char(c) || c == '/';
}

/* A host path at a path boundary: "/usr/src" does not hold "/src". */
static bool has_path(const char *buf, size_t n, const char *path)
{
	size_t pl = strlen(path);
	for (const char *s = buf; (s = memmem(s, n - (size_t)(s - buf), path, pl)); s++)
		if (s == buf || !path_char(s[-1]))
			return true;
	return false;
}

/* moat's scratch directory ("moat-" + 16 hex digits) or skeleton. */
static bool has_scratch(const char *buf, size_t n)
{
	if (memmem(buf, n, "moat-skel-", 10))
		return true;
	for (const char *s = buf; (s = memmem(s, n - (size_t)(s - buf), "moat-", 5)); s++) {
		size_t left = n - (size_t)(s - buf) - 5, k = 0;
		while (k < left && k < 17 && isxdigit((unsigned char)s[5 + k]) &&
		       !isupper((unsigned char)s[5 + k]))
			k++;
		if (k == 16 && (left == 16 || !isxdigit((unsigned char)s[21])))
			return true;
	}
	return false;
}

/* The host name as a whole word (a bare "vm" must not match "VmFlags"). */
static bool has_name(const char *buf, size_t n)
{
	size_t hl = strlen(host_name);
	if (!hl)
		return false;
	for (const char *s = buf; (s = memmem(s, n - (size_t)(s - buf), host_name, hl)); s++)
		if ((s == buf || !word_char(s[-1])) &&
		    ((size_t)(s - buf) + hl == n || !word_char(s[hl])))
			return true;
	return false;
}

static bool is_outside(long pid)
{
	for (int i = 0; i < noutside; i++)
		if (pid == outside[i])
			return true;
	return false;
}

static void check_text(const char *where, const char *buf, size_t n)
{
	if (has_name(buf, n))
		hit(K_NAME, where, host_name);
	if (host_path[0] && has_path(buf, n, host_path))
		hit(K_PATH, where, host_path);
	if (has_scratch(buf, n))
		hit(K_PATH, where, "moat-<scratch>");
}

/* status: every pid line; stat: ppid, pgrp and session. */
static void check_pids(const char *where, const char *name, char *buf)
{
	char what[64];
	if (strcmp(name, "status") == 0) {
		static const char *const keys[] = { "Tgid:", "Pid:", "PPid:", "TracerPid:", "NSpid:",
						    "NStgid:", "NSpgid:", "NSsid:", NULL };
		for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			for (const char *const *k = keys; *k; k++) {
				if (strncmp(l, *k, strlen(*k)) != 0)
					continue;
				char *p = l + strlen(*k);
				while (*p && *p != '\n') {
					long v = strtol(p, &p, 10);
					if (is_outside(v)) {
						snprintf(what, sizeof what, "%s %ld", *k, v);
						hit(K_PID, where, what);
					}
					while (*p == ' ' || *p == '\t')
						p++;
					if (*p && *p != '\n' && !isdigit((unsigned char)*p))
						break;
				}
			}
	} else if (strcmp(name, "stat") == 0) {
		char *f = strrchr(buf, ')');
		long v[4];
		if (f && sscanf(f + 1, " %*c %ld %ld %ld", &v[0], &v[1], &v[2]) == 3)
			for (int i = 0; i < 3; i++)
				if (is_outside(v[i])) {
					snprintf(what, sizeof what, "field %d = %ld", 4 + i, v[i]);
					hit(K_PID, where, what);
				}
	}
}

static void read_file(const char *path, const char *name)
{
	/* O_NONBLOCK: nothing under /proc may hold us (natively). */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	static char buf[MAX_FILE + 1];
	size_t n = 0;
	ssize_t r;
	while (n < MAX_FILE && (r = read(fd, buf + n, MAX_FILE - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	files_read++;
	check_text(path, buf, n);
	check_pids(path, name, buf);
}

static void check_link(const char *path)
{
	char target[4096];
	ssize_t n = readlink(path, target, sizeof target - 1);
	if (n < 0)
		return;
	target[n] = '\0';
	links_read++;
	check_text(path, target, (size_t)n);
	/* "/proc/self" -> "PID", ".../thread-self" -> "PID/task/TID", or a
	 * /proc path of another process. */
	char *p = target;
	if (strncmp(p, "/proc/", 6) == 0)
		p += 6;
	if (isdigit((unsigned char)*p) && is_outside(strtol(p, NULL, 10)))
		hit(K_PID, path, target);
}

static void walk(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	dirs_read++;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, name);
		if (depth == 0 && isdigit((unsigned char)name[0]) && is_outside(strtol(name, NULL, 10)))
			hit(K_PID, "the listing of /proc", name);
		/* Reading kmsg takes the kernel's messages from whoever logs
		 * them; it exists only natively (not in moat's /proc). */
		if (depth == 0 && strcmp(name, "kmsg") == 0)
			continue;
		struct stat st;
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode))
			check_link(path);
		else if (S_ISDIR(st.st_mode) && depth < 12)
			walk(path, depth + 1);
		else if (S_ISREG(st.st_mode))
			read_file(path, name);
	}
	closedir(d);
}

/* A grandchild whose parent has exited: reparented outside the sandbox
 * (to moat, its subreaper; natively to pid 1), its parent must not show. */
static pid_t make_orphan(void)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t child = fork();
	if (child == 0) {
		pid_t g = fork();
		if (g == 0) {
			close(p[0]);
			close(p[1]);
			pause();
			_exit(0);
		}
		if (write(p[1], &g, sizeof g) != sizeof g)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	pid_t g = -1;
	if (child < 0 || read(p[0], &g, sizeof g) != sizeof g)
		g = -1;
	close(p[0]);
	if (child > 0)
		waitpid(child, NULL, 0);
	return g;
}

int main(int argc, char **argv)
{
	esc_token();
	if (argc < 3 || unhex(argv[1], host_name, sizeof host_name) < 0 ||
	    unhex(argv[2], host_path, sizeof host_path) < 0)
		esc_usage("esc_proc_leak HOSTNAME_HEX HOSTPATH_HEX");
	/* The sandbox's default name: such a host cannot be told apart. */
	if (strcmp(host_name, "moat") == 0) {
		fprintf(stderr, "# the host is named moat itself: its name is not looked for\n");
		host_name[0] = '\0';
	}
	outside[noutside++] = 1;
	if (getppid() > 1)
		outside[noutside++] = getppid();
	const char *m = getenv("ESC_MOAT_PID");
	if (m && atoi(m) > 1 && !is_outside(atoi(m)))
		outside[noutside++] = atoi(m);
	for (int i = 0; i < noutside; i++) {
		char p[64];
		struct stat st;
		snprintf(p, sizeof p, "/proc/%d", (int)outside[i]);
		if (lstat(p, &st) == 0)
			hit(K_PID, p, "exists");
		else
			esc_held("lstat %s: %s", p, esc_errname(errno));
	}
	pid_t orphan = make_orphan();
	walk("/proc", 0);
	if (orphan > 0)
		kill(orphan, SIGKILL);
	fprintf(stderr, "# read %d files, %d links, %d directories; found %d/%d/%d\n", files_read,
		links_read, dirs_read, found[K_NAME], found[K_PID], found[K_PATH]);
	for (int k = 0; k < 3; k++)
		if (found[k] > MAX_NOTES)
			esc_won("%d more of %s", found[k] - MAX_NOTES, kind_name[k]);
	if (files_read < 10)
		esc_usage("fewer than 10 files read below /proc: the walk did not work");
	if (!found[K_NAME] && !found[K_PID] && !found[K_PATH])
		esc_held("%d files, %d links and %d directories below /proc name nothing of the host",
			 files_read, links_read, dirs_read);
	return esc_finish();
}
