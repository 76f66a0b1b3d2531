/* esc_int80 — the i386 ABI from a 64-bit process: `int $0x80` with eax=5
 * (open) and eax=3 (read).  i386 syscall numbers differ from x86_64 ones, so a
 * filter that checks only the number (and not seccomp_data.arch) lets open
 * through as x86_64 "fstat" (5) and read as "close"... and straight to the
 * kernel.
 *
 * Attacks rule 8 (only the x86_64 ABI gets in: i386 is killed).  The calls
 * run in a forked child (which moat must kill with SIGSYS); the child passes
 * what it read to the parent over a pipe, and the parent reports.  A kernel
 * without the i386 entry (ia32_emulation=0, or a PVM guest) faults the
 * int $0x80 itself with SIGSEGV: the attempt cannot be proven there (exit 77).
 *
 * usage: ESC_TOKEN=... esc_int80 /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

static long int80(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11", "cc");
	return ret;
}

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);
	int pfd[2];
	if (pipe(pfd) < 0)
		esc_usage("pipe failed");

	/* i386 pointers are 32 bits: the path and buffer must live below 4 GiB */
	char *low = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low == MAP_FAILED)
		esc_usage("mmap(MAP_32BIT) failed");
	snprintf(low, 4096, "%s", secret);

	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		close(pfd[0]);
		long fd = int80(5 /* i386 open */, (long)(unsigned long)low, O_RDONLY, 0);
		if (fd < 0) {
			dprintf(pfd[1], "E%ld", -fd);
			_exit(0);
		}
		long n = int80(3 /* i386 read */, fd, (long)(unsigned long)(low + 4096), 4095);
		if (n < 0) {
			dprintf(pfd[1], "R%ld", -n);
			_exit(0);
		}
		write(pfd[1], "D", 1);
		write(pfd[1], low + 4096, (size_t)n);
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
		esc_won("int $0x80 open+read of the secret");
	else if (n > 0 && buf[0] == 'E' && atoi(buf + 1) == ENOSYS)
		esc_unsupported("int $0x80 gives ENOSYS: this kernel has no IA32 emulation");
	else if (n > 0 && (buf[0] == 'E' || buf[0] == 'R'))
		esc_held("int $0x80 %s: %s", buf[0] == 'E' ? "open" : "read", esc_errname(atoi(buf + 1)));
	else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV)
		/* no i386 entry at all: the gate faults before any syscall
		 * exists, so seccomp never sees it either */
		esc_unsupported("int $0x80 raises SIGSEGV: this kernel has no i386 entry (PVM guest or ia32_emulation=0)");
	else if (WIFSIGNALED(st))
		esc_held("child killed by signal %d (%s) at int $0x80", WTERMSIG(st), sigabbrev_np(WTERMSIG(st)));
	else
		esc_held("child exited %d without an answer", WEXITSTATUS(st));
	return esc_finish();
}
