/* esc_x32 — the x32 ABI: openat with __X32_SYSCALL_BIT (0x40000000) set.
 * seccomp_data.arch is AUDIT_ARCH_X86_64 for x32 calls too, so a filter that
 * compares the number without masking/refusing the x32 bit sees 0x40000101,
 * not openat (257), and may let it fall through to the kernel.
 *
 * Attacks rule 8 (only the x86_64 ABI gets in: x32 is killed).  The call runs
 * in a forked child, which passes what it read to the parent over a pipe.  A
 * kernel built without CONFIG_X86_X32_ABI answers ENOSYS: the attempt then
 * cannot be proven natively (exit 77).
 *
 * usage: ESC_TOKEN=... esc_x32 /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);
	int pfd[2];
	if (pipe(pfd) < 0)
		esc_usage("pipe failed");

	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		close(pfd[0]);
		long fd = syscall(__X32_SYSCALL_BIT | SYS_openat, AT_FDCWD, secret, O_RDONLY, 0);
		if (fd < 0) {
			dprintf(pfd[1], "E%d", errno);
			_exit(0);
		}
		char b[4096];
		long n = syscall(__X32_SYSCALL_BIT | SYS_read, fd, b, sizeof b);
		if (n < 0) {
			dprintf(pfd[1], "R%d", errno);
			_exit(0);
		}
		write(pfd[1], "D", 1);
		write(pfd[1], b, (size_t)n);
		_exit(0);
	}
	close(pfd[1]);
	char buf[4200];
	ssize_t n = 0, k;
	while ((k = read(pfd[0], buf + n, sizeof buf - 1 - (size_t)n)) > 0)
		n += k;
	buf[n > 0 ? n : 0] = 0;
	int st = 0;
	waitpid(child, &st, 0);

	if (n > 0 && buf[0] == 'D' && esc_is_token(buf + 1, (size_t)n - 1))
		esc_won("x32 openat+read of the secret");
	else if (n > 0 && buf[0] == 'E' && atoi(buf + 1) == ENOSYS)
		esc_unsupported("x32 openat gives ENOSYS: this kernel has no x32 ABI (CONFIG_X86_X32_ABI off)");
	else if (n > 0 && (buf[0] == 'E' || buf[0] == 'R'))
		esc_held("x32 %s: %s", buf[0] == 'E' ? "openat" : "read", esc_errname(atoi(buf + 1)));
	else if (WIFSIGNALED(st))
		esc_held("child killed by signal %d (%s) at the x32 openat", WTERMSIG(st), sigabbrev_np(WTERMSIG(st)));
	else
		esc_held("child exited %d without an answer", WEXITSTATUS(st));
	return esc_finish();
}
