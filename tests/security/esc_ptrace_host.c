/* esc_ptrace_host — take control of a process outside the sandbox with
 * PTRACE_ATTACH and PTRACE_SEIZE, and read its memory with process_vm_readv.
 *
 * Attacks rule 8 (ptrace and process_vm_* are refused) and rule 9 (the
 * sandbox reaches only its own processes).  The runner starts the victim (a
 * `sleep`) outside moat; natively, as root, every call succeeds.  The victim
 * is always detached again.
 *
 * usage: esc_ptrace_host VICTIM_PID
 */
#include "esc.h"
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

/* The victim's stack is somewhere; any readable address proves the read.
 * Take the start of its first mapping from /proc/PID/maps when we can see it,
 * else guess the usual non-PIE text address. */
static unsigned long victim_addr(int pid)
{
	char path[64], line[512];
	unsigned long a = 0x400000;
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(line, sizeof line, f))
			a = strtoul(line, NULL, 16);
		fclose(f);
	}
	return a;
}

int main(int argc, char **argv)
{
	if (argc != 2 || atoi(argv[1]) <= 1)
		esc_usage("esc_ptrace_host VICTIM_PID");
	pid_t v = atoi(argv[1]);
	int st;

	if (ptrace(PTRACE_ATTACH, v, 0, 0) == 0) {
		esc_won("PTRACE_ATTACH(%d) returned 0", (int)v);
		waitpid(v, &st, __WALL);
		ptrace(PTRACE_DETACH, v, 0, 0);
	} else {
		esc_held("PTRACE_ATTACH(%d): %s", (int)v, esc_errname(errno));
	}

	if (ptrace(PTRACE_SEIZE, v, 0, 0) == 0) {
		esc_won("PTRACE_SEIZE(%d) returned 0", (int)v);
		/* DETACH needs a stopped tracee */
		ptrace(PTRACE_INTERRUPT, v, 0, 0);
		waitpid(v, &st, __WALL);
		ptrace(PTRACE_DETACH, v, 0, 0);
	} else {
		esc_held("PTRACE_SEIZE(%d): %s", (int)v, esc_errname(errno));
	}

	char buf[16];
	struct iovec local = {buf, sizeof buf};
	struct iovec remote = {(void *)victim_addr(v), sizeof buf};
	ssize_t n = process_vm_readv(v, &local, 1, &remote, 1, 0);
	if (n > 0)
		esc_won("process_vm_readv(%d) read %zd bytes", (int)v, n);
	else
		esc_held("process_vm_readv(%d): %s", (int)v, esc_errname(errno));
	return esc_finish();
}
