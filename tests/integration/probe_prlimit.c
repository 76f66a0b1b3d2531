/* probe_prlimit — prlimit64 of another process of its own (a child): read
 * its limits, lower its soft and hard limit, try to raise the hard one
 * back, a bad resource, unreadable and unwritable limit pointers, and the
 * child's own view of what was set; and of itself by its pid. */
#include "probe.h"
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

static long prl(pid_t pid, int res, const struct rlimit64 *n, struct rlimit64 *o)
{
	return syscall(SYS_prlimit64, pid, res, n, o);
}

int main(void)
{
	probe_init();
	int p[2];
	if (pipe(p) < 0)
		return 2;
	pid_t child = fork();
	if (child == 0) {
		char b;
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		struct rlimit64 r;
		prl(0, RLIMIT_NOFILE, NULL, &r);
		printf("child sees NOFILE: %llu/%llu\n", (unsigned long long)r.rlim_cur,
		       (unsigned long long)r.rlim_max);
		_exit(0);
	}
	struct rlimit64 o, n = { 64, 128 };
	ok("get child NOFILE", prl(child, RLIMIT_NOFILE, NULL, &o));
	ok("set child NOFILE 64/128", prl(child, RLIMIT_NOFILE, &n, NULL));
	ok("get after", prl(child, RLIMIT_NOFILE, NULL, &o));
	printf("child NOFILE: %llu/%llu\n", (unsigned long long)o.rlim_cur,
	       (unsigned long long)o.rlim_max);
	n.rlim_cur = 64;
	n.rlim_max = 4096;
	ok("raise child's hard NOFILE", prl(child, RLIMIT_NOFILE, &n, &o));
	ok("bad resource", prl(child, 99, NULL, &o));
	ok("unreadable new", prl(child, RLIMIT_NOFILE, (void *)8, NULL));
	ok("unwritable old", prl(child, RLIMIT_NOFILE, NULL, (void *)8));
	ok("self by pid", prl(getpid(), RLIMIT_CORE, NULL, &o));
	if (write(p[1], "g", 1) != 1)
		return 2;
	int st;
	waitpid(child, &st, 0);
	printf("child exit: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
