/* probe_rename_over — rename onto existing names: each kind of source over
 * each kind of target (EISDIR, ENOTDIR, ENOTEMPTY), onto itself and onto
 * another link of the same inode, onto an ancestor or descendant (EINVAL,
 * ENOTEMPTY), RENAME_NOREPLACE and RENAME_EXCHANGE edge cases, moving a
 * directory out of a parent needs write permission on the directory
 * itself (its ".." changes), and an fd of a replaced file still reads the
 * old contents.  Cross-mount renames (EXDEV) are in probe_xdev. */
#include "probe.h"

static long rn(const char *a, const char *b) { return syscall(SYS_rename, a, b); }
static long rn2(const char *a, const char *b, unsigned fl)
{
	return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, fl);
}

int main(void)
{
	char buf[16];
	struct stat st;
	probe_init();

	ok("mkfile f", mkfile("f", "F"));
	ok("mkfile g", mkfile("g", "G"));
	ok("mkdir e (empty)", mkdir("e", 0755));
	ok("mkdir e2 (empty)", mkdir("e2", 0755));
	ok("mkdir full", mkdir("full", 0755));
	ok("mkfile full/x", mkfile("full/x", "X"));
	ok("symlink e le (link to dir)", symlink("e", "le"));
	ok("symlink f lf (link to file)", symlink("f", "lf"));
	ok("symlink nowhere dang", symlink("nowhere", "dang"));

	/* file onto things */
	ok("rename f e (file onto empty dir)", rn("f", "e"));
	ok("rename f full (file onto non-empty dir)", rn("f", "full"));
	ok("rename f le (file onto link to dir: replaces the link)", rn("f", "le"));
	show("lstat le", "le");
	show("stat e (untouched)", "e");
	ok("rename le f (back)", rn("le", "f"));
	ok("symlink e le", symlink("e", "le"));
	ok("mkfile f2", mkfile("f2", "F2"));
	ok("rename f2 dang (file onto dangling link)", rn("f2", "dang"));
	show("lstat dang (now a file)", "dang");
	show("stat nowhere (not created)", "nowhere");

	/* directories onto things */
	ok("rename e f (dir onto file)", rn("e", "f"));
	ok("rename e lf (dir onto link to file)", rn("e", "lf"));
	ok("rename e le (dir onto link to dir)", rn("e", "le"));
	ok("rename e full (dir onto non-empty dir)", rn("e", "full"));
	ok("rename e e2 (dir onto empty dir)", rn("e", "e2"));
	show("stat e", "e");
	ok("mkdir e", mkdir("e", 0755));
	ok("rename le e (link onto dir)", rn("le", "e"));
	ok("rename dang e (file onto dir, via old link name)", rn("dang", "e"));

	/* onto itself */
	ok("rename f f", rn("f", "f"));
	ok("rename e e", rn("e", "e"));
	ok("rename e e/", rn("e", "e/"));
	ok("rename e/ e", rn("e/", "e"));
	ok("rename f f/", rn("f", "f/"));
	ok("rename full/x full/../full/x", rn("full/x", "full/../full/x"));
	ok("link f hf", link("f", "hf"));
	ok("rename f hf (another link, same inode)", rn("f", "hf"));
	show("stat f (both names stay)", "f");
	ok("rename lf lf (a symlink)", rn("lf", "lf"));
	ok("unlink hf", unlink("hf"));

	/* ancestors and descendants */
	ok("mkdir a", mkdir("a", 0755));
	ok("mkdir a/b", mkdir("a/b", 0755));
	ok("mkdir a/b/c", mkdir("a/b/c", 0755));
	ok("rename a a/b/c/a (into own subtree)", rn("a", "a/b/c/a"));
	ok("rename a a/b (onto own child)", rn("a", "a/b"));
	ok("rename a/b a (onto own parent)", rn("a/b", "a"));
	ok("rename a/b/c a (onto own grandparent)", rn("a/b/c", "a"));
	ok("EXCHANGE a a/b", rn2("a", "a/b", RENAME_EXCHANGE));
	ok("EXCHANGE a/b a", rn2("a/b", "a", RENAME_EXCHANGE));
	ok("rename a/b/c a/c (up one level)", rn("a/b/c", "a/c"));
	show("stat a/c", "a/c");

	/* RENAME_NOREPLACE */
	ok("NOREPLACE f g (exists)", rn2("f", "g", RENAME_NOREPLACE));
	ok("NOREPLACE f f (itself)", rn2("f", "f", RENAME_NOREPLACE));
	ok("symlink nowhere dang3", symlink("nowhere", "dang3"));
	ok("NOREPLACE f dang3 (dangling link)", rn2("f", "dang3", RENAME_NOREPLACE));
	ok("NOREPLACE e e2 (empty dir)", rn2("e", "e2", RENAME_NOREPLACE));
	ok("NOREPLACE missing x", rn2("missing", "x", RENAME_NOREPLACE));
	ok("NOREPLACE f f3 (new)", rn2("f", "f3", RENAME_NOREPLACE));
	ok("rename f3 f", rn("f3", "f"));

	/* RENAME_EXCHANGE */
	ok("EXCHANGE f f (itself)", rn2("f", "f", RENAME_EXCHANGE));
	ok("EXCHANGE f g", rn2("f", "g", RENAME_EXCHANGE));
	cat("cat f", AT_FDCWD, "f");
	cat("cat g", AT_FDCWD, "g");
	ok("EXCHANGE f full (file <-> non-empty dir)", rn2("f", "full", RENAME_EXCHANGE));
	cat("cat f/x", AT_FDCWD, "f/x");
	cat("cat full", AT_FDCWD, "full");
	ok("EXCHANGE full f (back)", rn2("full", "f", RENAME_EXCHANGE));
	ok("EXCHANGE f dang3 (file <-> dangling link)", rn2("f", "dang3", RENAME_EXCHANGE));
	show("lstat f", "f");
	cat("cat dang3", AT_FDCWD, "dang3");
	ok("EXCHANGE f dang3 (back)", rn2("f", "dang3", RENAME_EXCHANGE));
	ok("EXCHANGE f missing", rn2("f", "missing", RENAME_EXCHANGE));
	ok("EXCHANGE missing f", rn2("missing", "f", RENAME_EXCHANGE));
	ok("EXCHANGE f g/ (file with slash)", rn2("f", "g/", RENAME_EXCHANGE));
	ok("EXCHANGE e/ full/ (dirs with slashes)", rn2("e/", "full/", RENAME_EXCHANGE));
	cat("cat e/x", AT_FDCWD, "e/x");
	ok("EXCHANGE e full (back)", rn2("e", "full", RENAME_EXCHANGE));
	ok("EXCHANGE|WHITEOUT", rn2("f", "g", RENAME_EXCHANGE | RENAME_WHITEOUT));

	/* an fd of the replaced file keeps the old contents */
	ok("mkfile old", mkfile("old", "old-data"));
	ok("mkfile new", mkfile("new", "new-data"));
	int fd = okfd("open old", open("old", O_RDONLY));
	ok("rename new old", rn("new", "old"));
	ssize_t n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("read old fd: \"%s\"\n", buf);
	pst("fstat old fd (nlink 0)", fstat(fd, &st), &st);
	close(fd);
	cat("cat old", AT_FDCWD, "old");

	/* a directory fd follows its directory */
	ok("mkdir m", mkdir("m", 0755));
	ok("mkfile m/in", mkfile("m/in", "in"));
	int dfd = okfd("open m", open("m", O_RDONLY | O_DIRECTORY));
	ok("rename m m2", rn("m", "m2"));
	cat("cat (dfd) in", dfd, "in");
	ok("mkfile m2/made", mkfile("m2/made", "made"));
	cat("cat (dfd) made", dfd, "made");
	ok("renameat (dfd) in (dfd) in2", syscall(SYS_renameat, dfd, "in", dfd, "in2"));
	cat("cat m2/in2", AT_FDCWD, "m2/in2");
	close(dfd);

	/* permissions: write on both parents; a directory moving to another
	 * parent also needs write on itself */
	ok("mkdir p", mkdir("p", 0755));
	ok("mkdir q", mkdir("q", 0755));
	ok("mkdir p/rd 0555", mkdir("p/rd", 0555));
	ok("rename p/rd q/rd (0555 dir to other parent)", rn("p/rd", "q/rd"));
	ok("rename p/rd p/rd2 (0555 dir, same parent)", rn("p/rd", "p/rd2"));
	ok("mkfile p/file", mkfile("p/file", ""));
	ok("chmod p/file 0", chmod("p/file", 0));
	ok("rename p/file q/file (0000 file)", rn("p/file", "q/file"));
	ok("chmod q 0555", chmod("q", 0555));
	ok("rename q/file p/file (from 0555 dir)", rn("q/file", "p/file"));
	ok("rename p/rd2 q/rd (into 0555 dir)", rn("p/rd2", "q/rd"));
	ok("chmod q 0755", chmod("q", 0755));
	ok("chmod p/rd2 0755", chmod("p/rd2", 0755));
	return probe_done();
}
