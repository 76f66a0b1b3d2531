/* probe_rename — rename, renameat, renameat2 (NOREPLACE, EXCHANGE). */
#include "probe.h"

static long rn(const char *a, const char *b) { return syscall(SYS_rename, a, b); }
static long rn2(int da, const char *a, int db, const char *b, unsigned fl)
{
	return syscall(SYS_renameat2, da, a, db, b, fl);
}

int main(void)
{
	char buf[8];
	probe_init();

	ok("mkfile a", mkfile("a", "A"));
	ok("mkfile b", mkfile("b", "B"));

	/* files */
	ok("rename a c", rn("a", "c"));
	show("stat a", "a");
	cat("cat c", AT_FDCWD, "c");
	int fd = okfd("open c", open("c", O_RDONLY));
	ok("rename c b (replace)", rn("c", "b"));
	cat("cat b", AT_FDCWD, "b");
	show("stat c", "c");
	ok("read from fd opened before rename", read(fd, buf, 1));
	close(fd);
	ok("rename b b (itself)", rn("b", "b"));
	ok("link b hb", link("b", "hb"));
	ok("rename b hb (same inode)", rn("b", "hb"));
	show("stat b (still there)", "b");
	show("stat hb", "hb");
	ok("unlink hb", unlink("hb"));
	ok("rename missing x", rn("missing", "x"));
	ok("rename b missing/x", rn("b", "missing/x"));
	ok("rename b b/x", rn("b", "b/x"));
	ok("rename b/ z", rn("b/", "z"));
	ok("rename b z/", rn("b", "z/"));
	ok("rename \"\" z", rn("", "z"));

	/* directories */
	ok("mkdir d1", mkdir("d1", 0755));
	ok("mkdir d2", mkdir("d2", 0755));
	ok("mkfile d2/in", mkfile("d2/in", "in"));
	ok("mkdir full", mkdir("full", 0755));
	ok("mkfile full/x", mkfile("full/x", ""));
	ok("rename d2 d1 (empty target)", rn("d2", "d1"));
	cat("cat d1/in", AT_FDCWD, "d1/in");
	show("stat d2", "d2");
	ok("rename d1 full (non-empty)", rn("d1", "full"));
	ok("rename b full (file over dir)", rn("b", "full"));
	ok("rename full b (dir over file)", rn("full", "b"));
	ok("rename d1 d1/sub (into itself)", rn("d1", "d1/sub"));
	ok("rename . x", rn(".", "x"));
	ok("rename d1/.. x", rn("d1/..", "x"));
	ok("rename d1/ d3/ (trailing slashes)", rn("d1/", "d3/"));
	cat("cat d3/in", AT_FDCWD, "d3/in");
	ok("mkdir d3/deep", mkdir("d3/deep", 0755));
	ok("mkfile d3/deep/f", mkfile("d3/deep/f", "deep"));
	ok("rename d3 d4", rn("d3", "d4"));
	cat("cat d4/deep/f", AT_FDCWD, "d4/deep/f");
	cat("cat d3/deep/f", AT_FDCWD, "d3/deep/f");
	ok("mkdir ro 0555", mkdir("ro", 0555));
	ok("rename b ro/b", rn("b", "ro/b"));

	/* symlinks move themselves */
	ok("symlink b lb", symlink("b", "lb"));
	ok("rename lb lb2", rn("lb", "lb2"));
	show("lstat lb2", "lb2");
	cat("cat lb2", AT_FDCWD, "lb2");

	/* renameat */
	int d4 = okfd("open d4", open("d4", O_RDONLY | O_DIRECTORY));
	int fl = okfd("open full", open("full", O_RDONLY | O_DIRECTORY));
	ok("renameat (d4) in (full) moved", syscall(SYS_renameat, d4, "in", fl, "moved"));
	cat("cat full/moved", AT_FDCWD, "full/moved");
	ok("renameat (d4) in (again)", syscall(SYS_renameat, d4, "in", fl, "moved"));
	ok("renameat (full) moved AT_FDCWD b2", syscall(SYS_renameat, fl, "moved", AT_FDCWD, "b2"));
	ok("renameat closed fd", syscall(SYS_renameat, 999, "x", AT_FDCWD, "y"));

	/* renameat2 */
	ok("NOREPLACE b b2 (exists)", rn2(AT_FDCWD, "b", AT_FDCWD, "b2", RENAME_NOREPLACE));
	cat("cat b2", AT_FDCWD, "b2");
	ok("NOREPLACE b2 b3 (new)", rn2(AT_FDCWD, "b2", AT_FDCWD, "b3", RENAME_NOREPLACE));
	cat("cat b3", AT_FDCWD, "b3");
	ok("EXCHANGE b b3", rn2(AT_FDCWD, "b", AT_FDCWD, "b3", RENAME_EXCHANGE));
	cat("cat b", AT_FDCWD, "b");
	cat("cat b3", AT_FDCWD, "b3");
	ok("EXCHANGE b d4 (file <-> dir)", rn2(AT_FDCWD, "b", AT_FDCWD, "d4", RENAME_EXCHANGE));
	show("stat b", "b");
	show("stat d4", "d4");
	cat("cat b/deep/f", AT_FDCWD, "b/deep/f");
	ok("mkfile full/x X", mkfile("full/x", "X"));
	ok("EXCHANGE (d4fd) deep (full) x", rn2(d4, "deep", fl, "x", RENAME_EXCHANGE));
	cat("cat full/x/f", AT_FDCWD, "full/x/f");
	cat("cat b/deep", AT_FDCWD, "b/deep");
	ok("EXCHANGE b missing", rn2(AT_FDCWD, "b", AT_FDCWD, "missing", RENAME_EXCHANGE));
	ok("NOREPLACE|EXCHANGE", rn2(AT_FDCWD, "b", AT_FDCWD, "b3", RENAME_NOREPLACE | RENAME_EXCHANGE));
	/* RENAME_WHITEOUT (creates a 0/0 char device) is policy, not compared. */
	ok("bad flag", rn2(AT_FDCWD, "b3", AT_FDCWD, "b4", 0x80000));
	ok("renameat2 flags 0 b3 b4", rn2(AT_FDCWD, "b3", AT_FDCWD, "b4", 0));
	cat("cat b4", AT_FDCWD, "b4");
	close(d4);
	close(fl);
	return probe_done();
}
