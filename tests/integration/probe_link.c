/* probe_link — link, linkat: nlink, shared contents, symlink handling. */
#include "probe.h"

static long ln(const char *a, const char *b) { return syscall(SYS_link, a, b); }
static long lnat(int da, const char *a, int db, const char *b, int fl)
{
	return syscall(SYS_linkat, da, a, db, b, fl);
}

int main(void)
{
	struct stat a, b;
	probe_init();

	ok("mkfile f", mkfile("f", "orig"));
	ok("link f h", ln("f", "h"));
	show("stat f", "f");
	show("stat h", "h");
	stat("f", &a);
	stat("h", &b);
	printf("f and h inode: %s\n", a.st_ino == b.st_ino && a.st_dev == b.st_dev ? "same" : "different");
	int fd = okfd("open h O_WRONLY|O_APPEND", open("h", O_WRONLY | O_APPEND));
	ok("write +h", write(fd, "+h", 2));
	close(fd);
	cat("cat f", AT_FDCWD, "f");
	ok("unlink f", unlink("f"));
	show("stat h (nlink 1)", "h");
	cat("cat h", AT_FDCWD, "h");

	/* errors */
	ok("mkdir d", mkdir("d", 0755));
	ok("mkfile d/g", mkfile("d/g", "g"));
	ok("link h d/g (exists)", ln("h", "d/g"));
	ok("link missing x", ln("missing", "x"));
	ok("link d dl (a dir)", ln("d", "dl"));
	ok("link h missing/x", ln("h", "missing/x"));
	ok("link h/ x", ln("h/", "x"));
	ok("link h x/", ln("h", "x/"));
	ok("link h d/g/x", ln("h", "d/g/x"));
	ok("mkdir ro 0555", mkdir("ro", 0555));
	ok("link h ro/x", ln("h", "ro/x"));

	/* linkat, relative to dirfds */
	int dfd = okfd("open d", open("d", O_RDONLY | O_DIRECTORY));
	ok("linkat (dfd) g AT_FDCWD g2", lnat(dfd, "g", AT_FDCWD, "g2", 0));
	show("stat d/g", "d/g");
	ok("linkat AT_FDCWD h (dfd) h2", lnat(AT_FDCWD, "h", dfd, "h2", 0));
	cat("cat d/h2", AT_FDCWD, "d/h2");
	show("stat h (nlink 2)", "h");
	ok("linkat (dfd) ../h (dfd) h3", lnat(dfd, "../h", dfd, "h3", 0));
	show("stat h (nlink 3)", "h");
	ok("linkat closed fd", lnat(999, "h", AT_FDCWD, "x", 0));
	ok("linkat bad flag", lnat(AT_FDCWD, "h", AT_FDCWD, "x", 0x40000000));

	/* symlinks: the link itself, or the target with AT_SYMLINK_FOLLOW */
	ok("symlink h sl", symlink("h", "sl"));
	ok("linkat sl sl2 (no follow)", lnat(AT_FDCWD, "sl", AT_FDCWD, "sl2", 0));
	show("lstat sl2", "sl2");
	show("lstat sl (nlink 2)", "sl");
	ok("linkat sl hf SYMLINK_FOLLOW", lnat(AT_FDCWD, "sl", AT_FDCWD, "hf", AT_SYMLINK_FOLLOW));
	show("lstat hf", "hf");
	show("stat h (nlink 4)", "h");
	ok("link sl sl3 (link(2) does not follow)", ln("sl", "sl3"));
	show("lstat sl3", "sl3");
	ok("symlink nowhere dang", symlink("nowhere", "dang"));
	ok("linkat dang dang2", lnat(AT_FDCWD, "dang", AT_FDCWD, "dang2", 0));
	ok("linkat dang x SYMLINK_FOLLOW", lnat(AT_FDCWD, "dang", AT_FDCWD, "x", AT_SYMLINK_FOLLOW));

	/* unlink all but one name, the contents stay */
	ok("unlink h", unlink("h"));
	ok("unlink d/h2", unlink("d/h2"));
	ok("unlink d/h3", unlink("d/h3"));
	show("stat hf (nlink 1)", "hf");
	cat("cat hf", AT_FDCWD, "hf");
	cat("cat sl (dangling now)", AT_FDCWD, "sl");
	close(dfd);
	return probe_done();
}
