/* probe_nlink — st_nlink through link, unlink, rename and rmdir, as seen by
 * stat and by fstat of an fd held across the changes; a directory's count
 * (2 + subdirectories); what cannot be linked: a directory (EPERM), a
 * symlink is linked itself.
 *
 * linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH (the probe never
 * has it: run.sh runs it as uid 65534 when it is root), except that since
 * Linux 6.10 the process whose credentials opened the fd may use it
 * (fs/namei.c: f_cred == current_cred()).  A forked child has credentials
 * of its own (copy_creds makes a new struct cred), so an fd inherited from
 * the parent gives ENOENT in the child on every kernel; the parent's own fd
 * gives 0 on 6.10+ and ENOENT before.  Both sides run on one kernel. */
#include "probe.h"
#include <sys/wait.h>

static void nl(const char *step, const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: nlink=%lu\n", step, (unsigned long)st.st_nlink);
}

static void fnl(const char *step, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: nlink=%lu\n", step, (unsigned long)st.st_nlink);
}

static long lnat(int da, const char *a, int db, const char *b, int fl)
{
	return syscall(SYS_linkat, da, a, db, b, fl);
}

int main(void)
{
	probe_init();
	ok("mkfile f", mkfile("f", "data"));
	int fd = okfd("open f", open("f", O_RDONLY));
	fnl("fstat fd", fd);
	ok("link f l1", link("f", "l1"));
	ok("link l1 l2", link("l1", "l2"));
	fnl("fstat fd", fd);
	nl("stat l2", "l2");
	ok("mkdir sub", mkdir("sub", 0755));
	ok("link f sub/l3", link("f", "sub/l3"));
	fnl("fstat fd", fd);
	ok("rename l1 l1b (a move keeps the count)", rename("l1", "l1b"));
	fnl("fstat fd", fd);
	ok("mkfile other", mkfile("other", "other"));
	ok("rename other l2 (l2 replaced)", rename("other", "l2"));
	fnl("fstat fd", fd);
	ok("rename f l1b (two names of one file: nothing happens)", rename("f", "l1b"));
	fnl("fstat fd", fd);
	nl("stat f", "f");
	ok("unlink f", unlink("f"));
	ok("unlink l1b", unlink("l1b"));
	fnl("fstat fd", fd);
	ok("unlink sub/l3", unlink("sub/l3"));
	fnl("fstat fd (no names left)", fd);
	ok("link l2 sub/x", link("l2", "sub/x"));
	nl("stat l2", "l2");
	close(fd);

	/* directories: 2 + one per subdirectory */
	ok("mkdir d", mkdir("d", 0755));
	nl("stat d", "d");
	int dfd = okfd("open d", open("d", O_RDONLY | O_DIRECTORY));
	ok("mkdir d/a", mkdir("d/a", 0755));
	ok("mkdir d/b", mkdir("d/b", 0755));
	ok("mkfile d/file (files do not count)", mkfile("d/file", ""));
	nl("stat d", "d");
	fnl("fstat dfd", dfd);
	nl("stat d/a", "d/a");
	ok("rename d/a a (moved out)", rename("d/a", "a"));
	nl("stat d", "d");
	ok("rename a d/b/a (moved into a child)", rename("a", "d/b/a"));
	nl("stat d", "d");
	nl("stat d/b", "d/b");
	ok("rmdir d/b/a", rmdir("d/b/a"));
	nl("stat d/b", "d/b");
	ok("rename d/b d/c", rename("d/b", "d/c"));
	nl("stat d", "d");
	fnl("fstat dfd", dfd);
	close(dfd);

	/* what cannot be linked, and linkat's flags */
	ok("link d dl (a dir)", link("d", "dl"));
	ok("linkat d dl SYMLINK_FOLLOW", lnat(AT_FDCWD, "d", AT_FDCWD, "dl", AT_SYMLINK_FOLLOW));
	ok("symlink d ld", symlink("d", "ld"));
	ok("linkat ld ld2 (the symlink itself)", lnat(AT_FDCWD, "ld", AT_FDCWD, "ld2", 0));
	nl("lstat ld", "ld");
	ok("linkat ld x SYMLINK_FOLLOW (a dir)", lnat(AT_FDCWD, "ld", AT_FDCWD, "x", AT_SYMLINK_FOLLOW));
	ok("mkfifo p", mkfifo("p", 0644));
	ok("link p p2 (a fifo)", link("p", "p2"));
	nl("lstat p", "p");

	fd = okfd("open l2", open("l2", O_RDONLY));
	ok("linkat fd \"\" e1 EMPTY_PATH", lnat(fd, "", AT_FDCWD, "e1", AT_EMPTY_PATH));
	show("stat e1", "e1");
	ok("linkat fd \"\" e1 EMPTY_PATH|SYMLINK_FOLLOW", lnat(fd, "", AT_FDCWD, "e1", AT_EMPTY_PATH | AT_SYMLINK_FOLLOW));
	ok("linkat fd \"\" e1 (no EMPTY_PATH)", lnat(fd, "", AT_FDCWD, "e1", 0));
	ok("linkat AT_FDCWD \"\" e1 EMPTY_PATH", lnat(AT_FDCWD, "", AT_FDCWD, "e1", AT_EMPTY_PATH));
	ok("linkat AT_FDCWD \"\" e4 EMPTY_PATH (the cwd, a dir)", lnat(AT_FDCWD, "", AT_FDCWD, "e4", AT_EMPTY_PATH));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		ok("child: linkat inherited fd \"\" e5 EMPTY_PATH", lnat(fd, "", AT_FDCWD, "e5", AT_EMPTY_PATH));
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	show("stat e5", "e5");
	dfd = okfd("open d", open("d", O_RDONLY | O_DIRECTORY));
	ok("linkat dfd \"\" e2 EMPTY_PATH (a dir)", lnat(dfd, "", AT_FDCWD, "e2", AT_EMPTY_PATH));
	ok("linkat dfd \"\" e1 EMPTY_PATH (a dir, e1 exists)", lnat(dfd, "", AT_FDCWD, "e1", AT_EMPTY_PATH));
	ok("linkat dfd file e3 EMPTY_PATH (a name: ordinary link)", lnat(dfd, "file", AT_FDCWD, "e3", AT_EMPTY_PATH));
	nl("stat e3", "e3");
	close(dfd);
	nl("stat l2 (unchanged)", "l2");
	close(fd);
	return probe_done();
}
