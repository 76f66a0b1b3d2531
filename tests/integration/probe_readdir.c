/* probe_readdir — directory streams (opendir/readdir): a listing taken
 * while files are created in the directory still returns every entry that
 * existed before opendir exactly once (whether the new ones show up is
 * unspecified: not printed); rewinddir sees the directory as it is now;
 * seekdir to a telldir position resumes at the same entry (positions are
 * cookies: never printed); a stream opened before fork shares its kernel
 * offset with the child. */
#include "probe.h"
#include <dirent.h>
#include <sys/wait.h>

#define PRE 300

static int seen[PRE];

/* Note an entry "eNNN"; anything else counts as other. */
static void note(const char *name, int *other)
{
	int i;
	if (sscanf(name, "e%d", &i) == 1 && i >= 0 && i < PRE && name[0] == 'e')
		seen[i]++;
	else
		(*other)++;
}

static int count(DIR *d)
{
	int n = 0;
	while (readdir(d))
		n++;
	return n;
}

int main(void)
{
	char name[64];
	probe_init();
	ok("mkdir d", mkdir("d", 0755));
	for (int i = 0; i < PRE; i++) {
		snprintf(name, sizeof name, "d/e%03d", i);
		if (mkfile(name, "") < 0)
			printf("mkfile %s: %s\n", name, ename(errno));
	}

	/* created while listing */
	DIR *d = opendir("d");
	printf("opendir d: %s\n", d ? "ok" : ename(errno));
	if (!d)
		return 1;
	int other = 0, got = 0;
	struct dirent *de;
	for (int k = 0; (de = readdir(d)); k++) {
		note(de->d_name, &other);
		got++;
		if (k % 10 == 0 && k < PRE) { /* 30 times: 60 new entries */
			snprintf(name, sizeof name, "d/new%03d", k);
			mkfile(name, "");
			snprintf(name, sizeof name, "d/x%03d", k);
			mkdir(name, 0755);
		}
	}
	int once = 0, dup = 0, missed = 0;
	for (int i = 0; i < PRE; i++) {
		once += seen[i] == 1;
		dup += seen[i] > 1;
		missed += seen[i] == 0;
	}
	printf("listing while creating: %d pre-existing entries seen once, %d more than once, %d missed\n",
	       once, dup, missed);

	/* rewinddir: the directory as it is now */
	rewinddir(d);
	memset(seen, 0, sizeof seen);
	other = 0;
	while ((de = readdir(d)))
		note(de->d_name, &other);
	once = 0;
	for (int i = 0; i < PRE; i++)
		once += seen[i] == 1;
	printf("after rewinddir: %d pre-existing once, %d others (. .. and the %d new)\n", once, other,
	       other - 2);
	ok("unlink d/e000", unlink("d/e000"));
	rewinddir(d);
	memset(seen, 0, sizeof seen);
	other = 0;
	while ((de = readdir(d)))
		note(de->d_name, &other);
	printf("after unlink, rewinddir: e000 seen %d times, e001 %d\n", seen[0], seen[1]);
	closedir(d);

	/* telldir / seekdir */
	d = opendir("d");
	for (int i = 0; i < 50; i++)
		readdir(d);
	long pos = telldir(d);
	de = readdir(d);
	char at[256];
	snprintf(at, sizeof at, "%s", de ? de->d_name : "(end)");
	int rest = 1 + count(d);
	seekdir(d, pos);
	de = readdir(d);
	printf("seekdir to telldir after 50: same entry: %s\n", de && strcmp(de->d_name, at) == 0 ? "yes" : "no");
	printf("seekdir: same number of entries to the end: %s\n", 1 + count(d) == rest ? "yes" : "no");
	rewinddir(d);
	long start = telldir(d);
	de = readdir(d);
	snprintf(at, sizeof at, "%s", de ? de->d_name : "(end)");
	count(d);
	seekdir(d, start);
	de = readdir(d);
	printf("seekdir to telldir at start: same first entry: %s\n", de && strcmp(de->d_name, at) == 0 ? "yes" : "no");
	closedir(d);

	/* one stream, two processes: the kernel offset is shared */
	int total;
	d = opendir("d");
	total = count(d);
	rewinddir(d);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int n = count(d);
		printf("child read the whole stream: %s\n", n == total ? "yes" : "no");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	de = readdir(d);
	printf("parent readdir after the child read it all: %s\n", de ? "an entry" : "end of directory");
	rewinddir(d);
	printf("parent after rewinddir: whole stream again: %s\n", count(d) == total ? "yes" : "no");
	/* and the other way round: the parent reads to the end, the child's
	 * readdir (its buffer empty after the rewind) finds the end */
	rewinddir(d);
	fflush(stdout);
	int go[2];
	if (pipe(go) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		printf("child readdir after the parent read it all: %s\n", readdir(d) ? "an entry" : "end of directory");
		_exit(0);
	}
	close(go[0]);
	count(d);
	fflush(stdout);
	close(go[1]);
	waitpid(pid, &status, 0);
	closedir(d);
	return probe_done();
}
