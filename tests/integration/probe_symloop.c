/* probe_symloop — symlink loops (ELOOP from every kind of call that
 * follows, the link itself for those that do not) and the 40-link limit of
 * one path walk: counted across all components of a path, across nested
 * link targets, relative and absolute (probe_symlink has the plain chain
 * of 40 and 41 links). */
#include "probe.h"
#include <sys/time.h>

static char path[4096];

/* "dot/" n times, then `tail`. */
static const char *dots(int n, const char *tail)
{
	path[0] = 0;
	for (int i = 0; i < n; i++)
		strcat(path, "dot/");
	strcat(path, tail);
	return path;
}

static void st_(const char *step, const char *p)
{
	struct stat st;
	if (stat(p, &st) < 0)
		printf("%s: %s\n", step, ename(errno));
	else
		printf("%s: %c\n", step, ftype(st.st_mode));
}

int main(void)
{
	char name[32], next[PATH_MAX + 32], buf[PATH_MAX];
	struct stat st;
	probe_init();
	ok("mkfile f", mkfile("f", "F"));
	ok("mkdir d", mkdir("d", 0755));
	ok("mkfile d/g", mkfile("d/g", "G"));

	/* loops */
	ok("symlink self self", symlink("self", "self"));
	ok("symlink b a", symlink("b", "a"));
	ok("symlink a b", symlink("a", "b"));
	ok("symlink y x", symlink("y", "x"));
	ok("symlink z y", symlink("z", "y"));
	ok("symlink x z", symlink("x", "z"));
	ok("symlink dl/sub dl (through itself)", symlink("dl/sub", "dl"));
	ok("symlink ../d/up d/up (back into d)", symlink("../d/up", "d/up"));

	okfd("open a", open("a", O_RDONLY));
	okfd("open x (3-cycle)", open("x", O_RDONLY));
	okfd("open dl", open("dl", O_RDONLY));
	okfd("open d/up", open("d/up", O_RDONLY));
	okfd("open a O_CREAT", open("a", O_WRONLY | O_CREAT, 0644));
	okfd("open a O_CREAT|O_EXCL", open("a", O_WRONLY | O_CREAT | O_EXCL, 0644));
	okfd("open a O_NOFOLLOW", open("a", O_RDONLY | O_NOFOLLOW));
	okfd("open a/x (loop mid-path)", open("a/x", O_RDONLY));
	okfd("open a/x O_CREAT", open("a/x", O_WRONLY | O_CREAT, 0644));
	st_("stat a", "a");
	st_("stat a/", "a/");
	show("lstat a", "a");
	show("lstat a/ (slash: follows)", "a/");
	ssize_t n = readlink("a", buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("readlink a: %s\n", n < 0 ? ename(errno) : buf);
	ok("readlink a/x", readlink("a/x", buf, sizeof buf));
	ok("access a F_OK", access("a", F_OK));
	ok("faccessat a AT_SYMLINK_NOFOLLOW", faccessat(AT_FDCWD, "a", F_OK, AT_SYMLINK_NOFOLLOW));
	ok("chdir a", chdir("a"));
	ok("truncate a", truncate("a", 0));
	ok("chmod a", chmod("a", 0644));
	ok("utimensat a", utimensat(AT_FDCWD, "a", NULL, 0));
	ok("utimensat a NOFOLLOW", utimensat(AT_FDCWD, "a", NULL, AT_SYMLINK_NOFOLLOW));
	ok("mkdir a", mkdir("a", 0755));
	ok("mkdir a/x", mkdir("a/x", 0755));
	ok("symlink f a (exists)", symlink("f", "a"));
	ok("rmdir a", rmdir("a"));
	ok("linkat a la FOLLOW", syscall(SYS_linkat, AT_FDCWD, "a", AT_FDCWD, "la", AT_SYMLINK_FOLLOW));
	ok("linkat a la (the link)", syscall(SYS_linkat, AT_FDCWD, "a", AT_FDCWD, "la", 0));
	show("lstat la", "la");
	ok("rename la lb (the link moves)", rename("la", "lb"));
	ok("rename f a/x", rename("f", "a/x"));
	ok("unlink a/x", unlink("a/x"));
	ok("unlink lb", unlink("lb"));
	ok("mknod a/p FIFO", mknod("a/p", S_IFIFO | 0644, 0));
	ok("statx a", syscall(SYS_statx, AT_FDCWD, "a", 0, 0x7ff, buf));

	/* the limit counts links over the whole walk: dot -> . */
	ok("symlink . dot", symlink(".", "dot"));
	cat("cat dot*40/f", AT_FDCWD, dots(40, "f"));
	cat("cat dot*41/f", AT_FDCWD, dots(41, "f"));
	okfd("open dot*40/new O_CREAT", open(dots(40, "new"), O_WRONLY | O_CREAT, 0644));
	okfd("open dot*41/new2 O_CREAT", open(dots(41, "new2"), O_WRONLY | O_CREAT, 0644));
	ok("mkdir dot*41/nd", mkdir(dots(41, "nd"), 0755));
	ok("unlink dot*41/new", unlink(dots(41, "new")));
	ok("unlink dot*40/new", unlink(dots(40, "new")));
	ok("lstat dot*40/dot (last not followed)", lstat(dots(40, "dot"), &st));
	ok("stat dot*40/dot", stat(dots(40, "dot"), &st));
	ok("chdir dot*40", chdir(dots(40, "")));
	cat("cat f (after chdir through 40 links)", AT_FDCWD, "f");
	ok("chdir dot*41", chdir(dots(41, "")));

	/* a chain of 20 directory links, then 20 (or 21) dots */
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof name, "c%d", i);
		snprintf(next, sizeof next, i == 19 ? "d" : "c%d", i + 1);
		if (symlink(next, name) < 0)
			printf("symlink %s: %s\n", name, ename(errno));
	}
	cat("cat c0/g (20 links)", AT_FDCWD, "c0/g");
	snprintf(next, sizeof next, "c0/%s", dots(20, "g"));
	cat("cat c0/dot*20/g: no (d has no dot)", AT_FDCWD, next);
	ok("symlink ../dot d/dot", symlink("../dot", "d/dot"));
	snprintf(next, sizeof next, "c0/%s", dots(19, "g"));
	cat("cat c0/dot*19/g (20+2+18 = 40 links, lands in the start dir)", AT_FDCWD, next);
	ok("unlink d/dot", unlink("d/dot"));
	ok("symlink . d/dot", symlink(".", "d/dot"));
	snprintf(next, sizeof next, "c0/%s", dots(20, "g"));
	cat("cat c0/dot*20/g (40 links)", AT_FDCWD, next);
	snprintf(next, sizeof next, "c0/%s", dots(21, "g"));
	cat("cat c0/dot*21/g (41 links)", AT_FDCWD, next);

	/* nested: a link whose target walks through links */
	ok("symlink dot*38/f n38", symlink(dots(38, "f"), "n38"));
	ok("symlink dot*39/f n39", symlink(dots(39, "f"), "n39"));
	cat("cat n38 (39 links)", AT_FDCWD, "n38");
	cat("cat n39 (40 links)", AT_FDCWD, "n39");
	cat("cat dot/n39 (41 links)", AT_FDCWD, "dot/n39");
	ok("symlink n39 n39b", symlink("n39", "n39b"));
	cat("cat n39b (41 links)", AT_FDCWD, "n39b");

	/* absolute targets: p0 -> $START/p1 -> ... -> $START/p39 -> $START/f */
	const char *base = strcmp(probe_start, "/") ? probe_start : "";
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof name, "p%d", i);
		if (i == 39)
			snprintf(next, sizeof next, "%s/f", base);
		else
			snprintf(next, sizeof next, "%s/p%d", base, i + 1);
		if (symlink(next, name) < 0)
			printf("symlink %s: %s\n", name, ename(errno));
	}
	cat("cat p0 (40 absolute links)", AT_FDCWD, "p0");
	cat("cat dot/p0 (41)", AT_FDCWD, "dot/p0");
	snprintf(next, sizeof next, "%s/p0", base);
	cat("cat $START/p0 (40)", AT_FDCWD, next);
	snprintf(next, sizeof next, "%s/dot/p0", base);
	cat("cat $START/dot/p0 (41)", AT_FDCWD, next);
	return probe_done();
}
