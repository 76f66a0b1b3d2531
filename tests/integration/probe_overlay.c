/* probe_overlay — what a program does to a tree that already exists.
 *
 * Unlike the other probes this one starts in a PRE-EXISTING tree, made by
 * run.sh (overlay_fixture) before each run: natively a fresh copy, under
 * moat the fixture shown with `--overlay FIXTURE /ov` (cwd /ov), so that
 * every change below is a change to a lower-layer entry.  run.sh checks
 * that the fixture on the host is unchanged afterwards.
 *
 * The tree (owner: the caller unless said; times are fixed):
 *   f.txt "hello\n"            ro.txt 0444        append.txt, trunc.txt, big.txt
 *   hl1, hl2 (one file)        hl/{h3,h4} (one)   fifo    d1/{a,b,sub/c}
 *   deep/l1/l2/l3/l4/leaf.txt  empty/             full/{x,y,sub/z}
 *   ren/{r1,r2,r3,s1,s2}       ren2/{existing}    dmove/{m1,sub/m2,lnk}
 *   times/{t1,t2,t3}           priv/ (0700)       locked/ (0600, with sub/f)
 *   pub/ (1777, another uid's: own.txt and own_b.txt mine, other.txt not)
 *   lnk_rel -> d1/a   lnk_dir -> d1   lnk_abs -> <root>/d1/b   lnk_dangling
 *
 * Paths are relative to the start; an absolute link target is printed with
 * the start as $START.  Directory sizes and times after a change are not
 * printed (they depend on the file system and the clock).
 *
 *   probe_overlay               the whole sequence
 *   probe_overlay persist-1     first half of the --persist check: change
 *   probe_overlay persist-2     second half: show what the first left
 */
#include "probe.h"

#include <dirent.h>
#include <sys/sysmacros.h>

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char dtc(unsigned char t)
{
	switch (t) {
	case DT_REG: return '-';
	case DT_DIR: return 'd';
	case DT_LNK: return 'l';
	case DT_FIFO: return 'p';
	case DT_SOCK: return 's';
	case DT_CHR: return 'c';
	case DT_BLK: return 'b';
	}
	return '?';
}

/* Sorted "name/type" of what a DIR stream yields from where it stands. */
static void list_stream(const char *step, DIR *d)
{
	char *names[512];
	int n = 0;
	struct dirent *de;
	errno = 0;
	while (n < 512 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char buf[NAME_MAX + 4];
		snprintf(buf, sizeof buf, "%s/%c", de->d_name, dtc(de->d_type));
		names[n++] = strdup(buf);
	}
	if (errno) {
		printf("%s: readdir %s\n", step, ename(errno));
		return;
	}
	qsort(names, (size_t)n, sizeof names[0], cmpstr);
	printf("%s: [", step);
	for (int i = 0; i < n; i++) {
		printf("%s%s", i ? " " : "", names[i]);
		free(names[i]);
	}
	printf("]\n");
}

static void ls(const char *step, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	list_stream(step, d);
	closedir(d);
}

/* Every name below `dir`, depth first and sorted, with type, mode, size
 * (files), link target, content: the whole tree in one line per entry. */
static void tree(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		printf("tree %s: %s\n", dir, ename(errno));
		return;
	}
	char *names[512];
	int n = 0;
	struct dirent *de;
	while (n < 512 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], cmpstr);
	for (int i = 0; i < n; i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		struct stat st;
		if (lstat(p, &st) < 0) {
			printf("  %s: %s\n", p, ename(errno));
		} else if (S_ISDIR(st.st_mode)) {
			printf("  %s: d%04o\n", p, st.st_mode & 07777);
			tree(p);
		} else if (S_ISLNK(st.st_mode)) {
			char t[PATH_MAX];
			ssize_t k = readlink(p, t, sizeof t - 1);
			t[k < 0 ? 0 : k] = 0;
			printf("  %s: l -> %s\n", p, relpath(t));
		} else if (S_ISREG(st.st_mode)) {
			char b[64] = "";
			int fd = open(p, O_RDONLY);
			ssize_t k = fd < 0 ? -1 : read(fd, b, sizeof b - 1);
			if (fd >= 0)
				close(fd);
			b[k < 0 ? 0 : k] = 0;
			for (char *s = b; *s; s++)
				if (*s == '\n')
					*s = '|';
			/* the fixture's times are fixed; a changed file's is now */
			char mt[32] = "recent";
			if (st.st_mtim.tv_sec < 1600000000)
				snprintf(mt, sizeof mt, "%lld", (long long)st.st_mtim.tv_sec);
			printf("  %s: -%04o size=%lld mtime=%s \"%s\"\n", p, st.st_mode & 07777,
			       (long long)st.st_size, mt, b);
		} else {
			printf("  %s: %c%04o\n", p, ftype(st.st_mode), st.st_mode & 07777);
		}
		free(names[i]);
	}
}

static ino_t ino_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) < 0 ? 0 : st.st_ino;
}

static dev_t dev_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) < 0 ? 0 : st.st_dev;
}

static void yesno(const char *step, int v)
{
	printf("%s: %s\n", step, v ? "yes" : "no");
}

static void mtime(const char *step, const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: %lld.%09ld\n", step, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

static void rdlink(const char *step, const char *path)
{
	char t[PATH_MAX];
	ssize_t n = readlink(path, t, sizeof t - 1);
	if (n < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	t[n] = 0;
	printf("%s: \"%s\"\n", step, relpath(t));
}

static void wr(const char *step, const char *path, int flags, const char *data)
{
	int fd = open(path, flags, 0644);
	if (fd < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	ssize_t n = write(fd, data, strlen(data));
	if (n < 0)
		printf("%s: write %s\n", step, ename(errno));
	else
		printf("%s: wrote %zd\n", step, n);
	close(fd);
}

/* Read fd from offset 0. */
static void pcat(const char *step, int fd)
{
	char b[256];
	ssize_t n = pread(fd, b, sizeof b - 1, 0);
	if (n < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	b[n] = 0;
	printf("%s: \"", step);
	put_escaped(b);
	printf("\"\n");
}

static long rn2(const char *a, const char *b, unsigned fl)
{
	return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, fl);
}

/* ---- what mv does when rename says EXDEV: copy, then remove ---- */

static int copy_tree(const char *src, const char *dst);

static int copy_one(const char *src, const char *dst)
{
	struct stat st;
	if (lstat(src, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode))
		return copy_tree(src, dst);
	if (S_ISLNK(st.st_mode)) {
		char t[PATH_MAX];
		ssize_t n = readlink(src, t, sizeof t - 1);
		if (n < 0)
			return -1;
		t[n] = 0;
		return symlink(t, dst);
	}
	if (S_ISFIFO(st.st_mode))
		return mkfifo(dst, st.st_mode & 07777);
	int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0600);
	char b[4096];
	ssize_t n;
	while (in >= 0 && out >= 0 && (n = read(in, b, sizeof b)) > 0)
		if (write(out, b, (size_t)n) != n)
			break;
	struct timespec ts[2] = { st.st_atim, st.st_mtim };
	int r = in < 0 || out < 0 || fchmod(out, st.st_mode & 07777) < 0 || futimens(out, ts) < 0;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return r ? -1 : 0;
}

static int copy_tree(const char *src, const char *dst)
{
	struct stat st;
	if (lstat(src, &st) < 0 || mkdir(dst, 0700) < 0)
		return -1;
	DIR *d = opendir(src);
	struct dirent *de;
	int r = 0;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char a[PATH_MAX], b[PATH_MAX];
		snprintf(a, sizeof a, "%s/%s", src, de->d_name);
		snprintf(b, sizeof b, "%s/%s", dst, de->d_name);
		r |= copy_one(a, b);
	}
	if (d)
		closedir(d);
	struct timespec ts[2] = { st.st_atim, st.st_mtim };
	if (chmod(dst, st.st_mode & 07777) < 0 || utimensat(AT_FDCWD, dst, ts, 0) < 0)
		r = -1;
	return d ? r : -1;
}

static int remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	DIR *d = opendir(path);
	struct dirent *de;
	int r = 0;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char a[PATH_MAX];
		snprintf(a, sizeof a, "%s/%s", path, de->d_name);
		r |= remove_tree(a);
	}
	if (d)
		closedir(d);
	return rmdir(path) | r;
}

/* rename(2), and mv's fallback when it answers EXDEV.  The raw answer is
 * printed on its own line (moat answers EXDEV for a directory of the lower
 * layer, as overlayfs without redirect_dir: tests/integration/
 * known-differences lists those lines); the outcome must match. */
static void mv(const char *a, const char *b)
{
	char step[PATH_MAX * 2 + 32];
	snprintf(step, sizeof step, "rename dir %s %s (raw)", a, b);
	long r = ok(step, rename(a, b));
	if (r < 0 && errno == EXDEV) {
		int c = copy_tree(a, b);
		int d = c == 0 ? remove_tree(a) : -1;
		r = c == 0 && d == 0 ? 0 : -1;
	}
	snprintf(step, sizeof step, "mv %s %s", a, b);
	printf("%s: %s\n", step, r == 0 ? "0" : ename(errno));
}

/* ---- the --persist check: two runs over the same layers ---- */

static int persist(int phase)
{
	if (phase == 1) {
		wr("persist-1 overwrite f.txt", "f.txt", O_WRONLY | O_TRUNC, "changed in run 1\n");
		ok("persist-1 chmod d1/a 0600", chmod("d1/a", 0600));
		ok("persist-1 unlink d1/b", unlink("d1/b"));
		ok("persist-1 mkdir d1/new", mkdir("d1/new", 0755));
		wr("persist-1 create d1/new/n", "d1/new/n", O_WRONLY | O_CREAT | O_EXCL, "new\n");
		ok("persist-1 rename ren/r1 ren2/r1", rename("ren/r1", "ren2/r1"));
		ok("persist-1 symlink", symlink("d1/new/n", "lnk_new"));
		ok("persist-1 unlink full/x", unlink("full/x"));
		ok("persist-1 unlink full/y", unlink("full/y"));
		ok("persist-1 unlink full/sub/z", unlink("full/sub/z"));
		ok("persist-1 rmdir full/sub", rmdir("full/sub"));
		ok("persist-1 rmdir full", rmdir("full"));
		ok("persist-1 mkdir full", mkdir("full", 0755));
		ok("persist-1 rmdir empty", rmdir("empty"));
		ok("persist-1 link times/t1 hl_t1", link("times/t1", "hl_t1"));
		wr("persist-1 append hl_t1", "hl_t1", O_WRONLY | O_APPEND, "more\n");
		struct timespec ts[2] = { { 1111111111, 0 }, { 1222222222, 0 } };
		ok("persist-1 utimensat times/t2", utimensat(AT_FDCWD, "times/t2", ts, 0));
	}
	printf("persist-%d tree:\n", phase);
	tree(".");
	show("persist stat times/t1", "times/t1");
	show("persist stat hl_t1", "hl_t1");
	return probe_done();
}

int main(int argc, char **argv)
{
	probe_init();
	if (argc > 1 && strcmp(argv[1], "persist-1") == 0)
		return persist(1);
	if (argc > 1 && strcmp(argv[1], "persist-2") == 0)
		return persist(2);

	/* ---- the tree as it stands ---- */
	printf("initial tree:\n");
	tree(".");
	ls("ls .", ".");
	ls("ls d1", "d1");
	ls("ls empty", "empty");
	ls("ls deep/l1/l2/l3/l4", "deep/l1/l2/l3/l4");
	show("stat .", ".");
	show("stat d1", "d1");
	show("stat deep", "deep");
	show("stat f.txt", "f.txt");
	show("stat ro.txt", "ro.txt");
	show("stat hl1", "hl1");
	show("stat fifo", "fifo");
	show("stat priv", "priv");
	show("stat pub", "pub");
	show("stat pub/other.txt", "pub/other.txt");
	show("stat lnk_rel", "lnk_rel");
	show("stat lnk_dangling", "lnk_dangling");
	mtime("mtime times/t1", "times/t1");
	mtime("mtime times/t2", "times/t2");
	mtime("mtime times/t3", "times/t3");
	mtime("mtime lnk_rel", "lnk_rel");
	rdlink("readlink lnk_rel", "lnk_rel");
	rdlink("readlink lnk_dir", "lnk_dir");
	rdlink("readlink lnk_abs", "lnk_abs");
	rdlink("readlink lnk_dangling", "lnk_dangling");
	rdlink("readlink f.txt", "f.txt");
	cat("cat lnk_rel", AT_FDCWD, "lnk_rel");
	cat("cat lnk_dir/sub/c", AT_FDCWD, "lnk_dir/sub/c");
	cat("cat lnk_abs", AT_FDCWD, "lnk_abs");
	cat("cat lnk_dangling", AT_FDCWD, "lnk_dangling");
	cat("cat deep/l1/l2/l3/l4/leaf.txt", AT_FDCWD, "deep/l1/l2/l3/l4/leaf.txt");
	yesno("hl1 and hl2 are one inode", ino_of("hl1") == ino_of("hl2"));
	yesno("hl/h3 and hl/h4 are one inode", ino_of("hl/h3") == ino_of("hl/h4"));
	yesno("f.txt and hl1 are distinct inodes", ino_of("f.txt") != ino_of("hl1"));
	int ffd = open("fifo", O_RDONLY | O_NONBLOCK);
	okfd("open fifo O_RDONLY|O_NONBLOCK", ffd);
	if (ffd >= 0)
		close(ffd);

	/* Identities and fds taken before anything changes. */
	ino_t i_root = ino_of("."), i_d1 = ino_of("d1"), i_l4 = ino_of("deep/l1/l2/l3/l4");
	ino_t i_f = ino_of("f.txt"), i_r1 = ino_of("ren/r1"), i_r2 = ino_of("ren/r2");
	ino_t i_t2 = ino_of("times/t2"), i_full = ino_of("full");
	struct stat st_d1;
	stat("d1", &st_d1);
	nlink_t n_d1 = st_d1.st_nlink;
	dev_t dev_root = dev_of(".");
	int fd_f = open("f.txt", O_RDONLY);            /* read after an overwrite */
	int fd_t2 = open("times/t2", O_RDONLY);        /* keeps t2's inode alive */
	int fd_full = open("full", O_RDONLY | O_DIRECTORY); /* a dir that is removed */
	DIR *dd1 = opendir("d1");                      /* rewound after changes */
	DIR *droot = opendir(".");
	DIR *ddeep = opendir("deep/l1/l2/l3/l4");
	int fd_d1 = open("d1", O_RDONLY | O_DIRECTORY); /* openat after changes */
	list_stream("stream d1 (before)", dd1);
	list_stream("stream deep/l1/l2/l3/l4 (before)", ddeep);

	/* ---- contents ---- */
	wr("overwrite f.txt (no trunc)", "f.txt", O_WRONLY, "HE");
	cat("cat f.txt", AT_FDCWD, "f.txt");
	show("stat f.txt after overwrite", "f.txt");
	yesno("f.txt keeps its inode", ino_of("f.txt") == i_f);
	pcat("read f.txt through the fd opened before", fd_f);
	{
		struct stat a, b;
		int fd = open("f.txt", O_RDONLY);
		yesno("fstat of a new fd is stat of the path (ino)",
		      fd >= 0 && fstat(fd, &a) == 0 && stat("f.txt", &b) == 0 && a.st_ino == b.st_ino);
		yesno("raw fstat(2) of a new fd is stat of the path (ino)",
		      fd >= 0 && syscall(SYS_fstat, fd, &a) == 0 && stat("f.txt", &b) == 0 &&
			      a.st_ino == b.st_ino && a.st_dev == b.st_dev);
		if (fd >= 0)
			close(fd);
	}
	wr("O_TRUNC trunc.txt", "trunc.txt", O_WRONLY | O_TRUNC, "new\n");
	cat("cat trunc.txt", AT_FDCWD, "trunc.txt");
	wr("O_APPEND append.txt", "append.txt", O_WRONLY | O_APPEND, "two\n");
	cat("cat append.txt", AT_FDCWD, "append.txt");
	ok("truncate big.txt 5", truncate("big.txt", 5));
	cat("cat big.txt", AT_FDCWD, "big.txt");
	ok("truncate big.txt 100", truncate("big.txt", 100));
	show("stat big.txt", "big.txt");
	{
		int fd = open("append.txt", O_RDWR);
		okfd("open append.txt O_RDWR", fd);
		ok("ftruncate append.txt 3", ftruncate(fd, 3));
		close(fd);
		cat("cat append.txt", AT_FDCWD, "append.txt");
	}
	wr("open ro.txt O_WRONLY (0444)", "ro.txt", O_WRONLY, "x");
	ok("truncate ro.txt (0444)", truncate("ro.txt", 0));
	ok("chmod ro.txt 0644", chmod("ro.txt", 0644));
	wr("open ro.txt O_WRONLY (0644)", "ro.txt", O_WRONLY | O_TRUNC, "writable\n");
	cat("cat ro.txt", AT_FDCWD, "ro.txt");
	show("stat ro.txt", "ro.txt");

	/* ---- metadata ---- */
	ok("chmod times/t1 0600", chmod("times/t1", 0600));
	show("stat times/t1", "times/t1");
	mtime("mtime times/t1 after chmod", "times/t1");
	ok("chown times/t3 to self", chown("times/t3", getuid(), getgid()));
	show("stat times/t3", "times/t3");
	mtime("mtime times/t3 after chown", "times/t3");
	{
		struct timespec ts[2] = { { 1234567890, 111 }, { 1234567891, 222000 } };
		ok("utimensat d1/a", utimensat(AT_FDCWD, "d1/a", ts, 0));
		mtime("mtime d1/a", "d1/a");
		struct timespec om[2] = { { 0, UTIME_OMIT }, { 1300000000, 5 } };
		ok("utimensat lnk_rel NOFOLLOW", utimensat(AT_FDCWD, "lnk_rel", om, AT_SYMLINK_NOFOLLOW));
		mtime("mtime lnk_rel", "lnk_rel");
		mtime("mtime d1/a (through lnk_rel unchanged)", "d1/a");
		int fd = open("d1/sub/c", O_RDONLY);
		struct timespec fts[2] = { { 1400000000, 0 }, { 1400000001, 0 } };
		/* moat: EROFS, the fd is the host's lower file (known-differences) */
		ok("futimens d1/sub/c (fd O_RDONLY, owner)", futimens(fd, fts));
		close(fd);
		ok("utimensat d1/sub/c", utimensat(AT_FDCWD, "d1/sub/c", fts, 0));
		mtime("mtime d1/sub/c", "d1/sub/c");
	}
	ok("chmod fifo 0600", chmod("fifo", 0600));
	show("stat fifo", "fifo");
	ok("chmod d1 0750", chmod("d1", 0750));
	show("stat d1", "d1");
	ls("ls d1 after chmod", "d1");
	ok("chmod d1 0755", chmod("d1", 0755));
	ok("stat locked/sub (0600 dir)", stat("locked/sub", &(struct stat){ 0 }));
	ok("chmod locked 0755", chmod("locked", 0755));
	show("stat locked/sub after chmod", "locked/sub");
	cat("cat locked/sub/f after chmod", AT_FDCWD, "locked/sub/f");

	/* ---- hard links ---- */
	/* Two names of one lower file: renaming one over the other does
	 * nothing (POSIX), both stay. */
	ok("rename hl/h4 hl/h3 (two links of one file)", rename("hl/h4", "hl/h3"));
	ls("ls hl", "hl");
	show("stat hl/h3", "hl/h3");
	yesno("hl/h3 and hl/h4 are one inode", ino_of("hl/h3") == ino_of("hl/h4"));
	/* moat breaks a lower hard link on copy-up, as overlayfs without
	 * index=on (known-differences); both names go afterwards. */
	wr("write hl1", "hl1", O_WRONLY | O_TRUNC, "through hl1\n");
	cat("cat hl2 after writing hl1", AT_FDCWD, "hl2");
	show("stat hl1 after write", "hl1");
	show("stat hl2 after write", "hl2");
	ok("unlink hl1", unlink("hl1"));
	ok("unlink hl2", unlink("hl2"));
	ok("link times/t1 hl_t1", link("times/t1", "hl_t1"));
	show("stat times/t1 after link", "times/t1");
	show("stat hl_t1", "hl_t1");
	yesno("times/t1 and hl_t1 are one inode", ino_of("times/t1") == ino_of("hl_t1"));
	wr("append hl_t1", "hl_t1", O_WRONLY | O_APPEND, "via link\n");
	cat("cat times/t1", AT_FDCWD, "times/t1");
	ok("link d1 dlink (dir)", link("d1", "dlink"));
	ok("link lnk_dangling hl_lnk", link("lnk_dangling", "hl_lnk"));
	show("stat hl_lnk", "hl_lnk");
	ok("unlink hl_lnk", unlink("hl_lnk"));

	/* ---- renaming files ---- */
	ok("rename ren/r1 ren/r1new", rename("ren/r1", "ren/r1new"));
	ls("ls ren", "ren");
	cat("cat ren/r1new", AT_FDCWD, "ren/r1new");
	yesno("ren/r1new has r1's inode", ino_of("ren/r1new") == i_r1);
	ok("rename ren/r2 ren2/r2", rename("ren/r2", "ren2/r2"));
	yesno("ren2/r2 has r2's inode", ino_of("ren2/r2") == i_r2);
	ok("rename ren/r3 ren2/existing (replace)", rename("ren/r3", "ren2/existing"));
	ls("ls ren", "ren");
	ls("ls ren2", "ren2");
	cat("cat ren2/existing", AT_FDCWD, "ren2/existing");
	ok("renameat2 ren/s1 ren/s2 NOREPLACE", rn2("ren/s1", "ren/s2", RENAME_NOREPLACE));
	ok("renameat2 ren/s1 ren/s2 EXCHANGE", rn2("ren/s1", "ren/s2", RENAME_EXCHANGE));
	cat("cat ren/s1", AT_FDCWD, "ren/s1");
	cat("cat ren/s2", AT_FDCWD, "ren/s2");
	ok("rename ren/s1 ren/s1 (itself)", rename("ren/s1", "ren/s1"));
	ok("rename lnk_rel ren2/lnk_moved", rename("lnk_rel", "ren2/lnk_moved"));
	rdlink("readlink ren2/lnk_moved", "ren2/lnk_moved");
	cat("cat ren2/lnk_moved (dangles now)", AT_FDCWD, "ren2/lnk_moved");
	ok("rename fifo ren2/fifo", rename("fifo", "ren2/fifo"));
	show("stat ren2/fifo", "ren2/fifo");
	ok("rename ren/s1 ren2 (file over dir)", rename("ren/s1", "ren2"));
	ok("rename ren/s1 missing/x", rename("ren/s1", "missing/x"));
	ok("rename pub/other.txt pub/mine (sticky, not ours)", rename("pub/other.txt", "pub/mine"));
	ok("rename pub/own.txt pub/own2.txt (sticky, ours)", rename("pub/own.txt", "pub/own2.txt"));
	ls("ls pub", "pub");

	/* ---- renaming directories ---- */
	mv("dmove", "dmoved");
	ls("ls dmoved", "dmoved");
	tree("dmoved");
	show("stat dmove", "dmove");
	ok("mkdir newdir", mkdir("newdir", 0755));
	wr("create newdir/f", "newdir/f", O_WRONLY | O_CREAT | O_EXCL, "nf\n");
	ok("rename newdir newdir2 (a new dir)", rename("newdir", "newdir2"));
	ok("rename newdir2 d1/newdir3 (into a lower dir)", rename("newdir2", "d1/newdir3"));
	cat("cat d1/newdir3/f", AT_FDCWD, "d1/newdir3/f");
	ok("mkdir newdir4", mkdir("newdir4", 0755));
	ok("rename newdir4 empty (over an empty lower dir)", rename("newdir4", "empty"));
	ls("ls empty", "empty");
	ok("rename d1/newdir3 full (over a non-empty lower dir)", rename("d1/newdir3", "full"));
	ok("rename d1 d1/sub/x (into itself)", rename("d1", "d1/sub/x"));
	ok("rename d1/sub f.txt (dir over file)", rename("d1/sub", "f.txt"));

	/* ---- removing ---- */
	ok("unlink d1/b", unlink("d1/b"));
	show("stat d1/b", "d1/b");
	ok("unlink lnk_dangling", unlink("lnk_dangling"));
	ok("unlink ren2/fifo", unlink("ren2/fifo"));
	ok("unlink d1 (dir)", unlink("d1"));
	ok("rmdir f.txt (file)", rmdir("f.txt"));
	ok("rmdir full (not empty)", rmdir("full"));
	ok("rmdir deep (not empty)", rmdir("deep"));
	ok("unlink pub/other.txt (sticky, not ours)", unlink("pub/other.txt"));
	ok("unlink pub/own2.txt (sticky, ours, renamed before)", unlink("pub/own2.txt"));
	ok("unlink pub/own_b.txt (sticky, ours, untouched)", unlink("pub/own_b.txt"));
	ls("ls pub", "pub");
	ok("unlink full/x", unlink("full/x"));
	ok("unlink full/y", unlink("full/y"));
	ok("rmdir full (still not empty)", rmdir("full"));
	ok("unlink full/sub/z", unlink("full/sub/z"));
	ok("rmdir full/sub", rmdir("full/sub"));
	ls("ls full", "full");
	ok("rmdir full", rmdir("full"));
	show("stat full", "full");
	ok("mkdir full", mkdir("full", 0700));
	ls("ls full (new)", "full");
	show("stat full (new)", "full");
	show("stat full/x", "full/x");
	show("stat full/sub", "full/sub");
	yesno("new full is not the old one (its fd still open)", ino_of("full") != i_full);
	wr("create full/x", "full/x", O_WRONLY | O_CREAT | O_EXCL, "fresh\n");
	ls("ls full", "full");
	cat("cat full/x", AT_FDCWD, "full/x");
	{
		int fd = openat(fd_full, "x", O_RDONLY);
		printf("openat(old full fd, x): %s\n", fd < 0 ? ename(errno) : "fd");
		if (fd >= 0)
			close(fd);
		DIR *d = fdopendir(dup(fd_full));
		if (d) {
			list_stream("list old full fd", d);
			closedir(d);
		}
	}
	ok("rmdir empty", rmdir("empty"));
	ok("mkdir empty", mkdir("empty", 0755));
	ls("ls empty", "empty");
	ok("unlink times/t2 (inode kept by an fd)", unlink("times/t2"));
	wr("create times/t2 again", "times/t2", O_WRONLY | O_CREAT | O_EXCL, "t2 again\n");
	{
		struct stat a;
		yesno("new times/t2 is not the old inode",
		      fstat(fd_t2, &a) == 0 && a.st_ino == i_t2 && ino_of("times/t2") != i_t2);
	}
	pcat("read the old times/t2 through its fd", fd_t2);

	/* ---- creating in lower directories ---- */
	ok("mkdir deep/l1/l2/l3/l4/new", mkdir("deep/l1/l2/l3/l4/new", 0755));
	wr("create deep/l1/l2/l3/l4/new/file", "deep/l1/l2/l3/l4/new/file",
	   O_WRONLY | O_CREAT | O_EXCL, "deep new\n");
	wr("create deep/l1/l2/x.txt", "deep/l1/l2/x.txt", O_WRONLY | O_CREAT | O_EXCL, "x\n");
	ls("ls deep/l1/l2/l3/l4", "deep/l1/l2/l3/l4");
	ls("ls deep/l1/l2", "deep/l1/l2");
	cat("cat deep/l1/l2/l3/l4/new/file", AT_FDCWD, "deep/l1/l2/l3/l4/new/file");
	cat("cat deep/l1/l2/l3/l4/leaf.txt", AT_FDCWD, "deep/l1/l2/l3/l4/leaf.txt");
	yesno("deep/l1/l2/l3/l4 keeps its inode", ino_of("deep/l1/l2/l3/l4") == i_l4);
	yesno("a new dir has the st_dev of its parent", dev_of("deep/l1/l2/l3/l4/new") == dev_root);
	yesno("a new file has the st_dev of its parent", dev_of("deep/l1/l2/x.txt") == dev_root);
	ok("mkdir d1/sub (exists)", mkdir("d1/sub", 0755));
	ok("open d1/a O_CREAT|O_EXCL (exists)", open("d1/a", O_WRONLY | O_CREAT | O_EXCL, 0644));
	ok("mkdir priv/new (0700 dir)", mkdir("priv/new", 0755));
	wr("create priv/p.txt", "priv/p.txt", O_WRONLY | O_CREAT | O_EXCL, "p\n");
	ls("ls priv", "priv");
	ok("mkfifo d1/sub/newfifo", mkfifo("d1/sub/newfifo", 0644));
	ok("symlink d1/a newlink", symlink("d1/a", "newlink"));
	ok("symlink x newlink (exists)", symlink("x", "newlink"));
	rdlink("readlink newlink", "newlink");
	cat("cat newlink", AT_FDCWD, "newlink");
	{
		char t[PATH_MAX + 8];
		snprintf(t, sizeof t, "%s/d1/a", probe_start);
		ok("symlink <start>/d1/a newabs", symlink(t, "newabs"));
		rdlink("readlink newabs", "newabs");
		cat("cat newabs", AT_FDCWD, "newabs");
	}
	{
		int fd = open("d1/sub", O_TMPFILE | O_RDWR, 0600);
		okfd("O_TMPFILE in d1/sub", fd);
		if (fd >= 0) {
			ok("write O_TMPFILE", write(fd, "tmp\n", 4));
			ls("ls d1/sub (tmpfile not linked)", "d1/sub");
			char p[64];
			snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
			ok("linkat O_TMPFILE d1/sub/tmpfile", linkat(AT_FDCWD, p, AT_FDCWD, "d1/sub/tmpfile",
								     AT_SYMLINK_FOLLOW));
			close(fd);
		}
		ls("ls d1/sub", "d1/sub");
		cat("cat d1/sub/tmpfile", AT_FDCWD, "d1/sub/tmpfile");
		show("stat d1/sub/tmpfile", "d1/sub/tmpfile");
	}

	/* ---- directories that changed under open streams and fds ---- */
	wr("create d1/new1", "d1/new1", O_WRONLY | O_CREAT | O_EXCL, "n1\n");
	ls("ls d1 (fresh open)", "d1");
	rewinddir(dd1);
	list_stream("rewinddir d1 stream opened before", dd1);
	rewinddir(droot);
	list_stream("rewinddir . stream opened before", droot);
	rewinddir(ddeep);
	list_stream("rewinddir deep/l1/l2/l3/l4 stream opened before", ddeep);
	{
		int fd = openat(fd_d1, "new1", O_RDONLY);
		printf("openat(d1 fd opened before, new1): %s\n", fd < 0 ? ename(errno) : "fd");
		if (fd >= 0)
			close(fd);
		struct stat st;
		ok("fstatat(d1 fd opened before, a)", fstatat(fd_d1, "a", &st, 0));
		ok("fstatat(d1 fd opened before, b) (removed)", fstatat(fd_d1, "b", &st, 0));
		struct stat a, b;
		yesno("fstat(d1 fd opened before) is stat(d1) (ino)",
		      fstat(fd_d1, &a) == 0 && stat("d1", &b) == 0 && a.st_ino == b.st_ino);
	}
	/* a dir stream opened in the middle of changes sees the later ones */
	DIR *dmid = opendir("d1");
	ok("unlink d1/new1", unlink("d1/new1"));
	wr("create d1/new2", "d1/new2", O_WRONLY | O_CREAT | O_EXCL, "n2\n");
	list_stream("d1 stream opened mid-way, read after more changes", dmid);
	closedir(dmid);
	closedir(dd1);
	closedir(droot);
	closedir(ddeep);
	close(fd_d1);
	close(fd_f);
	close(fd_t2);
	close(fd_full);

	/* ---- identities after all this ---- */
	yesno(". keeps its inode", ino_of(".") == i_root);
	yesno("d1 keeps its inode", ino_of("d1") == i_d1);
	stat("d1", &st_d1);
	printf("d1 nlink before %lu, now %lu\n", (unsigned long)n_d1, (unsigned long)st_d1.st_nlink);
	ok("mkdir d1/sub2", mkdir("d1/sub2", 0755));
	show("stat d1 (one more subdir)", "d1");
	ok("rmdir d1/sub2", rmdir("d1/sub2"));
	show("stat d1 (one fewer)", "d1");
	show("stat deep/l1/l2", "deep/l1/l2");
	{
		/* d_ino is st_ino (lower names included) */
		DIR *d = opendir(".");
		struct dirent *de;
		int bad = 0, all = 0;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, "..") )
				continue;
			struct stat st;
			all++;
			if (lstat(de->d_name, &st) == 0 && st.st_ino != de->d_ino)
				bad++;
		}
		if (d)
			closedir(d);
		printf("d_ino differs from st_ino in .: %d of %d\n", bad, all);
	}

	printf("final tree:\n");
	tree(".");
	return probe_done();
}
