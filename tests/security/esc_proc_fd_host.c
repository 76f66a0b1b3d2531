/* esc_proc_fd_host — reach host files through another process's /proc
 * entries: /proc/PID/fd/N (a magic link that reopens the file the process
 * holds) and /proc/PID/cwd/NAME, for pid 1 and for our parent, and
 * /proc/1/fd/N once more by way of /dev/fd/../../1.
 *
 * Attacks rule 6 (the host's /proc is never passed through; a sandbox
 * process sees only sandbox processes) and rule 5 (nothing of the host
 * reaches in).  The runner (pid 1 of its pid namespace) holds the secret
 * open on fd N and keeps its cwd in a directory holding a copy of the
 * secret named NAME, for both runs; under moat our parent is moat itself,
 * which inherited that fd and that cwd.  Natively every way reads the token.
 * Under moat, pid 1 and moat are host processes: ENOENT, audited `open*`
 * with rule fs.outside-view.
 *
 * usage: ESC_TOKEN=... esc_proc_fd_host N NAME
 */
#include "esc.h"

int main(int argc, char **argv)
{
	if (argc != 3 || atoi(argv[1]) < 3 || strchr(argv[2], '/'))
		esc_usage("esc_proc_fd_host FD NAME");
	esc_token();
	int fd = atoi(argv[1]);
	const char *name = argv[2];
	int pids[2] = {1, (int)getppid()};
	char path[4096];

	fprintf(stderr, "# ppid %d\n", pids[1]);
	for (int i = 0; i < 2; i++) {
		if (i == 1 && pids[1] == 1)
			break; /* natively the runner is both */
		snprintf(path, sizeof path, "/proc/%d/fd/%d", pids[i], fd);
		esc_try_open(i == 0 ? "/proc/1/fd/N" : "/proc/PPID/fd/N", path);
		snprintf(path, sizeof path, "/proc/%d/cwd/%s", pids[i], name);
		esc_try_open(i == 0 ? "/proc/1/cwd/NAME" : "/proc/PPID/cwd/NAME", path);
	}
	snprintf(path, sizeof path, "/dev/fd/../../1/fd/%d", fd);
	esc_try_open("/dev/fd/../../1/fd/N", path);
	return esc_finish();
}
