/* The contained stack walker: a security boundary of its own.
 *
 * What it isolates: libunwind (stack_unwind.c), which parses DWARF read
 * from the sandbox's memory and, by its ptrace helpers, ELF files named by
 * a maps file the sandbox can change at will.  Why: a crafted object or a
 * race could aim that parser at moat, which is the sandbox's supervisor
 * (every decision on its calls is moat's) and, as root, holds what the
 * sandbox was denied.
 *
 * So the walks run in a process of moat's that can do nothing else: it
 * keeps only CAP_SYS_PTRACE (to read the sandbox's memory when it runs as
 * another uid) and, when moat is root, the sandbox's ids (its opens are
 * what the sandbox could read itself); no new privileges; nothing of
 * moat's but its two pipes; the seccomp filter below (read, open
 * read-only, map without execution, process_vm_readv, write its answer,
 * exit); 256 MiB; and it is killed when a walk takes over 300 ms (a new
 * one starts at the next walk; past 5 failures the run goes on without
 * stacks).  Its answer is numbers only, checked for their count: the
 * names of the frames are looked up by moat itself, in trusted system
 * files only (stack_symbols.c).  One walker serves every walk of the run,
 * so its caches stay warm. */
#include "audit/stack.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/stack_internal.h"

/* What the walker may do: read the sandbox's memory, read files,
 * map memory without execution, write its answer, exit.  Anything else
 * fails EPERM.  Built once (libseccomp is slow), loaded in each child. */
static struct sock_fprog contain_prog;

static int contain_build(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return -1;
	static const int plain[] = {
		SCMP_SYS(read),       SCMP_SYS(pread64),       SCMP_SYS(close),
		SCMP_SYS(fstat),      SCMP_SYS(newfstatat),    SCMP_SYS(lseek),
		SCMP_SYS(munmap),     SCMP_SYS(brk),           SCMP_SYS(madvise),
		SCMP_SYS(mremap),     SCMP_SYS(futex),         SCMP_SYS(exit),
		SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),  SCMP_SYS(getpid),
		SCMP_SYS(gettid),     SCMP_SYS(clock_gettime), SCMP_SYS(rt_sigprocmask),
		SCMP_SYS(getrandom),
	};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sizeof plain / sizeof plain[0]; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
	/* write: its answer pipe (fd 4) only */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
				      SCMP_A0(SCMP_CMP_EQ, 4));
	/* open read-only only; map and protect without PROT_EXEC */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC,
					      O_RDONLY));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	/* process_vm_readv: the kernel's ptrace checks decide whose memory
	 * (the walker holds CAP_SYS_PTRACE and nothing else: what it could
	 * read reaches only moat, as return addresses in the audit log). */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(process_vm_readv), 0);
	void *buf = NULL;
	size_t len = 0;
	int fd = rc == 0 ? memfd_create("moat-stack-filter", MFD_CLOEXEC) : -1;
	if (fd >= 0 && seccomp_export_bpf(ctx, fd) == 0) {
		off_t sz = lseek(fd, 0, SEEK_END);
		if (sz > 0 && (buf = malloc((size_t)sz)) && pread(fd, buf, (size_t)sz, 0) == sz)
			len = (size_t)sz;
	}
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	if (!len) {
		free(buf);
		return -1;
	}
	contain_prog.len = (unsigned short)(len / sizeof(struct sock_filter));
	contain_prog.filter = buf;
	return 0;
}

/* One walk asked of the walker (its answer: a count, then the pcs). */
struct walk_req {
	int32_t pid, tid, max;
	uint64_t ip, sp;
};

static int walker_in = -1, walker_out = -1;
static pid_t walker_pid;
static uid_t walker_uid = 65534;
static gid_t walker_gid = 65534;

void stack_walker_ids(uid_t uid, gid_t gid)
{
	walker_uid = uid;
	walker_gid = gid;
}
/* Walkers that died or stalled: past 5 the run goes on without stacks
 * (a sandbox crafting objects that crash the walker gets no fork storm). */
static unsigned walker_failures;

static void walker_main(int in, int out)
{
	struct walk_req rq;
	if (stack_unwind_init() < 0)
		_exit(1);
	while (read(in, &rq, sizeof rq) == (ssize_t)sizeof rq) {
		uint64_t res[STACK_MAX + 1];
		int max = rq.max < STACK_MAX ? rq.max : STACK_MAX;
		int n = stack_unwind(rq.pid, rq.tid, rq.ip, rq.sp, res + 1, max);
		res[0] = (uint64_t)n;
		if (write(out, res, (size_t)(n + 1) * sizeof res[0]) < 0)
			break;
	}
	_exit(0);
}

static int walker_pidfd = -1;

static void walker_stop(void)
{
	walker_failures++;
	/* Through its pidfd: the loop's waitpid(-1) may have reaped it and
	 * its pid be another process's by now. */
	if (walker_pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, walker_pidfd, SIGKILL, NULL, 0);
		close(walker_pidfd);
	}
	if (walker_pid > 0)
		waitpid(walker_pid, NULL, WNOHANG);
	if (walker_in >= 0)
		close(walker_in);
	if (walker_out >= 0)
		close(walker_out);
	walker_in = walker_out = walker_pidfd = -1;
	walker_pid = 0;
}

bool stack_walker_reaped(pid_t pid)
{
	if (pid <= 0 || pid != walker_pid)
		return false;
	walker_pid = 0; /* reaped: its pid is free; stop() only closes */
	walker_stop();
	return true;
}

void stack_unwinder_early(void)
{
	if (getenv("LD_LIBRARY_PATH"))
		stack_unwind_load();
}

static int walker_start(void)
{
	if (!contain_prog.len && contain_build() < 0)
		return -1;
	int req[2], res[2];
	if (pipe2(req, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(res, O_CLOEXEC) < 0) {
		close(req[0]);
		close(req[1]);
		return -1;
	}
	pid_t parent = getpid();
	pid_t c = fork();
	if (c < 0) {
		close(req[0]), close(req[1]), close(res[0]), close(res[1]);
		return -1;
	}
	if (c == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		setpgid(0, 0); /* terminal signals are the program's, not ours */
		/* Nothing of moat's but the two pipes (as 3 and 4); 0-2 are
		 * /dev/null, not moat's terminal. */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(req[0], 3) < 0 || dup2(res[1], 4) < 0 || dup2(null, 0) < 0 ||
		    dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(1);
		syscall(SYS_close_range, 5, ~0U, 0);
		/* libunwind's files are the host's system libraries, mapped
		 * while this process still may (the filter below allows no
		 * executable mapping) */
		if (stack_unwind_load() < 0)
			_exit(1);
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2] = { 0 };
		bool root = geteuid() == 0;
		if (root) {
			/* Everything moat may raise, for the bounding set's drop;
			 * then the sandbox's uid, keeping CAP_SYS_PTRACE alone: its
			 * opens are what the sandbox could read itself. */
			if (syscall(SYS_capget, &h, d) < 0)
				_exit(1);
			d[0].effective = d[0].permitted, d[1].effective = d[1].permitted;
			if (syscall(SYS_capset, &h, d) < 0)
				_exit(1);
			for (int k = 0; k <= 63; k++)
				if (k != CAP_SYS_PTRACE && prctl(PR_CAPBSET_DROP, k, 0, 0, 0) < 0 &&
				    errno != EINVAL)
					_exit(1);
			if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ||
			    syscall(SYS_setgroups, 0, NULL) < 0 ||
			    syscall(SYS_setresgid, walker_gid, walker_gid, walker_gid) < 0 ||
			    syscall(SYS_setresuid, walker_uid, walker_uid, walker_uid) < 0)
				_exit(1);
			memset(d, 0, sizeof d);
			d[0].effective = d[0].permitted = 1u << CAP_SYS_PTRACE;
		}
		struct rlimit as = { 256u << 20, 256u << 20 };
#if defined(__SANITIZE_ADDRESS__)
		as.rlim_cur = as.rlim_max = RLIM_INFINITY; /* ASan's shadow is terabytes */
#endif
		if (syscall(SYS_capset, &h, d) < 0 || setrlimit(RLIMIT_AS, &as) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &contain_prog) < 0)
			_exit(1);
		walker_main(3, 4);
	}
	close(req[0]);
	close(res[1]);
	walker_in = req[1];
	walker_out = res[0];
	walker_pid = c;
	walker_pidfd = (int)syscall(SYS_pidfd_open, c, 0);
	/* A walker that stops reading must not block moat. */
	fcntl(walker_in, F_SETFL, O_NONBLOCK);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The return addresses of the thread, from the walker (stack_internal.h).
 * 0 on any trouble (and the walker is replaced). */
int stack_walk_contained(pid_t pid, pid_t tid, uint64_t ip, uint64_t sp, uint64_t *pcs, int max)
{
	if (walker_failures > 5 || (walker_pid <= 0 && walker_start() < 0))
		return 0;
	struct walk_req rq = { pid, tid, max, ip, sp };
	if (write(walker_in, &rq, sizeof rq) != (ssize_t)sizeof rq) {
		walker_stop();
		return 0;
	}
	uint64_t in[STACK_MAX + 1];
	size_t got = 0, want = sizeof in[0];
	struct pollfd pf = { walker_out, POLLIN, 0 };
	/* One deadline for the whole answer: a walker dribbling bytes must
	 * not hold the loop. */
	uint64_t deadline = now_ms() + 300;
	int left;
	while (got < want && (left = (int)(deadline - now_ms())) > 0 && poll(&pf, 1, left) > 0) {
		ssize_t r = read(walker_out, (char *)in + got, sizeof in - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got >= sizeof in[0]) {
			if (in[0] > STACK_MAX || (int)in[0] > max)
				break;
			want = (size_t)(in[0] + 1) * sizeof in[0];
		}
	}
	if (got < want || got < sizeof in[0]) {
		walker_stop(); /* slow, dead or confused: a new one next time */
		return 0;
	}
	int n = (int)in[0];
	memcpy(pcs, in + 1, (size_t)n * sizeof *pcs);
	return n;
}
