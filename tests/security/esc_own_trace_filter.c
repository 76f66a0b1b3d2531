/* esc_own_trace_filter — install a seccomp filter of our own that answers
 * execve/execveat with SECCOMP_RET_TRACE and data of our choosing (0x1234),
 * then exec a program that lies outside the view (a copy of cat the runner
 * put in the secret's directory under /var/tmp) on the secret.
 *
 * Attacks rule 7 (exec is resolved in the virtual filesystem) and rule 8's
 * neighbour: seccomp without a listener is allowed, and of two filters that
 * both say TRACE the kernel reports the data of the one installed last —
 * ours.  A tracer that told its own exec stops from others by that data
 * would let this exec through to the kernel, which would run the host file.
 * Under moat the exec must answer ENOENT (the path is outside the view),
 * audited `execve`/`execveat` with rule fs.outside-view.
 *
 * The filter is installed only when ESC_TRACE_FILTER=1, which the runner
 * sets (--setenv) for the moat run alone: natively there is no tracer, and
 * a TRACE action without one fails the call with ENOSYS, so the native run
 * proves only that exec'ing the outside program reads the secret — the
 * filter's part is exercised under moat only.
 *
 * ESCAPED when the exec'd program prints the token, or when the exec of the
 * outside program succeeded at all (it ran and exited on its own).  A
 * process killed at the exec (moat's post-exec check) is held.
 *
 * usage: ESC_TOKEN=... [ESC_TRACE_FILTER=1] esc_own_trace_filter /var/tmp/.../cat /var/tmp/.../secret
 */
#include "esc.h"
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | 0x1234),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | 0x1235),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -errno;
	return 0;
}

/* One way: fork, (filter,) exec the helper on the secret, judge. */
static void attempt(const char *how, bool use_execveat, bool filter, const char *helper,
		    const char *secret)
{
	int out[2], err[2];
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		esc_usage("pipe2 failed");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		esc_usage("fork failed");
	if (pid == 0) {
		int e = 0;
		if (filter && (e = install_filter()) < 0) {
			e = 1000 - e; /* the filter itself failed: 1000 + errno */
			if (write(err[1], &e, sizeof e) < 0)
				_exit(126);
			_exit(126);
		}
		if (dup2(out[1], 1) < 0)
			_exit(126);
		char *av[] = {(char *)helper, (char *)secret, NULL};
		if (use_execveat)
			syscall(SYS_execveat, AT_FDCWD, helper, av, environ, 0);
		else
			execve(helper, av, environ);
		e = errno;
		if (write(err[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	int e = 0;
	ssize_t n = read(err[0], &e, sizeof e);
	char buf[4096];
	ssize_t got = esc_read_all(out[0], buf, sizeof buf);
	close(out[0]);
	close(err[0]);
	int st = 0;
	waitpid(pid, &st, 0);

	if (n == (ssize_t)sizeof e && e >= 1000) {
		esc_held("%s: installing our TRACE filter failed: %s", how, esc_errname(e - 1000));
	} else if (n == (ssize_t)sizeof e) {
		esc_held("%s(%s): %s", how, helper, esc_errname(e));
	} else if (got > 0 && esc_is_token(buf, (size_t)got)) {
		esc_won("%s(%s)%s: the program outside the view printed the token", how, helper,
			filter ? " behind our TRACE filter" : "");
	} else if (WIFEXITED(st)) {
		esc_won("%s(%s)%s: the program outside the view ran (exit %d) though it did not print the token",
			how, helper, filter ? " behind our TRACE filter" : "", WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		esc_held("%s(%s): the process was killed by signal %d at the exec", how, helper,
			 WTERMSIG(st));
	} else {
		esc_held("%s(%s): wait status %#x", how, helper, st);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 || argv[1][0] != '/' || argv[2][0] != '/')
		esc_usage("esc_own_trace_filter /ABS/helper /ABS/secret");
	esc_token();
	const char *f = getenv("ESC_TRACE_FILTER");
	bool filter = f && strcmp(f, "1") == 0;
	fprintf(stderr, "# our TRACE filter: %s\n", filter ? "installed in each child" : "not installed (native run)");
	attempt("execve", false, filter, argv[1], argv[2]);
	attempt("execveat", true, filter, argv[1], argv[2]);
	return esc_finish();
}
