/* esc_etc_secrets — the secrets of the host's /etc that the default view
 * hides: gshadow and the "-" backups of shadow and gshadow, sudoers,
 * sudoers.d, security/opasswd, the ssh host private keys and
 * /etc/ssl/private; and /etc/shadow, which the view replaces by one of its
 * own (its accounts, locked): the host's must never show through it.
 *
 * Attacks the default view (docs/filesystem.md "The default view": /etc read-only *without*
 * its secrets).  Existence and metadata are already a leak (as in
 * esc_list_home); reading is worse.  Each file is tried by its plain path,
 * and /etc/gshadow also by other spellings the walk must see through: "//",
 * "/./", "..", a relative path from cwd /etc, openat on a dirfd of /etc and
 * of /etc/ssh, a symlink to it and a symlink to /etc.  Under moat every one
 * must answer ENOENT, audited with rule fs.outside-view.
 *
 * A hidden name must also behave exactly like an absent one in every call
 * that takes a path — the ones that only say whether something is there
 * (access, statx, statfs, readlink, inotify_add_watch, getxattr, link,
 * connect, bind, execve, O_PATH, and creating calls that would answer
 * EEXIST) included: for pairs of hidden names, one
 * present on the host and one absent, each call must answer the same for
 * both, or the answer tells which secrets the host holds.
 *
 * With --listings, the listings of /etc, /etc/ssh, /etc/ssl and
 * /etc/security must not name a hidden entry either (a name listed tells
 * that the host has that secret).  The runner passes it unless
 * ESC_ETC_LISTINGS=0.
 *
 * Natively we are root and read them all.  The runner stages what this host
 * may lack (sudoers, sudoers.d/, ssh host keys, a key in ssl/private, each
 * holding the token) with an overlay on /etc in the attempt's own mount
 * namespace; a file absent natively is just reported as held (ENOENT).
 *
 * usage: ESC_TOKEN=... esc_etc_secrets [--listings]
 */
#include "esc.h"
#include <dirent.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>

/* stat, then open and read (a file) or list (a directory) dirfd/path. */
static void probe(const char *how, int dirfd, const char *path)
{
	struct stat st;
	if (fstatat(dirfd, path, &st, 0) < 0) {
		esc_held("%s: stat: %s", how, esc_errname(errno));
		return;
	}
	char what[256] = "";
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(what, sizeof what, "; open: %s", esc_errname(errno));
	} else if (S_ISDIR(st.st_mode)) {
		DIR *d = fdopendir(fd);
		int n = 0;
		for (struct dirent *e; d && (e = readdir(d));)
			n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
		snprintf(what, sizeof what, "; listed %d entries", n);
		if (d)
			closedir(d);
		else
			close(fd);
	} else {
		char buf[4096];
		ssize_t n = pread(fd, buf, sizeof buf, 0);
		if (n > 0 && esc_is_token(buf, (size_t)n))
			snprintf(what, sizeof what, "; read the token");
		else if (n >= 0)
			snprintf(what, sizeof what, "; read %zd bytes", n);
		else
			snprintf(what, sizeof what, "; read: %s", esc_errname(errno));
		close(fd);
	}
	esc_won("%s exists (uid %d, mode %o)%s", how, (int)st.st_uid, (unsigned)(st.st_mode & 07777), what);
}

/* /etc/shadow, which the view generates: read it all; the host's entry the
 * runner staged (the token as a password hash) must not be in it. */
static void shadow_content(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		esc_held("%s: open: %s", path, esc_errname(errno));
		return;
	}
	static char buf[1 << 16];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (strstr(buf, esc_token()))
		esc_won("%s holds the host's entries (the staged token)", path);
	else
		esc_held("%s: %zd bytes, none of the host's entries", path, n);
}

/* Existence oracles: each call on a path, 0 or -errno.  None of them
 * changes a file that exists (a secret of a host where this is run by hand
 * must come to no harm); a call that creates removes what it made. */
#define RES(x) ((x) < 0 ? -errno : 0)
static int o_access(const char *p) { return RES(access(p, F_OK)); }
static int o_statx(const char *p) { struct statx x; return RES(statx(AT_FDCWD, p, 0, STATX_BASIC_STATS, &x)); }
static int o_statfs(const char *p) { struct statfs x; return RES(statfs(p, &x)); }
static int o_readlink(const char *p) { char b[64]; return RES(readlink(p, b, sizeof b)); }
static int o_getxattr(const char *p) { char b[64]; return RES(getxattr(p, "user.moat_esc", b, sizeof b)); }
static int o_mkdir(const char *p) { int r = RES(mkdir(p, 0700)); if (!r) rmdir(p); return r; }
static int o_symlink(const char *p) { int r = RES(symlink("x", p)); if (!r) unlink(p); return r; }
static int o_mkfifo(const char *p) { int r = RES(mknod(p, S_IFIFO | 0600, 0)); if (!r) unlink(p); return r; }
static int o_inotify(const char *p)
{
	int i = inotify_init1(IN_CLOEXEC);
	int r = RES(inotify_add_watch(i, p, IN_ALL_EVENTS));
	close(i);
	return r;
}
static int o_open(const char *p, int flags)
{
	int fd = open(p, flags | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	if (flags & O_CREAT)
		unlink(p);
	return 0;
}
static int o_creat(const char *p) { return o_open(p, O_CREAT | O_EXCL | O_WRONLY); }
static int o_path(const char *p) { return o_open(p, O_PATH); }
static int o_link(const char *p)
{
	char to[64];
	snprintf(to, sizeof to, "/tmp/esc_etc_link.%d", (int)getpid());
	int r = RES(link(p, to));
	unlink(to);
	return r;
}
static int o_unix(const char *p, int do_bind)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
	int r = do_bind ? RES(bind(s, (struct sockaddr *)&a, sizeof a)) : RES(connect(s, (struct sockaddr *)&a, sizeof a));
	close(s);
	if (do_bind && !r)
		unlink(p);
	return r;
}
static int o_connect(const char *p) { return o_unix(p, 0); }
static int o_bind(const char *p) { return o_unix(p, 1); }
static int o_execve(const char *p)
{
	pid_t c = fork();
	if (c == 0) {
		execve(p, (char *[]){(char *)p, NULL}, (char *[]){NULL});
		_exit(errno < 256 ? errno : 255);
	}
	int st = 0;
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? -WEXITSTATUS(st) : -1000;
}

static const char *res_name(int r)
{
	return r == 0 ? "success" : r == -1000 ? "a signal" : esc_errname(-r);
}

static void oracles(const char *present, const char *absent)
{
	static const struct {
		const char *name;
		int (*call)(const char *);
	} o[] = {
		{"access", o_access}, {"statx", o_statx}, {"statfs", o_statfs}, {"readlink", o_readlink},
		{"inotify_add_watch", o_inotify}, {"getxattr", o_getxattr}, {"mkdir", o_mkdir},
		{"symlink", o_symlink}, {"mknod(FIFO)", o_mkfifo}, {"open(O_CREAT|O_EXCL)", o_creat},
		{"open(O_PATH)", o_path}, {"link", o_link}, {"connect", o_connect}, {"bind", o_bind},
		{"execve", o_execve},
	};
	int same = 0;
	for (size_t i = 0; i < sizeof o / sizeof o[0]; i++) {
		int a = o[i].call(present), b = o[i].call(absent);
		if (a != b)
			esc_won("%s tells present %s (%s) from absent %s (%s)", o[i].name, present, res_name(a),
				absent, res_name(b));
		else
			same++;
	}
	if (same == (int)(sizeof o / sizeof o[0]))
		esc_held("%zu calls answer alike for %s and %s", sizeof o / sizeof o[0], present, absent);
}

/* The names the default view hides (docs/filesystem.md). */
static int hidden(const char *path)
{
	static const char *const h[] = {
		"/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
		"/etc/sudoers.d", "/etc/security/opasswd", "/etc/ssl/private", NULL,
	};
	for (int i = 0; h[i]; i++)
		if (strcmp(path, h[i]) == 0)
			return 1;
	size_t n = strlen(path);
	return strncmp(path, "/etc/ssh/ssh_host_", 18) == 0 && !(n > 4 && strcmp(path + n - 4, ".pub") == 0);
}

/* A directory listing that names a hidden entry tells that the host has
 * it, as a stat would. */
static void listing(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		esc_held("opendir(%s): %s", dir, esc_errname(errno));
		return;
	}
	int shown = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (hidden(path)) {
			esc_won("listing %s shows %s", dir, e->d_name);
			shown++;
		}
	}
	closedir(d);
	if (!shown)
		esc_held("listing %s shows no hidden name", dir);
}

int main(int argc, char **argv)
{
	esc_token();
	int with_listings = argc == 2 && strcmp(argv[1], "--listings") == 0;
	if (argc > 1 && !with_listings)
		esc_usage("esc_etc_secrets [--listings]");
	static const char *const plain[] = {
		"/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
		"/etc/sudoers", "/etc/sudoers.d", "/etc/sudoers.d/moat-esc",
		"/etc/security/opasswd",
		"/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
		"/etc/ssl/private", "/etc/ssl/private/moat-esc.key", NULL,
	};
	for (int i = 0; plain[i]; i++)
		probe(plain[i], AT_FDCWD, plain[i]);

	/* /etc/shadow is the view's own: the host's entries (the runner
	 * staged one holding the token) must not show through it. */
	shadow_content("/etc/shadow");
	shadow_content("/etc/./shadow");

	/* Other spellings of /etc/gshadow. */
	static const char *const spelled[] = {
		"/etc//gshadow", "/etc/./gshadow", "/etc/ssh/../gshadow", "/usr/../etc/gshadow",
		"/../../etc/gshadow", "/etc/ssh/../ssh/ssh_host_ed25519_key", NULL,
	};
	for (int i = 0; spelled[i]; i++)
		probe(spelled[i], AT_FDCWD, spelled[i]);

	if (chdir("/etc") == 0) {
		probe("cwd /etc: gshadow-", AT_FDCWD, "gshadow-");
		probe("cwd /etc: ./gshadow", AT_FDCWD, "./gshadow");
		probe("cwd /etc: ssl/private", AT_FDCWD, "ssl/private");
	} else {
		esc_held("chdir(/etc): %s", esc_errname(errno));
	}
	if (chdir("/") < 0)
		esc_usage("chdir(/) failed");

	int etc = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (etc >= 0) {
		probe("openat(fd of /etc, gshadow)", etc, "gshadow");
		probe("openat(fd of /etc, ssh/ssh_host_ed25519_key)", etc, "ssh/ssh_host_ed25519_key");
		close(etc);
	} else {
		esc_held("open(/etc): %s", esc_errname(errno));
	}
	int ssh = open("/etc/ssh", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ssh >= 0) {
		probe("openat(fd of /etc/ssh, ../gshadow)", ssh, "../gshadow");
		probe("openat(fd of /etc/ssh, ssh_host_ed25519_key)", ssh, "ssh_host_ed25519_key");
		close(ssh);
	} else {
		esc_held("open(/etc/ssh): %s", esc_errname(errno));
	}

	char l1[64], l2[64], p2[96];
	snprintf(l1, sizeof l1, "/tmp/esc_etc_shadow.%d", (int)getpid());
	snprintf(l2, sizeof l2, "/tmp/esc_etc_dir.%d", (int)getpid());
	snprintf(p2, sizeof p2, "%s/gshadow", l2);
	unlink(l1);
	unlink(l2);
	if (symlink("/etc/gshadow", l1) == 0)
		probe("symlink -> /etc/gshadow", AT_FDCWD, l1);
	else
		esc_held("symlink(/etc/gshadow): %s", esc_errname(errno));
	if (symlink("/etc", l2) == 0)
		probe("symlink -> /etc, then /gshadow", AT_FDCWD, p2);
	else
		esc_held("symlink(/etc): %s", esc_errname(errno));
	unlink(l1);
	unlink(l2);

	/* Hidden and present (staged by the runner) against hidden and absent. */
	oracles("/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_moatesc_key");
	oracles("/etc/sudoers.d/moat-esc", "/etc/sudoers.d/moat-esc-absent");
	oracles("/etc/ssl/private/moat-esc.key", "/etc/ssl/private/moat-esc-absent");

	if (with_listings) {
		listing("/etc");
		listing("/etc/ssh");
		listing("/etc/ssl");
		listing("/etc/security");
	}
	return esc_finish();
}
