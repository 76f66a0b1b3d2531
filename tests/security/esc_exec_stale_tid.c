/* esc_exec_stale_tid — signal a host process through a tid moat kept.
 *
 * When a thread that is not its process's leader calls execve, the kernel
 * (de_thread) kills the other threads, gives the exec'ing thread the
 * leader's tid and frees its own.  moat learns of it only at the exec's
 * PTRACE_EVENT_EXEC stop, whose message is the old tid (trace.c
 * exec_event: the old leader's entry removed, the thread's re-keyed).  An
 * exec that fails after that point of no return never reaches the stop:
 * the process dies of SIGSEGV.  Here the thread execs an ELF whose one
 * PT_LOAD lies in the kernel's half (/tmp/esc_stale_elf, made here): the
 * kernel refuses the segment after de_thread.  moat then removes the entry
 * of the dead pid (the old leader's), and the thread's entry stays in its
 * task table under the old tid, which the kernel has freed — for good.
 *
 * Default: the stale tid is then a sandbox task to moat.  We wrap the pid
 * counter back to just below it and say "# ready": the host's part
 * (stale_poke) starts sleeps, one of which takes the tid.  tkill(tid,
 * SIGKILL) then goes through moat's task table (sys_proc.c thread_kill,
 * task.c task_signal: pidfd_open of the tid, CAP_KILL) to that host
 * process.  ESCAPED when the tkill succeeds while no sandbox process holds
 * the tid (natively it kills the host's sleep as well: the attempt is
 * real).  Then our own children take the tid again, so that the entry
 * names a sandbox task that exits, and moat can end.
 *
 * --hang: a liveness check (run.sh live=1, as esc_exec_stale_hang): only
 * the failed exec, then exit.  The stale entry keeps task_count() above 0
 * and moat's loop waits for a task that will never report again: moat
 * must still exit.
 *
 * usage: esc_exec_stale_tid [--native] [--hang]
 */
#include "esc.h"
#include <elf.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static const char bad[] = "/tmp/esc_stale_elf";
static int tidpipe[2];
extern char **environ;

/* An x86_64 ELF whose one PT_LOAD lies at the start of the kernel's half:
 * execve passes every check before de_thread and fails after it. */
static int make_bad_elf(void)
{
	struct {
		Elf64_Ehdr e;
		Elf64_Phdr p;
	} f;
	memset(&f, 0, sizeof f);
	memcpy(f.e.e_ident, ELFMAG, SELFMAG);
	f.e.e_ident[EI_CLASS] = ELFCLASS64;
	f.e.e_ident[EI_DATA] = ELFDATA2LSB;
	f.e.e_ident[EI_VERSION] = EV_CURRENT;
	f.e.e_type = ET_EXEC;
	f.e.e_machine = EM_X86_64;
	f.e.e_version = EV_CURRENT;
	f.e.e_entry = 0xffff800000001000ULL;
	f.e.e_phoff = sizeof f.e;
	f.e.e_ehsize = sizeof f.e;
	f.e.e_phentsize = sizeof f.p;
	f.e.e_phnum = 1;
	f.p.p_type = PT_LOAD;
	f.p.p_flags = PF_R | PF_X;
	f.p.p_vaddr = 0xffff800000000000ULL;
	f.p.p_filesz = f.p.p_memsz = sizeof f;
	f.p.p_align = 0x1000;
	unlink(bad);
	int fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		return -errno;
	int r = write(fd, &f, sizeof f) == (ssize_t)sizeof f ? 0 : -EIO;
	close(fd);
	return r;
}

static void *execer(void *arg)
{
	(void)arg;
	pid_t me = gettid();
	if (write(tidpipe[1], &me, sizeof me) != sizeof me)
		_exit(3);
	char *av[] = { "esc_stale_elf", NULL };
	execve(bad, av, environ);
	_exit(4); /* failed before the point of no return: nothing to show */
}

/* A child whose second thread execs the ELF; it dies of SIGSEGV.  The
 * thread's tid (free now), or -1. */
static pid_t stale_tid(void)
{
	if (pipe2(tidpipe, O_CLOEXEC) < 0)
		return -1;
	pid_t c = fork();
	if (c == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, execer, NULL) != 0)
			_exit(5);
		for (;;)
			pause();
	}
	close(tidpipe[1]);
	pid_t tid = -1;
	if (c < 0 || read(tidpipe[0], &tid, sizeof tid) != sizeof tid)
		tid = -1;
	close(tidpipe[0]);
	int st = 0;
	if (c > 0)
		waitpid(c, &st, 0);
	fprintf(stderr, "# child %d, its thread %d: %s %d\n", c, tid,
		WIFSIGNALED(st) ? "killed by signal" : "exited",
		WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV ? tid : -1;
}

/* Children until one of them is x, or the counter has gone past x once
 * after a wrap (x is held).  Whether a child of ours had x. */
static bool take(pid_t x)
{
	pid_t prev = esc_child_once(), p = prev;
	bool wrapped = false;
	for (long n = 0; n < 400000; n++, prev = p) {
		p = esc_child_once();
		if (p < 0)
			return false;
		if (p == x)
			return true;
		if (p < prev)
			wrapped = true;
		if (wrapped && p > x)
			return false;
	}
	return false;
}

int main(int argc, char **argv)
{
	bool native = false, hang = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--native") == 0)
			native = true;
		else if (strcmp(argv[i], "--hang") == 0)
			hang = true;
		else
			esc_usage("esc_exec_stale_tid [--native] [--hang]");
	}
	setvbuf(stderr, NULL, _IONBF, 0);
	int r = make_bad_elf();
	if (r < 0)
		esc_usage("cannot write /tmp/esc_stale_elf");
	/* Past the namespace's first 300 pids, which a wrap never gives again. */
	for (int k = 0; !hang && k < 400; k++)
		esc_child_once();
	pid_t tid = stale_tid();
	unlink(bad);
	if (tid < 0)
		esc_usage("the exec did not fail after the point of no return");
	if (hang) {
		if (native)
			esc_unsupported(
				"natively there is no task table (thread %d's exec failed late)",
				tid);
		esc_held("thread %d's exec failed after de_thread; we end here and moat must too",
			 tid);
		return esc_finish();
	}
	double t0 = esc_now();
	pid_t last = esc_pid_wrap_below(tid);
	if (last < 0)
		esc_usage("the pid counter did not come back below the stale tid");
	fprintf(stderr, "# pid counter wrapped to %d in %.1f s\n", last, esc_now() - t0);
	fprintf(stderr, "# ready\n");
	sleep(2); /* the host's part starts its processes */
	if (syscall(SYS_tkill, tid, SIGKILL) == 0)
		esc_won("tkill(%d, SIGKILL) succeeded: no sandbox process holds tid %d (its thread's "
			"exec failed after de_thread), the host process that took it was signalled",
			tid, tid);
	else
		esc_held("tkill(%d): %s", tid, esc_errname(errno));
	/* Our own child takes the tid again: whatever moat kept under it is a
	 * sandbox task that exits, and the run can end. */
	if (!take(tid))
		fprintf(stderr, "# tid %d not taken again\n", tid);
	return esc_finish();
}
