/* esc_exec_widenr — learn what lies outside the view through exec's errno,
 * calling execve with a syscall number whose upper 32 bits are set.
 *
 * The kernel (x86_64, 5.x on) runs the low 32 bits of rax as the syscall
 * number, and seccomp sees the same int: rax = 0x1_0000_003b is execve, and
 * moat's filter stops it for the exec stop.  An exec stop that compared
 * the whole 64-bit register would not take it for an exec and let the
 * kernel run it on the raw host path.  The image check at the exec event
 * kills a program that ran — but a failed exec answers the host's errno:
 * EACCES for a file that exists (the secret is not executable), ENOENT for
 * one that does not.  That tells the sandbox which host paths exist.
 *
 * Natively the two errnos differ (ESCAPED: the host's answer).  Under moat
 * both paths are outside the view: ENOENT for both, audited `execve`
 * fs.outside-view (HELD).  A kernel that refuses wide numbers (ENOSYS) makes
 * the attempt UNSUPPORTED.
 *
 * usage: ESC_TOKEN=... esc_exec_widenr /var/tmp/moat-sec.XXXXXX/secret */
#include "esc.h"
#include <limits.h>
#include <sys/syscall.h>

static long wide_execve(const char *path)
{
	char *const argv[] = { (char *)path, NULL };
	char *const envp[] = { NULL };
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(0x100000000L | SYS_execve), "D"(path), "S"(argv), "d"(envp)
			 : "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		esc_usage("usage: esc_exec_widenr SECRET");
	char missing[PATH_MAX];
	snprintf(missing, sizeof missing, "%s.not-there", argv[1]);
	long there = wide_execve(argv[1]);
	long absent = wide_execve(missing);
	if (there == -ENOSYS && absent == -ENOSYS)
		esc_unsupported("a syscall number with its upper bits set is ENOSYS here");
	if (there != absent)
		esc_won("exec with a wide number told an existing host file (%s) from a missing "
			"one (%s)", esc_errname((int)-there), esc_errname((int)-absent));
	else
		esc_held("exec with a wide number: %s for both", esc_errname((int)-there));
	return esc_finish();
}
