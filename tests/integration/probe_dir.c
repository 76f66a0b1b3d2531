/* probe_dir — mkdir, mkdirat, rmdir, unlink, unlinkat (the caller is not root). */
#include "probe.h"

int main(void)
{
	struct stat st;
	char buf[16];
	probe_init();

	/* mkdir */
	ok("mkdir d 0755", syscall(SYS_mkdir, "d", 0755));
	show("stat d", "d");
	ok("mkdir d (again)", syscall(SYS_mkdir, "d", 0755));
	ok("mkfile f", mkfile("f", "data"));
	ok("mkdir f (a file)", syscall(SYS_mkdir, "f", 0755));
	ok("mkdir missing/x", syscall(SYS_mkdir, "missing/x", 0755));
	ok("mkdir f/x", syscall(SYS_mkdir, "f/x", 0755));
	ok("mkdir \"\"", syscall(SYS_mkdir, "", 0755));
	ok("mkdir d2/ (trailing slash)", syscall(SYS_mkdir, "d2/", 0755));
	show("stat d2", "d2");
	ok("mkdir m 0777 (umask 022)", syscall(SYS_mkdir, "m", 0777));
	show("stat m", "m");
	ok("mkdir sticky 01777", syscall(SYS_mkdir, "sticky", 01777));
	show("stat sticky", "sticky");
	ok("symlink nowhere dang", symlink("nowhere", "dang"));
	ok("mkdir dang (dangling link)", syscall(SYS_mkdir, "dang", 0755));
	show("lstat nowhere", "nowhere");
	ok("mkdir ro 0555", syscall(SYS_mkdir, "ro", 0555));
	ok("mkdir ro/x", syscall(SYS_mkdir, "ro/x", 0755));

	/* mkdirat */
	int dfd = okfd("open d O_DIRECTORY", open("d", O_RDONLY | O_DIRECTORY));
	int ffd = okfd("open f", open("f", O_RDONLY));
	ok("mkdirat (dfd) sub 0700", syscall(SYS_mkdirat, dfd, "sub", 0700));
	show("stat d/sub", "d/sub");
	show("stat d (nlink 3)", "d");
	ok("mkdirat (dfd) sub (again)", syscall(SYS_mkdirat, dfd, "sub", 0700));
	ok("mkdirat (dfd) ../top", syscall(SYS_mkdirat, dfd, "../top", 0755));
	show("stat top", "top");
	ok("mkdirat (ffd) x", syscall(SYS_mkdirat, ffd, "x", 0755));
	ok("mkdirat closed fd", syscall(SYS_mkdirat, 999, "x", 0755));

	/* rmdir */
	ok("mkfile d/sub/.hidden", mkfile("d/sub/.hidden", ""));
	ok("rmdir d/sub (a hidden file)", syscall(SYS_rmdir, "d/sub"));
	ok("rmdir d (a subdir)", syscall(SYS_rmdir, "d"));
	ok("rmdir missing", syscall(SYS_rmdir, "missing"));
	ok("rmdir f", syscall(SYS_rmdir, "f"));
	ok("rmdir d2/.", syscall(SYS_rmdir, "d2/."));
	ok("rmdir d/sub/..", syscall(SYS_rmdir, "d/sub/.."));
	ok("symlink d2 ld2", symlink("d2", "ld2"));
	ok("rmdir ld2 (link to dir)", syscall(SYS_rmdir, "ld2"));
	ok("rmdir d2/ (trailing slash)", syscall(SYS_rmdir, "d2/"));
	show("stat d2", "d2");
	ok("rmdir d2 (again)", syscall(SYS_rmdir, "d2"));

	/* unlink */
	ok("unlink d", syscall(SYS_unlink, "d"));
	ok("unlink f/", syscall(SYS_unlink, "f/"));
	ok("unlink missing", syscall(SYS_unlink, "missing"));
	ok("unlink ld2 (link to d2, already removed)", syscall(SYS_unlink, "ld2"));
	show("lstat ld2", "ld2");
	ok("symlink d ld", symlink("d", "ld"));
	ok("unlink ld (link to dir)", syscall(SYS_unlink, "ld"));
	show("stat d (still there)", "d");
	ok("mkfile d/sub/keep", mkfile("d/sub/keep", "kept"));
	ok("chmod d/sub 0500", chmod("d/sub", 0500));
	ok("unlink d/sub/keep (dir 0500)", syscall(SYS_unlink, "d/sub/keep"));
	ok("chmod d/sub 0700", chmod("d/sub", 0700));

	/* unlink of an open file */
	int fd = okfd("open f", open("f", O_RDONLY));
	ok("unlink f", syscall(SYS_unlink, "f"));
	ok("unlink f (again)", syscall(SYS_unlink, "f"));
	ok("read open unlinked f", read(fd, buf, 4));
	pst("fstat open unlinked f", fstat(fd, &st), &st);
	close(fd);

	/* unlinkat */
	ok("mkfile d/file", mkfile("d/file", ""));
	ok("unlinkat (dfd) file", syscall(SYS_unlinkat, dfd, "file", 0));
	ok("unlinkat (dfd) file (again)", syscall(SYS_unlinkat, dfd, "file", 0));
	ok("unlinkat (dfd) sub 0", syscall(SYS_unlinkat, dfd, "sub", 0));
	ok("unlinkat (dfd) sub REMOVEDIR", syscall(SYS_unlinkat, dfd, "sub", AT_REMOVEDIR));
	ok("unlinkat (dfd) sub/keep", syscall(SYS_unlinkat, dfd, "sub/keep", 0));
	ok("unlinkat (dfd) sub/.hidden", syscall(SYS_unlinkat, dfd, "sub/.hidden", 0));
	ok("unlinkat (dfd) sub REMOVEDIR", syscall(SYS_unlinkat, dfd, "sub", AT_REMOVEDIR));
	show("stat d (nlink 2)", "d");
	ok("mkfile g", mkfile("g", ""));
	ok("unlinkat g REMOVEDIR", syscall(SYS_unlinkat, AT_FDCWD, "g", AT_REMOVEDIR));
	ok("unlinkat g bad flag", syscall(SYS_unlinkat, AT_FDCWD, "g", 0x40000000));
	ok("unlinkat (ffd) g", syscall(SYS_unlinkat, ffd, "g", 0));
	ok("unlinkat g", syscall(SYS_unlinkat, AT_FDCWD, "g", 0));
	ok("unlinkat (dfd) ../m REMOVEDIR", syscall(SYS_unlinkat, dfd, "../m", AT_REMOVEDIR));
	show("stat m", "m");
	ok("unlinkat (dfd) \".\" REMOVEDIR", syscall(SYS_unlinkat, dfd, ".", AT_REMOVEDIR));
	close(dfd);
	ok("rmdir d (open fd closed)", syscall(SYS_rmdir, "d"));
	show("stat d", "d");
	close(ffd);
	return probe_done();
}
