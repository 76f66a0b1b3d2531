/* probe_xdev — rename and link across mounts: EXDEV, and which error wins
 * when a call is wrong in more than one way.
 *
 * The second mount is /dev/shm.  Natively the probe runs in a scratch
 * directory with no mount of its own to cross into, and /tmp is not one
 * either (the scratch dir is usually below it); /dev/shm is a mount of its
 * own on every Linux system (a tmpfs), writable by everyone (1777).  Under
 * moat the cwd is /tmp or /workspace, each a mount of the virtual table,
 * and /dev/shm is a third one.  So the same calls cross a mount boundary
 * on both sides and the expected output is the same.  (/tmp <-> /workspace
 * cannot be used: natively there is no /workspace.)  When /dev/shm cannot
 * take a directory, the probe says so in one line and stops: the diff then
 * shows which side lacks the mount. */
#include "probe.h"
#include <dirent.h>

static char shm[PATH_MAX];         /* our directory in /dev/shm */
static char sp[PATH_MAX + 64];     /* scratch for shm paths */

static const char *S(const char *name)
{
	snprintf(sp, sizeof sp, "%s/%s", shm, name);
	return sp;
}

static long rn2(const char *a, const char *b, unsigned fl)
{
	return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, fl);
}

static void cleanup(void)
{
	DIR *d = opendir(shm);
	struct dirent *de;
	char p[PATH_MAX * 2];
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", shm, de->d_name);
		if (unlink(p) < 0)
			rmdir(p);
	}
	if (d)
		closedir(d);
	rmdir(shm);
}

int main(void)
{
	char buf[64];
	probe_init();
	snprintf(shm, sizeof shm, "/dev/shm/moat-probe-xdev-%d", (int)getpid());
	if (mkdir(shm, 0755) < 0) {
		printf("second mount: none (mkdir in /dev/shm: %s)\n", ename(errno));
		return probe_done();
	}
	printf("second mount: /dev/shm\n");

	ok("mkfile f", mkfile("f", "F"));
	ok("mkdir d", mkdir("d", 0755));
	ok("mkfile $SHM/s", mkfile(S("s"), "S"));
	ok("mkdir $SHM/sd", mkdir(S("sd"), 0755));
	ok("symlink $SHM lshm", symlink(shm, "lshm"));
	ok("symlink f lf", symlink("f", "lf"));

	/* rename */
	ok("rename f $SHM/f", rename("f", S("f")));
	ok("rename $SHM/s s", rename(S("s"), "s"));
	ok("rename d $SHM/d", rename("d", S("d")));
	ok("rename f lshm/f (through a link)", rename("f", "lshm/f"));
	ok("rename f $SHM/s (onto a file)", rename("f", S("s")));
	ok("rename f $SHM/sd (file onto dir)", rename("f", S("sd")));
	ok("rename d $SHM/s (dir onto file)", rename("d", S("s")));
	ok("rename missing $SHM/x", rename("missing", S("x")));
	ok("rename f/ $SHM/x (file with slash)", rename("f/", S("x")));
	ok("rename lf $SHM/lf (a symlink)", rename("lf", S("lf")));
	ok("NOREPLACE f $SHM/new", rn2("f", S("new"), RENAME_NOREPLACE));
	ok("NOREPLACE f $SHM/s (exists)", rn2("f", S("s"), RENAME_NOREPLACE));
	ok("EXCHANGE f $SHM/s", rn2("f", S("s"), RENAME_EXCHANGE));
	ok("EXCHANGE f $SHM/missing", rn2("f", S("missing"), RENAME_EXCHANGE));
	int sfd = okfd("open $SHM O_DIRECTORY", open(shm, O_RDONLY | O_DIRECTORY));
	ok("renameat (sfd) s AT_FDCWD s", syscall(SYS_renameat, sfd, "s", AT_FDCWD, "s"));
	ok("renameat (sfd) s (sfd) s2 (same mount)", syscall(SYS_renameat, sfd, "s", sfd, "s2"));
	ok("renameat (sfd) s2 (sfd) s (back)", syscall(SYS_renameat, sfd, "s2", sfd, "s"));
	cat("cat f (still here)", AT_FDCWD, "f");
	cat("cat $SHM/s (still there)", AT_FDCWD, S("s"));
	show("stat d (still here)", "d");

	/* link */
	ok("link f $SHM/f", link("f", S("f")));
	ok("link $SHM/s s", link(S("s"), "s"));
	ok("link missing $SHM/x", link("missing", S("x")));
	ok("link f $SHM/s (exists)", link("f", S("s")));
	ok("linkat lf $SHM/x SYMLINK_FOLLOW", syscall(SYS_linkat, AT_FDCWD, "lf", AT_FDCWD, S("x"),
						      AT_SYMLINK_FOLLOW));
	ok("linkat lf $SHM/x (the link itself)", syscall(SYS_linkat, AT_FDCWD, "lf", AT_FDCWD, S("x"), 0));
	ok("linkat (sfd) s (sfd) s3 (same mount)", syscall(SYS_linkat, sfd, "s", sfd, "s3", 0));
	show("stat f (nlink 1)", "f");

	/* an O_TMPFILE file gets a name only in its own mount */
	int tfd = okfd("open $SHM O_TMPFILE|O_RDWR", open(shm, O_TMPFILE | O_RDWR, 0600));
	if (tfd >= 0) {
		ok("write tmp", write(tfd, "tmp", 3));
		snprintf(buf, sizeof buf, "/proc/self/fd/%d", tfd);
		ok("linkat /proc/self/fd/N t FOLLOW (other mount)",
		   syscall(SYS_linkat, AT_FDCWD, buf, AT_FDCWD, "t", AT_SYMLINK_FOLLOW));
		ok("linkat /proc/self/fd/N $SHM/t FOLLOW (its mount)",
		   syscall(SYS_linkat, AT_FDCWD, buf, AT_FDCWD, S("t"), AT_SYMLINK_FOLLOW));
		cat("cat $SHM/t", AT_FDCWD, S("t"));
		close(tfd);
	}
	close(sfd);
	cleanup();
	return probe_done();
}
