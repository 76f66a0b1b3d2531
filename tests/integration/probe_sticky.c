/* probe_sticky — the sticky bit on a directory: mode bits, and that only
 * the owner of an entry, the owner of the directory (or a capable caller)
 * may remove or rename it.
 *
 * The interesting half needs an entry owned by another uid, and only root
 * can make one.  run.sh runs this probe as uid 65534 natively when it is
 * root, and moat's sandbox is uid 65534 with no capabilities, so normally
 * both sides are unprivileged: they print the same "skipped" line for that
 * half and compare only what one uid can show (a 1777 directory of one's
 * own, the system's sticky /tmp and /dev/shm).  Run as root natively (and
 * with --uid 0 under moat, where setresuid is refused) the other-uid half
 * runs with uids 40001..40003 in forked children. */
#include "probe.h"
#include <sys/wait.h>

static void as(uid_t uid, const char *step, int (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0) {
			printf("%s: setresuid %s\n", step, ename(errno));
			_exit(1);
		}
		long r = fn();
		ok(step, r);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
}

static int mk_a(void) { return mkfile("st/a", "a") < 0 ? -1 : mkdir("st/adir", 0755); }
static int unlink_a(void) { return unlink("st/a"); }
static int rename_a(void) { return rename("st/a", "st/a2"); }
static int rmdir_adir(void) { return rmdir("st/adir"); }
static int over_a(void) { return mkfile("st/b", "b") < 0 ? -1 : rename("st/b", "st/a"); }
static int unlink_b(void) { return unlink("st/b"); }
static int unlink_a2(void) { return unlink("st/a2"); }
static int write_a(void)
{
	int fd = open("st/a", O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Mode and owner only: a system directory's nlink is the host's business. */
static void sysdir(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		printf("stat %s: %s\n", path, ename(errno));
	else
		printf("stat %s: %c%04o owner %s\n", path, ftype(st.st_mode),
		       (unsigned)(st.st_mode & 07777), st.st_uid == 0 ? "root" : "not root");
}

int main(void)
{
	probe_init();
	sysdir("/tmp");
	sysdir("/dev/shm");

	/* what one uid sees */
	ok("mkdir st 01777", mkdir("st", 01777));
	show("stat st (umask 022)", "st");
	ok("chmod st 01777", chmod("st", 01777));
	show("stat st", "st");
	ok("mkfile st/mine", mkfile("st/mine", "m"));
	ok("mkdir st/mydir", mkdir("st/mydir", 0755));
	ok("rename st/mine st/mine2", rename("st/mine", "st/mine2"));
	ok("rename st/mine2 out (leaving)", rename("st/mine2", "out"));
	ok("rename out st/back (entering)", rename("out", "st/back"));
	ok("unlink st/back", unlink("st/back"));
	ok("rmdir st/mydir", rmdir("st/mydir"));
	ok("chmod st 0777 (sticky off)", chmod("st", 0777));
	show("stat st", "st");
	ok("chmod st 01777", chmod("st", 01777));
	ok("mkdir plain 0755", mkdir("plain", 0755));
	ok("chmod plain +t (as owner)", chmod("plain", 01755));
	show("stat plain", "plain");
	ok("mkfile f", mkfile("f", ""));
	ok("chmod f 01644 (sticky on a file)", chmod("f", 01644));
	show("stat f", "f");

	if (geteuid() != 0) {
		printf("other-uid part: skipped (needs root for a second uid)\n");
		return probe_done();
	}
	/* root: st belongs to uid 40003; 40001 makes an entry, 40002 may not
	 * touch it, 40003 (the directory's owner) may */
	ok("chown st 40003", chown("st", 40003, 40003));
	as(40001, "uid A: create st/a and st/adir", mk_a);
	as(40002, "uid B: unlink st/a", unlink_a);
	as(40002, "uid B: rename st/a", rename_a);
	as(40002, "uid B: rmdir st/adir", rmdir_adir);
	as(40002, "uid B: rename st/b over st/a", over_a);
	as(40002, "uid B: O_CREAT of st/a (protected_regular may refuse)", write_a);
	as(40002, "uid B: unlink st/b (its own)", unlink_b);
	as(40003, "dir owner: rename st/a", rename_a);
	as(40003, "dir owner: rmdir st/adir", rmdir_adir);
	as(40001, "uid A: unlink st/a2 (its own, renamed)", unlink_a2);
	return probe_done();
}
