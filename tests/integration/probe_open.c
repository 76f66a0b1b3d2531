/* probe_open — open, openat, openat2, creat: creation, flags, errors. */
#include "probe.h"
#include <linux/openat2.h>

static long o2(int dirfd, const char *path, unsigned long long flags,
	       unsigned long long mode, unsigned long long resolve)
{
	struct open_how how = {.flags = flags, .mode = mode, .resolve = resolve};
	return syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

static void rd(const char *step, int fd)
{
	char buf[64];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	buf[n] = 0;
	printf("%s: \"%s\"\n", step, buf);
}

int main(void)
{
	struct stat st;
	int fd;
	probe_init();

	/* creation and O_EXCL */
	fd = okfd("open f O_WRONLY|O_CREAT 0640", syscall(SYS_open, "f", O_WRONLY | O_CREAT, 0640));
	ok("write hello", write(fd, "hello", 5));
	close(fd);
	show("stat f", "f");
	okfd("open f O_CREAT|O_EXCL", syscall(SYS_open, "f", O_WRONLY | O_CREAT | O_EXCL, 0644));
	fd = okfd("openat f O_RDONLY", syscall(SYS_openat, AT_FDCWD, "f", O_RDONLY));
	rd("read f", fd);
	ok("write on O_RDONLY fd", write(fd, "x", 1));
	close(fd);
	fd = okfd("open m O_CREAT 0777 (umask 022)", syscall(SYS_open, "m", O_RDONLY | O_CREAT, 0777));
	close(fd);
	show("stat m", "m");

	/* errors on the path */
	okfd("open missing", syscall(SYS_open, "missing", O_RDONLY));
	okfd("open missing/x O_CREAT", syscall(SYS_open, "missing/x", O_RDWR | O_CREAT, 0644));
	okfd("open f/x", syscall(SYS_open, "f/x", O_RDONLY));
	okfd("open \"\"", syscall(SYS_open, "", O_RDONLY));
	char longname[300];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	okfd("open 299-byte name O_CREAT", syscall(SYS_open, longname, O_RDWR | O_CREAT, 0644));

	/* O_APPEND, O_TRUNC */
	fd = okfd("open f O_WRONLY|O_APPEND", syscall(SYS_open, "f", O_WRONLY | O_APPEND));
	ok("lseek 0 SET", lseek(fd, 0, SEEK_SET));
	ok("write ' world'", write(fd, " world", 6));
	close(fd);
	cat("cat f", AT_FDCWD, "f");
	fd = okfd("open f O_RDWR|O_TRUNC", syscall(SYS_open, "f", O_RDWR | O_TRUNC));
	pst("fstat after O_TRUNC", fstat(fd, &st), &st);
	close(fd);

	/* directories */
	ok("mkdir d", mkdir("d", 0755));
	okfd("open f O_DIRECTORY", syscall(SYS_open, "f", O_RDONLY | O_DIRECTORY));
	fd = okfd("open d O_DIRECTORY", syscall(SYS_open, "d", O_RDONLY | O_DIRECTORY));
	close(fd);
	okfd("open d O_WRONLY", syscall(SYS_open, "d", O_WRONLY));
	okfd("open d O_RDWR", syscall(SYS_open, "d", O_RDWR));
	okfd("open d O_CREAT", syscall(SYS_open, "d", O_RDONLY | O_CREAT, 0644));
	okfd("open new/ O_CREAT", syscall(SYS_open, "new/", O_RDWR | O_CREAT, 0644));
	okfd("open f/ (trailing slash)", syscall(SYS_open, "f/", O_RDONLY));

	/* symlinks, O_NOFOLLOW, O_PATH */
	ok("symlink f lnk", symlink("f", "lnk"));
	ok("symlink nowhere dang", symlink("nowhere", "dang"));
	okfd("open lnk O_NOFOLLOW", syscall(SYS_open, "lnk", O_RDONLY | O_NOFOLLOW));
	fd = okfd("open lnk O_PATH|O_NOFOLLOW", syscall(SYS_open, "lnk", O_PATH | O_NOFOLLOW));
	pst("fstat O_PATH|O_NOFOLLOW lnk", fstat(fd, &st), &st);
	close(fd);
	fd = okfd("open lnk O_PATH", syscall(SYS_open, "lnk", O_PATH));
	pst("fstat O_PATH lnk", fstat(fd, &st), &st);
	rd("read on O_PATH fd", fd);
	close(fd);
	okfd("open dang O_CREAT|O_EXCL", syscall(SYS_open, "dang", O_WRONLY | O_CREAT | O_EXCL, 0644));
	okfd("open dang O_RDONLY", syscall(SYS_open, "dang", O_RDONLY));
	fd = okfd("open dang O_CREAT (creates target)", syscall(SYS_open, "dang", O_WRONLY | O_CREAT, 0600));
	close(fd);
	show("stat nowhere", "nowhere");

	/* permissions (the caller is not root) */
	ok("chmod f 0444", chmod("f", 0444));
	okfd("open 0444 file O_RDWR", syscall(SYS_open, "f", O_RDWR));
	ok("chmod f 0", chmod("f", 0));
	okfd("open 0000 file O_RDONLY", syscall(SYS_open, "f", O_RDONLY));
	fd = okfd("open 0000 file O_PATH", syscall(SYS_open, "f", O_PATH));
	rd("read on O_PATH fd of 0000 file", fd);
	close(fd);
	ok("chmod f 0644", chmod("f", 0644));
	ok("mkdir nr 0311", mkdir("nr", 0311));
	okfd("open 0311 dir O_RDONLY", syscall(SYS_open, "nr", O_RDONLY | O_DIRECTORY));
	fd = okfd("open 0311 dir O_PATH", syscall(SYS_open, "nr", O_PATH | O_DIRECTORY));
	ok("getdents64 on O_PATH fd of 0311 dir", syscall(SYS_getdents64, fd, longname, sizeof longname));
	close(fd);

	/* creat */
	fd = okfd("creat c 0600", syscall(SYS_creat, "c", 0600));
	ok("write c", write(fd, "abc", 3));
	rd("read on creat fd", fd);
	close(fd);
	show("stat c", "c");
	fd = okfd("creat c again (truncates)", syscall(SYS_creat, "c", 0644));
	close(fd);
	show("stat c", "c");
	okfd("creat d (a dir)", syscall(SYS_creat, "d", 0644));

	/* openat2 */
	ok("mkfile d/inner", mkfile("d/inner", "inner"));
	int dfd = okfd("open d O_PATH", syscall(SYS_open, "d", O_PATH | O_DIRECTORY));
	fd = okfd("openat2 d/../f BENEATH", o2(AT_FDCWD, "d/../f", O_RDONLY, 0, RESOLVE_BENEATH));
	close(fd);
	okfd("openat2 ../f BENEATH", o2(AT_FDCWD, "../f", O_RDONLY, 0, RESOLVE_BENEATH));
	okfd("openat2 (dfd) ../f BENEATH", o2(dfd, "../f", O_RDONLY, 0, RESOLVE_BENEATH));
	ok("mkdir d/s", mkdir("d/s", 0755));
	okfd("openat2 (dfd) s/../.. BENEATH", o2(dfd, "s/../..", O_RDONLY, 0, RESOLVE_BENEATH));
	fd = okfd("openat2 (dfd) s/.. BENEATH", o2(dfd, "s/..", O_RDONLY, 0, RESOLVE_BENEATH));
	close(fd);
	okfd("openat2 /absolute BENEATH", o2(dfd, "/inner", O_RDONLY, 0, RESOLVE_BENEATH));
	fd = okfd("openat2 (dfd) ../../inner IN_ROOT", o2(dfd, "../../inner", O_RDONLY, 0, RESOLVE_IN_ROOT));
	rd("read it", fd);
	close(fd);
	fd = okfd("openat2 (dfd) /inner IN_ROOT", o2(dfd, "/inner", O_RDONLY, 0, RESOLVE_IN_ROOT));
	rd("read it", fd);
	close(fd);
	okfd("openat2 lnk NO_SYMLINKS", o2(AT_FDCWD, "lnk", O_RDONLY, 0, RESOLVE_NO_SYMLINKS));
	fd = okfd("openat2 lnk (no resolve flags)", o2(AT_FDCWD, "lnk", O_RDONLY, 0, 0));
	close(fd);
	fd = okfd("openat2 (dfd) n O_CREAT 0600", o2(dfd, "n", O_WRONLY | O_CREAT | O_EXCL, 0600, 0));
	close(fd);
	show("stat d/n", "d/n");
	okfd("openat2 mode without O_CREAT", o2(AT_FDCWD, "f", O_RDONLY, 0644, 0));
	okfd("openat2 unknown resolve bit", o2(AT_FDCWD, "f", O_RDONLY, 0, 1ULL << 40));
	okfd("openat2 unknown flag bit", o2(AT_FDCWD, "f", O_RDONLY | (1ULL << 40), 0, 0));
	struct open_how how = {.flags = O_RDONLY};
	okfd("openat2 size 8", syscall(SYS_openat2, AT_FDCWD, "f", &how, 8));
	close(dfd);
	return probe_done();
}
