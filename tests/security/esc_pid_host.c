/* esc_pid_host — calls that take a pid and reach host processes.
 *
 * moat answers ESRCH for a pid outside the sandbox in the pid-taking calls
 * it knows (kill, sched_*, prlimit64, getpgid...: esc_kill_host), but some
 * run in the kernel on the pid as given:
 *
 *   capget        capget(pid): the host process's capability sets (WAY
 *                 capget);
 *   clock         a process CPU clock names its pid in the clock id
 *                 ((~pid << 3) | CPUCLOCK_SCHED): clock_gettime tells the
 *                 host process's CPU time (so whether it exists and what it
 *                 does), clock_getres whether it exists, and timer_create
 *                 arms a timer on it (WAY clock).
 *
 * PIDs: the runner's shell (pid 1 of the attempt's namespace) and moat
 * itself ($ESC_MOAT_PID under moat).  A pid counts as a host process only
 * on evidence: natively (--native) every one is; under moat one that the
 * sandbox's /proc does not show (stat /proc/PID fails) — a sandbox process
 * would be there.  ESCAPED when a call answers for such a pid: capget with
 * a capability set (the sandbox's processes have none, so a nonzero set is
 * a host process's), a clock call with success.  The fixed moat answers
 * ESRCH (capget, audited as signal.outside-sandbox like the other pid
 * calls) and EINVAL for a CPU clock of a process outside the sandbox (as
 * Linux for a pid that does not exist).
 *
 * usage: esc_pid_host [--native] capget|clock PID...
 */
#include "esc.h"
#include <linux/capability.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#define CPUCLOCK_SCHED 2
#define PROCESS_CPUCLOCK(pid) ((~(clockid_t)(pid) << 3) | (clockid_t)CPUCLOCK_SCHED)

int main(int argc, char **argv)
{
	int i = 1, native = 0;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc < i + 2)
		esc_usage("esc_pid_host [--native] capget|clock PID...");
	const char *way = argv[i++];
	int capget_way = strcmp(way, "capget") == 0;
	if (!capget_way && strcmp(way, "clock") != 0)
		esc_usage("WAY is capget or clock");
	const char *mp = getenv("ESC_MOAT_PID");
	char *pids[16];
	int n = 0;
	for (; i < argc && n < 15; i++)
		pids[n++] = argv[i];
	if (mp && *mp)
		pids[n++] = (char *)mp;
	for (int k = 0; k < n; k++) {
		int pid = atoi(pids[k]);
		if (pid <= 0 || pid == getpid())
			continue;
		char p[64];
		struct stat st;
		snprintf(p, sizeof p, "/proc/%d", pid);
		if (!native && stat(p, &st) == 0) {
			esc_held("pid %d is in the sandbox's /proc: not a host process", pid);
			continue;
		}
		if (capget_way) {
			struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, pid };
			struct __user_cap_data_struct d[2];
			memset(d, 0, sizeof d);
			if (syscall(SYS_capget, &h, d) < 0)
				esc_held("capget(%d): %s", pid, esc_errname(errno));
			else if (d[0].effective | d[1].effective | d[0].permitted | d[1].permitted)
				esc_won("capget(%d), a host process, answered: effective %08x%08x permitted %08x%08x",
					pid, d[1].effective, d[0].effective, d[1].permitted, d[0].permitted);
			else
				esc_held("capget(%d) answered with no capabilities", pid);
			continue;
		}
		struct timespec ts;
		clockid_t c = PROCESS_CPUCLOCK(pid);
		if (clock_gettime(c, &ts) == 0)
			esc_won("clock_gettime of host process %d's CPU clock: %ld.%09ld s", pid, (long)ts.tv_sec,
				ts.tv_nsec);
		else
			esc_held("clock_gettime of pid %d's CPU clock: %s", pid, esc_errname(errno));
		if (clock_getres(c, &ts) == 0)
			esc_won("clock_getres of host process %d's CPU clock answered", pid);
		else
			esc_held("clock_getres of pid %d's CPU clock: %s", pid, esc_errname(errno));
		struct sigevent se = { .sigev_notify = SIGEV_NONE };
		long t;
		if (syscall(SYS_timer_create, c, &se, &t) == 0) {
			struct itimerspec its = { .it_value = { 1000, 0 } }, cur;
			syscall(SYS_timer_settime, t, 0, &its, NULL);
			syscall(SYS_timer_gettime, t, &cur);
			esc_won("timer_create armed a timer on host process %d's CPU clock (%ld s left)", pid,
				(long)cur.it_value.tv_sec);
			syscall(SYS_timer_delete, t);
		} else {
			esc_held("timer_create on pid %d's CPU clock: %s", pid, esc_errname(errno));
		}
	}
	return esc_finish();
}
