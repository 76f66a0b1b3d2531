/* probe_getdents — getdents64: sorted names and d_type, small buffers,
 * rewind, changes seen after rewind, a cursor shared across fork, errors. */
#include "probe.h"
#include <dirent.h>
#include <sys/wait.h>

struct d64 {
	unsigned long long ino;
	long long off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static char names[512][64];
static int count;

static const char *tname(unsigned char t)
{
	switch (t) {
	case DT_REG: return "reg";
	case DT_DIR: return "dir";
	case DT_LNK: return "lnk";
	case DT_FIFO: return "fifo";
	case DT_UNKNOWN: return "unknown";
	}
	return "other";
}

/* One getdents64 call; appends "name type" to names[]; returns the result. */
static long batch(int fd, size_t bufsz)
{
	char buf[8192];
	long n = syscall(SYS_getdents64, fd, buf, bufsz);
	for (long off = 0; off < n;) {
		struct d64 *d = (struct d64 *)(buf + off);
		if (count < 512)
			snprintf(names[count++], sizeof names[0], "%s %s", d->name, tname(d->type));
		off += d->reclen;
	}
	return n;
}

static int cmp(const void *a, const void *b) { return strcmp(a, b); }

/* Read to the end with bufsz-byte calls and print the sorted listing. */
static void list(const char *step, int fd, size_t bufsz, int print)
{
	long n;
	int calls = 0;
	count = 0;
	while ((n = batch(fd, bufsz)) > 0)
		calls++;
	if (n < 0) {
		printf("%s: %s\n", step, ename(errno));
		return;
	}
	qsort(names, count, sizeof names[0], cmp);
	int dups = 0;
	for (int i = 1; i < count; i++)
		dups += strcmp(names[i], names[i - 1]) == 0;
	printf("%s: %d entries, %d duplicates%s\n", step, count, dups,
	       bufsz < 1024 ? (calls > 1 ? ", several calls" : ", ONE call") : "");
	for (int i = 0; print && i < count; i++)
		printf("  %s\n", names[i]);
}

int main(void)
{
	char name[32];
	probe_init();

	ok("mkdir d", mkdir("d", 0755));
	ok("mkfile d/a", mkfile("d/a", "1"));
	ok("mkfile d/b", mkfile("d/b", "22"));
	ok("mkfile d/.hidden", mkfile("d/.hidden", ""));
	ok("mkdir d/s", mkdir("d/s", 0755));
	ok("symlink a d/l", symlink("a", "d/l"));
	ok("symlink nowhere d/dang", symlink("nowhere", "d/dang"));
	ok("mkdir empty", mkdir("empty", 0755));

	int fd = okfd("open d O_DIRECTORY", open("d", O_RDONLY | O_DIRECTORY));
	list("getdents64 d", fd, 8192, 1);
	ok("getdents64 d at end", batch(fd, 8192));
	ok("lseek d 0", lseek(fd, 0, SEEK_SET));
	list("getdents64 d after rewind, 48-byte buffer", fd, 48, 0);
	ok("lseek d 0", lseek(fd, 0, SEEK_SET));
	ok("getdents64 d 8-byte buffer", batch(fd, 8));
	ok("mkfile d/new", mkfile("d/new", ""));
	ok("unlink d/b", unlink("d/b"));
	ok("lseek d 0", lseek(fd, 0, SEEK_SET));
	list("getdents64 d after new, -b", fd, 8192, 1);
	close(fd);

	fd = okfd("open empty", open("empty", O_RDONLY | O_DIRECTORY));
	list("getdents64 empty", fd, 8192, 1);
	close(fd);
	fd = okfd("open .", open(".", O_RDONLY | O_DIRECTORY));
	list("getdents64 . (the scratch dir)", fd, 8192, 1);
	close(fd);

	/* errors */
	fd = okfd("open d/a", open("d/a", O_RDONLY));
	ok("getdents64 on a file", batch(fd, 8192));
	close(fd);
	fd = okfd("open d O_PATH", open("d", O_PATH));
	ok("getdents64 on O_PATH fd", batch(fd, 8192));
	close(fd);
	ok("getdents64 closed fd", batch(999, 8192));

	/* a big directory, read in small pieces, and a cursor shared with a child */
	ok("mkdir big", mkdir("big", 0755));
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof name, "big/f%03d", i);
		if (mkfile(name, "") < 0)
			printf("mkfile %s: %s\n", name, ename(errno));
	}
	fd = okfd("open big", open("big", O_RDONLY | O_DIRECTORY));
	list("getdents64 big, 256-byte buffer", fd, 256, 0);
	ok("lseek big 0", lseek(fd, 0, SEEK_SET));
	count = 0;
	printf("parent first batch: %s\n", batch(fd, 512) > 0 ? "some" : "none");
	int first = count;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		count = 0;
		while (batch(fd, 512) > 0)
			;
		printf("child read the rest: %s\n", first + count == 202 ? "all 202 in total" : "WRONG total");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	ok("parent getdents64 after child", batch(fd, 512));
	close(fd);
	return probe_done();
}
