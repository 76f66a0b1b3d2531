/* esc_overlay_host_write — change the host through an overlay's lower layer.
 *
 * Attacks the overlay rule (fs-emulation/overlay.c: "The lower layer is
 * never written"): /usr and /etc are overlays by default, `--overlay SRC
 * DST` makes any host directory one, and every change a program makes
 * there must land in moat's private upper layer.  The runner gives us
 * canary trees that sit where moat's overlays take their lower layer from —
 * /etc/moat-esc-canary and /usr/share/moat-esc-canary (in this attempt's
 * own mount namespace /etc and /usr are overlayfs mounts whose upper
 * directories are in the runner's work directory, so a native run never
 * writes the real /etc or /usr), and a third tree (/etc/moat-esc-ovl-canary)
 * shown with --overlay at /ov — all of the sandbox's uid, so host permissions allow every change.  In
 * the uid-0 pass the sandbox is uid 0 and owns them as root would.
 *
 * Each DIR is such a tree, named as the sandbox sees it.  Before the first
 * change we open every entry of every tree read-only: those fds are the
 * host's files and directories themselves (under moat, the lower layer),
 * so the kernel's fstat, pread and getdents64 on them show the host.
 * Each change — create, overwrite, O_TRUNC, O_APPEND, truncate, chmod,
 * chown to ourselves, utimensat, unlink, rename (within, across, over a
 * file, RENAME_EXCHANGE, of a directory), mkdir, rmdir, symlink, link,
 * mkfifo, setxattr, O_TMPFILE + linkat, changes two levels down, a second
 * name made with linkat from a read-only fd then written — is judged
 * by its effect on the host: through those fds, every entry's type, mode,
 * owner, size, inode, links, mtime, ctime, xattrs, a file's first bytes and
 * a directory's names, before and after.  Natively each one changes the
 * host (ESCAPED); under moat the calls succeed in the upper layer and the
 * host must stay as it was.
 * The runner also compares the canaries before and after the moat run from
 * outside.  Held changes are not denials: no audit record is expected.
 *
 * usage: esc_overlay_host_write DIR...
 */
#include "esc.h"
#include <dirent.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>

/* ---- the state of a host tree, as one string ----
 *
 * Seen through fds opened read-only on every entry before the first change:
 * an fd of a lower file or directory is the host's own, so the kernel's
 * fstat, pread and getdents64 on it (all unsupervised) show the host as it
 * is, whatever the overlay shows by name.  Natively the same fds show the
 * same files. */

struct buf {
	char *s;
	size_t len, cap;
};

__attribute__((format(printf, 2, 3))) static void add(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s)
			esc_usage("out of memory");
	}
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

#define MAX_ENTRIES 128
static struct entry {
	char rel[256];
	int fd;
} ent[MAX_ENTRIES];
static int nent;

/* Sorted names of the directory behind fd, by raw getdents64. */
static void names(struct buf *b, int fd)
{
	char buf[8192], *n[MAX_ENTRIES];
	int k = 0;
	long got;
	lseek(fd, 0, SEEK_SET);
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (long off = 0; off < got;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			if (k < MAX_ENTRIES && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				n[k++] = strdup(de->d_name);
			off += de->d_reclen;
		}
	qsort(n, (size_t)k, sizeof n[0], cmpstr);
	add(b, " [");
	for (int i = 0; i < k; i++) {
		add(b, "%s%s", i ? " " : "", n[i]);
		free(n[i]);
	}
	add(b, "]");
}

/* Open every entry below dir (depth first) and keep the fds. */
static void open_all(const char *path, const char *rel)
{
	if (nent == MAX_ENTRIES)
		esc_usage("the canary tree is too big");
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		char m[512];
		snprintf(m, sizeof m, "cannot open %s for reading: %s", path, esc_errname(errno));
		esc_usage(m);
	}
	snprintf(ent[nent].rel, sizeof ent[nent].rel, "%s", rel);
	ent[nent++].fd = fd;
	struct stat st;
	if (syscall(SYS_fstat, fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	DIR *d = opendir(path);
	char *n[MAX_ENTRIES];
	int k = 0;
	struct dirent *de;
	while (d && k < MAX_ENTRIES && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n[k++] = strdup(de->d_name);
	if (d)
		closedir(d);
	qsort(n, (size_t)k, sizeof n[0], cmpstr);
	for (int i = 0; i < k; i++) {
		char p[4096], r[512];
		snprintf(p, sizeof p, "%s/%s", path, n[i]);
		snprintf(r, sizeof r, "%s/%s", rel, n[i]);
		open_all(p, r);
		free(n[i]);
	}
}

/* The state of entries [from, to). */
static char *state(int from, int to)
{
	struct buf b = { 0 };
	for (int i = from; i < to; i++) {
		struct stat st;
		if (syscall(SYS_fstat, ent[i].fd, &st) < 0) {
			add(&b, "%s: fstat %s\n", ent[i].rel, esc_errname(errno));
			continue;
		}
		add(&b, "%s: %o %d:%d size=%lld ino=%llu nlink=%lu m=%lld.%09ld c=%lld.%09ld", ent[i].rel,
		    (unsigned)st.st_mode, (int)st.st_uid, (int)st.st_gid, (long long)st.st_size,
		    (unsigned long long)st.st_ino, (unsigned long)st.st_nlink, (long long)st.st_mtim.tv_sec,
		    st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
		char x[256];
		ssize_t xn = flistxattr(ent[i].fd, x, sizeof x);
		if (xn > 0)
			add(&b, " xattrs=%zd", xn);
		if (S_ISDIR(st.st_mode)) {
			names(&b, ent[i].fd);
		} else if (S_ISREG(st.st_mode)) {
			char d[33] = "";
			ssize_t n = pread(ent[i].fd, d, sizeof d - 1, 0);
			d[n < 0 ? 0 : n] = '\0';
			for (ssize_t k = 0; k < n; k++)
				if (d[k] < 0x20 || d[k] > 0x7e)
					d[k] = '.';
			add(&b, " \"%s\"", d);
		}
		add(&b, "\n");
	}
	return b.s ? b.s : strdup("");
}

/* The first line that differs, for the report. */
static void first_change(const char *a, const char *b, char *out, size_t cap)
{
	while (*a && *b) {
		const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
		if (la != lb || memcmp(a, b, la)) {
			snprintf(out, cap, "\"%.*s\" became \"%.*s\"", (int)(la > 90 ? 90 : la), a,
				 (int)(lb > 90 ? 90 : lb), b);
			return;
		}
		a += la + (ea != NULL);
		b += lb + (eb != NULL);
	}
	snprintf(out, cap, "%s", *a ? "an entry went away" : "an entry appeared");
}

/* ---- the changes ---- */

static const char *W; /* the tree as we change it */

static const char *at(const char *rel)
{
	static char p[4][4096];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof p[i], "%s/%s", W, rel);
	return p[i];
}

static int rc(long r)
{
	return r < 0 ? -errno : 0;
}

static int write_at(const char *rel, int flags, const char *data)
{
	int fd = open(at(rel), flags | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int r = write(fd, data, strlen(data)) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int overwrite(void)
{
	int fd = open(at("f"), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = pwrite(fd, "ESC", 3, 0) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int tmpfile_link(void)
{
	int fd = open(W, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int r = write(fd, "tmp\n", 4) < 0 ? -errno : 0;
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	if (r == 0 && linkat(AT_FDCWD, p, AT_FDCWD, at("tmpfile"), AT_SYMLINK_FOLLOW) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* A second name for a file we may only read, made from the fd, and a write
 * through it: an fd of a lower file is the host's file itself. */
static int fd_link(void)
{
	int fd = open(at("f2"), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	int r = linkat(AT_FDCWD, p, AT_FDCWD, at("f2_hl"), AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
	close(fd);
	return r == 0 ? write_at("f2_hl", O_WRONLY, "ESC") : r;
}

static int change(int i, const char **what)
{
	struct timespec ts[2] = { { 1234567890, 0 }, { 1234567890, 0 } };
	switch (i) {
	case 0: *what = "create new"; return write_at("new", O_WRONLY | O_CREAT | O_EXCL, "new\n");
	case 1: *what = "overwrite f"; return overwrite();
	case 2: *what = "O_TRUNC t"; return write_at("t", O_WRONLY | O_TRUNC, "t\n");
	case 3: *what = "O_APPEND a"; return write_at("a", O_WRONLY | O_APPEND, "more\n");
	case 4: *what = "truncate u"; return rc(truncate(at("u"), 1));
	case 5: *what = "chmod g 0600"; return rc(chmod(at("g"), 0600));
	case 6: *what = "chown o to ourselves"; return rc(chown(at("o"), getuid(), getgid()));
	case 7: *what = "utimensat h"; return rc(utimensat(AT_FDCWD, at("h"), ts, 0));
	case 8: *what = "utimensat h2 NULL"; return rc(utimensat(AT_FDCWD, at("h2"), NULL, 0));
	case 9: *what = "unlink r1"; return rc(unlink(at("r1")));
	case 10: *what = "rename r2 r2b"; return rc(rename(at("r2"), at("r2b")));
	case 11: *what = "rename r3 sub/r3"; return rc(rename(at("r3"), at("sub/r3")));
	case 12: *what = "rename r4 over r5"; return rc(rename(at("r4"), at("r5")));
	case 13:
		*what = "RENAME_EXCHANGE e1 e2";
		return rc(syscall(SYS_renameat2, AT_FDCWD, at("e1"), AT_FDCWD, at("e2"), RENAME_EXCHANGE));
	case 14: *what = "rename dir mvdir mvdir2"; return rc(rename(at("mvdir"), at("mvdir2")));
	case 15: *what = "mkdir newdir"; return rc(mkdir(at("newdir"), 0755));
	case 16: *what = "rmdir emptydir"; return rc(rmdir(at("emptydir")));
	case 17: *what = "symlink lnk"; return rc(symlink("f", at("lnk")));
	case 18: *what = "link f f_hl"; return rc(link(at("f"), at("f_hl")));
	case 19: *what = "mkfifo fifo"; return rc(mkfifo(at("fifo"), 0644));
	case 20: *what = "chmod sub 0700"; return rc(chmod(at("sub"), 0700));
	case 21: *what = "setxattr x user.moat_esc"; return rc(setxattr(at("x"), "user.moat_esc", "1", 1, 0));
	case 22: *what = "O_TMPFILE + linkat"; return tmpfile_link();
	case 23: *what = "unlink sub/deep/s"; return rc(unlink(at("sub/deep/s")));
	case 24:
		*what = "create sub/deep/new";
		return write_at("sub/deep/new", O_WRONLY | O_CREAT | O_EXCL, "deep\n");
	case 25: *what = "open f2 O_RDONLY, linkat /proc/self/fd/N f2_hl, write f2_hl"; return fd_link();
	case 26: *what = "chmod the tree's root 0700"; return rc(chmod(W, 0700));
	}
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 16)
		esc_usage("esc_overlay_host_write DIR... (at most 15)");
	esc_token();
	fprintf(stderr, "# uid %d gid %d\n", (int)getuid(), (int)getgid());
	/* Every tree's fds first: under moat they are the lower (host) files
	 * only while nothing in the tree has been copied up. */
	int first[17];
	for (int t = 1; t < argc; t++) {
		first[t] = nent;
		open_all(argv[t], ".");
	}
	first[argc] = nent;
	for (int t = 1; t < argc; t++) {
		W = argv[t];
		int won = 0, held = 0;
		char heldlist[2048] = "";
		for (int i = 0;; i++) {
			const char *what;
			/* ctime and mtime come from a coarse clock: let it tick */
			nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
			char *before = state(first[t], first[t + 1]);
			int r = change(i, &what);
			if (r == 1) {
				free(before);
				break;
			}
			char *after = state(first[t], first[t + 1]);
			if (strcmp(before, after)) {
				char diff[256];
				first_change(before, after, diff, sizeof diff);
				esc_won("%s: %s changed the host (%s)", W, what, diff);
				won++;
			} else {
				size_t n = strlen(heldlist);
				snprintf(heldlist + n, sizeof heldlist - n, "%s%s=%s", n ? ", " : "", what,
					 r ? esc_errname(-r) : "0");
				held++;
			}
			free(before);
			free(after);
		}
		if (held)
			esc_held("%s: %d changes left the host as it was (%s)", W, held, heldlist);
		fprintf(stderr, "# %s: %d changed the host, %d did not\n", W, won, held);
	}
	return esc_finish();
}
