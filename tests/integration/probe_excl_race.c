/* probe_excl_race — two processes race to create the same names with
 * O_CREAT|O_EXCL (and mkdir, link, symlink, renameat2 RENAME_NOREPLACE):
 * exactly one of them wins each name, the loser gets EEXIST, and the file
 * behind the name is the winner's.  Only counts are printed: which process
 * wins a given name is up to the scheduler. */
#include "probe.h"
#include <sys/mman.h>
#include <sys/wait.h>

#define NAMES 200

enum op { OP_OPEN, OP_MKDIR, OP_LINK, OP_SYMLINK, OP_RENAME, NOPS };
static const char *const opname[NOPS] = { "open O_CREAT|O_EXCL", "mkdir", "link", "symlink",
					  "renameat2 NOREPLACE" };

struct tally {
	int wins[NOPS][NAMES][2]; /* [op][name][who] */
	int other[NOPS][2];       /* errors other than EEXIST */
	int other_errno[NOPS][2];
};

static struct tally *t;

static void race(int who)
{
	char name[32], src[32], mark[2] = { who ? 'B' : 'A', 0 };
	for (int op = 0; op < NOPS; op++) {
		for (int i = 0; i < NAMES; i++) {
			snprintf(name, sizeof name, "%d-%03d", op, i);
			long r = -1;
			switch (op) {
			case OP_OPEN: {
				int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
				if (fd >= 0) {
					r = write(fd, mark, 1) == 1 ? 0 : -1;
					close(fd);
				}
				break;
			}
			case OP_MKDIR:
				r = mkdir(name, 0755);
				break;
			case OP_LINK:
				r = link(who ? "srcB" : "srcA", name);
				break;
			case OP_SYMLINK:
				r = symlink(who ? "srcB" : "srcA", name);
				break;
			case OP_RENAME:
				/* each side renames its own file onto the shared name */
				snprintf(src, sizeof src, "r%c-%03d", mark[0], i);
				r = syscall(SYS_renameat2, AT_FDCWD, src, AT_FDCWD, name,
					    RENAME_NOREPLACE);
				break;
			}
			if (r == 0)
				t->wins[op][i][who]++;
			else if (errno != EEXIST) {
				t->other[op][who]++;
				t->other_errno[op][who] = errno;
			}
		}
	}
}

/* Which side's object a name holds now: 0 (A), 1 (B), or -1. */
static int owner(int op, const char *name)
{
	char buf[8];
	struct stat st, a;
	switch (op) {
	case OP_OPEN:
	case OP_RENAME: {
		int fd = open(name, O_RDONLY);
		if (fd < 0)
			return -1;
		ssize_t n = read(fd, buf, 1);
		close(fd);
		return n == 1 && buf[0] == 'A' ? 0 : n == 1 && buf[0] == 'B' ? 1 : -1;
	}
	case OP_LINK:
		if (stat(name, &st) < 0 || stat("srcA", &a) < 0)
			return -1;
		return st.st_ino == a.st_ino ? 0 : 1;
	case OP_SYMLINK: {
		ssize_t n = readlink(name, buf, sizeof buf - 1);
		if (n != 4)
			return -1;
		return buf[3] == 'A' ? 0 : buf[3] == 'B' ? 1 : -1;
	}
	case OP_MKDIR:
		return stat(name, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
	}
	return -1;
}

int main(void)
{
	char name[32];
	probe_init();
	t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		printf("mmap: %s\n", ename(errno));
		return 1;
	}
	ok("mkfile srcA", mkfile("srcA", "A"));
	ok("mkfile srcB", mkfile("srcB", "B"));
	int bad = 0;
	for (int i = 0; i < NAMES; i++) {
		snprintf(name, sizeof name, "rA-%03d", i);
		bad += mkfile(name, "A") < 0;
		snprintf(name, sizeof name, "rB-%03d", i);
		bad += mkfile(name, "B") < 0;
	}
	printf("rename sources made: %s\n", bad ? "FAILED" : "yes");

	/* Both sides start together: the child waits on a pipe the parent
	 * closes once it is ready to run too. */
	int go[2];
	if (pipe(go) < 0)
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		race(1);
		_exit(0);
	}
	close(go[0]);
	close(go[1]);
	race(0);
	int status;
	waitpid(pid, &status, 0);
	printf("child exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

	for (int op = 0; op < NOPS; op++) {
		int once = 0, twice = 0, never = 0, match = 0;
		for (int i = 0; i < NAMES; i++) {
			int a = t->wins[op][i][0], b = t->wins[op][i][1];
			once += a + b == 1;
			twice += a + b > 1;
			never += a + b == 0;
			snprintf(name, sizeof name, "%d-%03d", op, i);
			int who = owner(op, name);
			match += op == OP_MKDIR ? who == 0 : (a + b == 1 && who == (b ? 1 : 0));
		}
		printf("%s: %d names, won once %d, won twice %d, never won %d, holds the winner's %d\n",
		       opname[op], NAMES, once, twice, never, match);
		for (int who = 0; who < 2; who++)
			if (t->other[op][who])
				printf("  %s: %d other errors (%s)\n", who ? "child" : "parent",
				       t->other[op][who], ename(t->other_errno[op][who]));
	}
	/* the loser of each rename still has its own source file */
	int left = 0;
	for (int i = 0; i < NAMES; i++) {
		struct stat st;
		snprintf(name, sizeof name, "rA-%03d", i);
		left += stat(name, &st) == 0;
		snprintf(name, sizeof name, "rB-%03d", i);
		left += stat(name, &st) == 0;
	}
	printf("rename sources left (one per name): %d\n", left);
	return probe_done();
}
