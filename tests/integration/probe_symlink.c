/* probe_symlink — symlink, symlinkat, readlink, readlinkat, following links
 * (relative, absolute within the scratch dir, through directories, `..`
 * after a link), loops and the 40-hop limit. */
#include "probe.h"

static void rl(const char *step, long nr, int dirfd, const char *path, size_t bufsiz)
{
	char buf[PATH_MAX];
	long n = nr == SYS_readlink ? syscall(nr, path, buf, bufsiz)
				    : syscall(nr, dirfd, path, buf, bufsiz);
	if (n < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	buf[n] = 0;
	if (buf[0] == '/') /* absolute: its length depends on the scratch path */
		printf("%s: \"%s\"\n", step, relpath(buf));
	else
		printf("%s: %ld \"%s\"\n", step, n, buf);
}

int main(void)
{
	char abs[PATH_MAX + 8], name[16], next[16];
	probe_init();

	ok("mkfile f", mkfile("f", "f-data"));
	ok("mkdir d", mkdir("d", 0755));
	ok("mkdir d/sub", mkdir("d/sub", 0755));
	ok("mkfile d/g", mkfile("d/g", "g-data"));
	int dfd = okfd("open d O_DIRECTORY", open("d", O_RDONLY | O_DIRECTORY));

	/* relative links */
	ok("symlink f rel", syscall(SYS_symlink, "f", "rel"));
	show("lstat rel", "rel");
	rl("readlink rel", SYS_readlink, 0, "rel", sizeof abs);
	cat("cat rel", AT_FDCWD, "rel");
	ok("symlink d/g deep", syscall(SYS_symlink, "d/g", "deep"));
	cat("cat deep", AT_FDCWD, "deep");
	ok("symlink ../f d/up", syscall(SYS_symlink, "../f", "d/up"));
	cat("cat d/up", AT_FDCWD, "d/up");
	rl("readlinkat (dfd) up", SYS_readlinkat, dfd, "up", sizeof abs);
	ok("symlinkat g (dfd) lg", syscall(SYS_symlinkat, "g", dfd, "lg"));
	cat("cat d/lg", AT_FDCWD, "d/lg");
	cat("cat (dfd) lg", dfd, "lg");

	/* directory links and `..` after a link (physical parent) */
	ok("symlink d ld", symlink("d", "ld"));
	ok("symlink d/sub ls", symlink("d/sub", "ls"));
	cat("cat ld/g", AT_FDCWD, "ld/g");
	cat("cat ld/../f", AT_FDCWD, "ld/../f");
	cat("cat ls/../g", AT_FDCWD, "ls/../g");
	show("lstat ld/", "ld/");
	rl("readlink ld/", SYS_readlink, 0, "ld/", sizeof abs);

	/* absolute links into the scratch dir */
	snprintf(abs, sizeof abs, "%s/f", strcmp(probe_start, "/") ? probe_start : "");
	ok("symlink $START/f abs", symlink(abs, "abs"));
	rl("readlink abs", SYS_readlink, 0, "abs", sizeof abs);
	cat("cat abs", AT_FDCWD, "abs");
	snprintf(abs, sizeof abs, "%s/d", strcmp(probe_start, "/") ? probe_start : "");
	ok("symlink $START/d absd", symlink(abs, "absd"));
	cat("cat absd/g", AT_FDCWD, "absd/g");
	cat("cat absd/up", AT_FDCWD, "absd/up");

	/* readlink edge cases */
	rl("readlink f (not a link)", SYS_readlink, 0, "f", sizeof abs);
	rl("readlink d (not a link)", SYS_readlink, 0, "d", sizeof abs);
	rl("readlink missing", SYS_readlink, 0, "missing", sizeof abs);
	rl("readlink deep bufsiz 2", SYS_readlink, 0, "deep", 2);
	rl("readlink deep bufsiz 0", SYS_readlink, 0, "deep", 0);
	rl("readlinkat (dfd) missing", SYS_readlinkat, dfd, "missing", sizeof abs);
	rl("readlinkat (dfd) g", SYS_readlinkat, dfd, "g", sizeof abs);
	int lfd = okfd("open deep O_PATH|O_NOFOLLOW", open("deep", O_PATH | O_NOFOLLOW));
	rl("readlinkat lfd \"\"", SYS_readlinkat, lfd, "", sizeof abs);
	rl("readlinkat dfd \"\"", SYS_readlinkat, dfd, "", sizeof abs);
	close(lfd);

	/* creation errors */
	ok("symlink x rel (exists)", symlink("x", "rel"));
	ok("symlink x f (exists)", symlink("x", "f"));
	ok("symlink \"\" empty", symlink("", "empty"));
	ok("symlink x missing/l", symlink("x", "missing/l"));
	ok("symlink x f/l", symlink("x", "f/l"));

	/* dangling, trailing slash */
	ok("symlink nowhere dang", symlink("nowhere", "dang"));
	show("stat dang (lstat)", "dang");
	cat("cat dang", AT_FDCWD, "dang");
	ok("symlink f/ tslash", symlink("f/", "tslash"));
	cat("cat tslash", AT_FDCWD, "tslash");

	/* loops */
	ok("symlink loop2 loop1", symlink("loop2", "loop1"));
	ok("symlink loop1 loop2", symlink("loop1", "loop2"));
	ok("symlink self self", symlink("self", "self"));
	cat("cat loop1", AT_FDCWD, "loop1");
	cat("cat self", AT_FDCWD, "self");
	cat("cat loop1/x", AT_FDCWD, "loop1/x");
	show("lstat loop1", "loop1");
	struct stat st;
	ok("stat loop1", stat("loop1", &st));

	/* a chain a0 -> a1 -> ... -> a40 -> f: 41 links from a0, 40 from a1 */
	for (int i = 0; i <= 40; i++) {
		snprintf(name, sizeof name, "a%d", i);
		if (i == 40)
			snprintf(next, sizeof next, "f");
		else
			snprintf(next, sizeof next, "a%d", i + 1);
		if (symlink(next, name) < 0)
			printf("symlink %s: %s\n", name, ename(errno));
	}
	cat("cat a1 (40 links)", AT_FDCWD, "a1");
	cat("cat a0 (41 links)", AT_FDCWD, "a0");

	close(dfd);
	return probe_done();
}
