/* probe_attr — chmod/fchmod/fchmodat/fchmodat2, chown/fchown/lchown/fchownat,
 * truncate/ftruncate (the caller is not root). */
#include "probe.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

int main(void)
{
	struct stat st;
	char buf[16];
	probe_init();
	unsigned uid = geteuid(), gid = getegid();

	ok("mkfile f", mkfile("f", "0123456789"));
	ok("mkdir d", mkdir("d", 0755));
	ok("symlink f lf", symlink("f", "lf"));

	/* chmod family */
	ok("chmod f 0600", syscall(SYS_chmod, "f", 0600));
	show("stat f", "f");
	ok("chmod f 04755", syscall(SYS_chmod, "f", 04755));
	show("stat f after 04755", "f");
	ok("chmod f 07777", syscall(SYS_chmod, "f", 07777));
	show("stat f after 07777", "f");
	ok("chmod f 0100644 (type bits ignored)", syscall(SYS_chmod, "f", 0100644));
	show("stat f", "f");
	ok("chmod d 0700", syscall(SYS_chmod, "d", 0700));
	show("stat d", "d");
	ok("chmod lf 0640 (follows)", syscall(SYS_chmod, "lf", 0640));
	show("stat f", "f");
	show("lstat lf", "lf");
	ok("chmod missing", syscall(SYS_chmod, "missing", 0644));
	ok("chmod f/x", syscall(SYS_chmod, "f/x", 0644));
	int fd = okfd("open f O_RDONLY", open("f", O_RDONLY));
	ok("fchmod fd 0604", syscall(SYS_fchmod, fd, 0604));
	show("stat f", "f");
	int pfd = okfd("open f O_PATH", open("f", O_PATH));
	ok("fchmod O_PATH fd", syscall(SYS_fchmod, pfd, 0644));
	int dfd = okfd("open d", open("d", O_RDONLY | O_DIRECTORY));
	ok("mkfile d/g", mkfile("d/g", ""));
	ok("fchmodat (dfd) g 0611", syscall(SYS_fchmodat, dfd, "g", 0611));
	show("stat d/g", "d/g");
	ok("fchmodat2 lf 0644 0", syscall(SYS_fchmodat2, AT_FDCWD, "lf", 0644, 0));
	show("stat f", "f");
	ok("fchmodat2 lf NOFOLLOW", syscall(SYS_fchmodat2, AT_FDCWD, "lf", 0600, AT_SYMLINK_NOFOLLOW));
	ok("fchmodat2 fd \"\" EMPTY_PATH 0640", syscall(SYS_fchmodat2, fd, "", 0640, AT_EMPTY_PATH));
	show("stat f", "f");
	ok("fchmodat2 bad flag", syscall(SYS_fchmodat2, AT_FDCWD, "f", 0644, 0x40000000));

	/* chown family: to ourselves is allowed, to anyone else is not */
	ok("chmod f 06755", chmod("f", 06755));
	ok("chown f self self", syscall(SYS_chown, "f", uid, gid));
	show("stat f (suid/sgid after chown)", "f");
	ok("chown f -1 -1", syscall(SYS_chown, "f", -1, -1));
	ok("chown f 0 -1", syscall(SYS_chown, "f", 0, -1));
	ok("chown f -1 0", syscall(SYS_chown, "f", -1, 0));
	ok("chown f uid+1 gid", syscall(SYS_chown, "f", uid + 1, gid));
	ok("chown missing", syscall(SYS_chown, "missing", uid, gid));
	ok("lchown lf self self", syscall(SYS_lchown, "lf", uid, gid));
	ok("lchown lf 0 0", syscall(SYS_lchown, "lf", 0, 0));
	ok("fchown fd self self", syscall(SYS_fchown, fd, uid, gid));
	ok("fchown fd 0 0", syscall(SYS_fchown, fd, 0, 0));
	ok("fchownat (dfd) g self self", syscall(SYS_fchownat, dfd, "g", uid, gid, 0));
	ok("fchownat lf self NOFOLLOW", syscall(SYS_fchownat, AT_FDCWD, "lf", uid, gid, AT_SYMLINK_NOFOLLOW));
	ok("fchownat pfd \"\" EMPTY_PATH self", syscall(SYS_fchownat, pfd, "", uid, gid, AT_EMPTY_PATH));
	ok("fchownat pfd \"\" EMPTY_PATH 0", syscall(SYS_fchownat, pfd, "", 0, -1, AT_EMPTY_PATH));
	ok("fchownat bad flag", syscall(SYS_fchownat, AT_FDCWD, "f", uid, gid, 0x40000000));
	show("stat f (owner unchanged)", "f");
	ok("chmod f 0644", chmod("f", 0644));

	/* truncate */
	ok("truncate f 100", syscall(SYS_truncate, "f", (off_t)100));
	show("stat f", "f");
	int rfd = open("f", O_RDONLY);
	ssize_t n = pread(rfd, buf, sizeof buf, 10);
	int zeros = 0;
	for (ssize_t i = 0; i < n; i++)
		zeros += buf[i] == 0;
	printf("pread 16 at 10: %zd bytes, %d zero\n", n, zeros);
	close(rfd);
	ok("truncate f 3", syscall(SYS_truncate, "f", (off_t)3));
	cat("cat f", AT_FDCWD, "f");
	ok("truncate lf 5 (follows)", syscall(SYS_truncate, "lf", (off_t)5));
	show("stat f", "f");
	ok("truncate f -1", syscall(SYS_truncate, "f", (off_t)-1));
	ok("truncate d", syscall(SYS_truncate, "d", (off_t)0));
	ok("truncate missing", syscall(SYS_truncate, "missing", (off_t)0));
	ok("chmod f 0444", chmod("f", 0444));
	ok("truncate f (0444)", syscall(SYS_truncate, "f", (off_t)0));
	ok("chmod f 0644", chmod("f", 0644));
	ok("ftruncate O_RDONLY fd", syscall(SYS_ftruncate, fd, (off_t)0));
	int wfd = okfd("open f O_WRONLY", open("f", O_WRONLY));
	ok("ftruncate wfd 7", syscall(SYS_ftruncate, wfd, (off_t)7));
	pst("fstat", fstat(wfd, &st), &st);
	close(wfd);
	close(fd);
	close(pfd);
	close(dfd);
	return probe_done();
}
