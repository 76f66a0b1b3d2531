/* esc_audit_flood — make moat write without bound: a loop of denials.
 *
 * A moat-side attempt (run.sh: side=moat).  Every denial is a line in the
 * audit log, written by moat as root to a host file: the paths it names
 * are the sandbox's choice (up to 4 KiB, and moat writes them more than
 * once: `args`, `path`, `resolved`; a control byte takes 6 bytes there,
 * \u0001) and so is the rate.  PROCS processes open
 * /root/moat-esc-flood/<N>/<4000 bytes of path, 0x01 and '/'> for SECONDS
 * seconds, N counting (no two records alike).  Then:
 *
 *   audit_flood       we exit; the runner requires the log under 64 MiB
 *                     (the fixed moat caps its size, a few tens of MiB by
 *                     default, rate-limits records and says in a last
 *                     record and in the report how many it dropped);
 *   loop_audit_pipe   (--hold) the log is a FIFO the runner holds open but
 *                     never reads: 64 KiB of records fill it, and a moat
 *                     whose write waits for room stops its loop.  We then
 *                     wait, without a supervised call, for the end: moat
 *                     has --wall-time-limit 2 and must be gone within 3 s
 *                     (the fixed moat opens the log O_NONBLOCK and drops
 *                     what does not fit, counting it).
 *
 * Every open is bounded by SECONDS and by 200,000 calls a process.
 * Natively (--native) the same opens fail with ENOENT, touching nothing:
 * UNSUPPORTED.
 *
 * usage: esc_audit_flood [--native] [--hold] SECONDS PROCS
 */
#include "esc.h"
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int i = 1, native = 0, hold = 0;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (strcmp(argv[i], "--native") == 0)
			native = 1;
		else if (strcmp(argv[i], "--hold") == 0)
			hold = 1;
		else
			esc_usage("esc_audit_flood [--native] [--hold] SECONDS PROCS");
	}
	if (argc != i + 2)
		esc_usage("esc_audit_flood [--native] [--hold] SECONDS PROCS");
	double secs = atof(argv[i]);
	int procs = atoi(argv[i + 1]);
	if (secs <= 0 || secs > 30 || procs < 1 || procs > 16)
		esc_usage("SECONDS in (0, 30], PROCS in [1, 16]");

	/* 4000 bytes of path: components of 200 bytes 0x01, each of which a
	 * JSON writer must spell as 6 (\u0001). */
	char tail[4096];
	size_t n = 0;
	while (n + 202 < 4000) {
		memset(tail + n, 1, 200);
		tail[n + 200] = '/';
		n += 201;
	}
	tail[n] = '\0';

	int rep[2];
	if (pipe(rep) < 0)
		esc_usage("pipe failed");
	double end = now() + secs;
	for (int p = 0; p < procs; p++) {
		pid_t c = fork();
		if (c < 0)
			esc_usage("fork failed");
		if (c == 0) {
			long calls = 0, other = 0;
			char path[4200];
			while (calls < 200000 && now() < end) {
				snprintf(path, sizeof path, "/root/moat-esc-flood/%d.%ld/%s", p, calls, tail);
				int fd = open(path, O_RDONLY);
				if (fd >= 0)
					close(fd);
				else if (errno != ENOENT && errno != EACCES)
					other++;
				calls++;
			}
			long r[2] = { calls, other };
			if (write(rep[1], r, sizeof r) != sizeof r)
				_exit(2);
			_exit(0);
		}
	}
	long calls = 0, other = 0;
	for (int p = 0; p < procs; p++) {
		long r[2];
		if (read(rep[0], r, sizeof r) == sizeof r)
			calls += r[0], other += r[1];
	}
	while (wait(NULL) > 0)
		;
	fprintf(stderr, "# %ld denied opens of ~4 KiB paths in %.1f s by %d processes (%ld other errors)\n", calls,
		secs, procs, other);
	if (native)
		esc_unsupported("moat-side: natively nothing writes an audit log (%ld opens failed)", calls);
	if (hold) {
		static const char m[] = "# flooded; now waiting for the wall-time limit\n";
		if (write(2, m, sizeof m - 1) < 0)
			_exit(3);
		for (;;)
			pause();
	}
	esc_held("%ld denials in %.1f s; the runner measures the log", calls, secs);
	return esc_finish();
}
