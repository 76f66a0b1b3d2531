/* Building the seccomp BPF program from sc_table (see filter.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "syscall-table/filter.h"
#include "syscall-table/table.h"

#if !defined(__x86_64__)
#error "the syscall table and filter are x86_64 only; aarch64 needs its own table"
#endif

/* The kernel reads an `int` or `unsigned int` argument from the low 32 bits
 * of its register; the filter sees all 64.  Comparing only the low half is
 * what the kernel will act on. */
#define LOW32 0xffffffffULL

static void ctx_release(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}
static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
static void mem_free(void *p)
{
	free(*(void **)p);
}
#define _cleanup_ctx_ __attribute__((cleanup(ctx_release)))
#define _cleanup_close_ __attribute__((cleanup(fd_close)))
#define _cleanup_free_ __attribute__((cleanup(mem_free)))

/* The variant being built (see filter.h): moat not root, so the sandbox
 * shares the host's network and IPC namespaces: inet sockets supervised,
 * SysV IPC refused. */
static bool inet_supervised;

static int allow_if(scmp_filter_ctx ctx, int nr, unsigned cnt, const struct scmp_arg_cmp *cmp)
{
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, cnt, cmp);
}

/* Turn a register-only condition into ALLOW rules; rules for one syscall
 * are OR-ed, the comparisons inside one rule AND-ed.  Whatever no rule
 * matches falls to the default action and reaches the handler. */
static int add_cond(scmp_filter_ctx ctx, int nr, unsigned cond)
{
	int rc = -EINVAL;

	switch (cond) {
	case COND_AF_UNIX: {
		/* All 64 bits: a domain with junk above bit 31 is supervised,
		 * never allowed on a guess.  (The trailing 0 of SCMP_CMP_EQ is
		 * the unused datum_b, spelled out for -Wmissing-field-
		 * initializers under clang.) */
		const struct scmp_arg_cmp c[] = { SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0) };
		return allow_if(ctx, nr, 1, c);
	}
	case COND_SOCKET_PLAIN: {
		/* AF_UNIX of any type; AF_INET and AF_INET6 only as TCP or
		 * UDP (protocol 0 or named), type flags SOCK_NONBLOCK and
		 * SOCK_CLOEXEC allowed.  Raw, ICMP, SCTP and the rest reach
		 * the handler.  type and protocol are ints: low 32 bits. */
		const struct scmp_arg_cmp u[] = { SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0) };
		rc = allow_if(ctx, nr, 1, u);
		static const int fams[] = { AF_INET, AF_INET6 };
		static const struct {
			int type, proto;
		} kinds[] = {
			{ SOCK_STREAM, 0 },
			{ SOCK_STREAM, IPPROTO_TCP },
			{ SOCK_DGRAM, 0 },
			{ SOCK_DGRAM, IPPROTO_UDP },
		};
		const uint64_t tmask = LOW32 & ~(uint64_t)(SOCK_NONBLOCK | SOCK_CLOEXEC);
		for (unsigned f = 0; rc == 0 && f < 2; f++)
			for (unsigned k = 0; rc == 0 && k < 4; k++) {
				const struct scmp_arg_cmp c[] = {
					SCMP_A0(SCMP_CMP_EQ, (uint64_t)fams[f], 0),
					SCMP_A1(SCMP_CMP_MASKED_EQ, tmask, (uint64_t)kinds[k].type),
					SCMP_A2(SCMP_CMP_MASKED_EQ, LOW32,
						(uint64_t)kinds[k].proto),
				};
				rc = allow_if(ctx, nr, 3, c);
			}
		return rc;
	}
	case COND_OWN_IPC:
		/* The sandbox's own IPC namespace holds every key, id and
		 * queue name: nothing there is the host's.  Without one
		 * (moat not root) the handler refuses. */
		return inet_supervised ? 0 : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	case COND_NO_NS_FLAGS: {
		const struct scmp_arg_cmp c[] = { SCMP_A0(SCMP_CMP_MASKED_EQ,
							  SC_CLONE_SUPERVISED_FLAGS, 0) };
		return allow_if(ctx, nr, 1, c);
	}
	case COND_NO_ADDR: {
		const struct scmp_arg_cmp c[] = { SCMP_A4(SCMP_CMP_EQ, 0, 0) };
		return allow_if(ctx, nr, 1, c);
	}
	case COND_IOCTL_ALLOWED:
		/* ioctl's cmd is an unsigned int: high bits are ignored by the
		 * kernel, so they must be ignored here too, or a program would
		 * see a harmless request refused. */
		for (unsigned i = 0; i < sc_ioctl_nallowed; i++) {
			const struct scmp_arg_cmp c[] = { SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32,
								  sc_ioctl_allowed[i] & LOW32) };
			rc = allow_if(ctx, nr, 1, c);
			if (rc < 0)
				return rc;
		}
		return rc;
	case COND_FCNTL_ALLOWED:
		/* cmd is an unsigned int, compared on its low 32 bits. */
		for (unsigned i = 0; i < sc_fcntl_nallowed; i++) {
			const struct scmp_arg_cmp c[] = { SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32,
								  sc_fcntl_allowed[i]) };
			rc = allow_if(ctx, nr, 1, c);
			if (rc < 0)
				return rc;
		}
		return rc;
	case COND_SOCKOPT_ALLOWED:
		/* level and optname are ints: their low 32 bits. */
		for (unsigned i = 0; i < sc_sockopt_nlevels; i++) {
			const struct scmp_arg_cmp c[] = { SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32,
								  (uint32_t)sc_sockopt_levels[i]) };
			if ((rc = allow_if(ctx, nr, 1, c)) < 0)
				return rc;
		}
		for (unsigned i = 0; i < sc_sockopt_nallowed; i++) {
			const struct scmp_arg_cmp c[] = {
				SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32,
					(uint32_t)sc_sockopt_allowed[i].level),
				SCMP_A2(SCMP_CMP_MASKED_EQ, LOW32,
					(uint32_t)sc_sockopt_allowed[i].option),
			};
			if ((rc = allow_if(ctx, nr, 2, c)) < 0)
				return rc;
		}
		return rc;
	case COND_CLOCK_OWN: {
		/* clockid_t is an int.  Every clock that is not a CPU clock is
		 * >= 0; a CPU clock is ~pid << 3 | (thread ? 4 : 0) | type, so
		 * the caller's own (pid 0) are -8..-1, and another pid's are
		 * below -8: those go to the supervisor.  As 32-bit unsigned:
		 * 0..0x7fffffff, or 0xfffffff8 and above. */
		const struct scmp_arg_cmp c1[] = { SCMP_A0(SCMP_CMP_MASKED_EQ, 0x80000000ULL, 0) };
		if ((rc = allow_if(ctx, nr, 1, c1)) < 0)
			return rc;
		const struct scmp_arg_cmp c2[] = { SCMP_A0(SCMP_CMP_MASKED_EQ, 0xfffffff8ULL,
							   0xfffffff8ULL) };
		return allow_if(ctx, nr, 1, c2);
	}
	case COND_FADV_KEEPS: {
		/* advice is an int; DONTNEED (4) drops pages of the host's
		 * page cache: every other advice runs in the kernel. */
		for (uint64_t a = 0; a <= 5; a++) {
			if (a == 4)
				continue;
			const struct scmp_arg_cmp k[] = { SCMP_A3(SCMP_CMP_MASKED_EQ, LOW32, a) };
			if ((rc = allow_if(ctx, nr, 1, k)) < 0)
				return rc;
		}
		return rc;
	}
	case COND_NO_RWF_NOWAIT: {
		const struct scmp_arg_cmp c[] = { SCMP_A5(SCMP_CMP_MASKED_EQ, 0x8 /* RWF_NOWAIT */,
							  0) };
		return allow_if(ctx, nr, 1, c);
	}
	case COND_PID_SELF: {
		/* pid_t is an int: the kernel reads the low 32 bits, and 0 is
		 * the caller itself (prlimit64(0) in every process start,
		 * sched_getaffinity(0) in every runtime that counts CPUs).
		 * Any other pid reaches the handler, which asks the task table. */
		const struct scmp_arg_cmp c[] = { SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, 0) };
		return allow_if(ctx, nr, 1, c);
	}
	case COND_SECCOMP_NO_LISTENER: {
		/* op is an unsigned int.  "op != SET_MODE_FILTER" on all 64
		 * bits would let op = 0x100000001 through, which the kernel
		 * reads as SET_MODE_FILTER; so the harmless ops are listed
		 * by their low 32 bits instead, and SET_MODE_FILTER is
		 * allowed only without NEW_LISTENER. */
		static const uint64_t ops[] = {
			SECCOMP_SET_MODE_STRICT,
			SECCOMP_GET_ACTION_AVAIL,
			SECCOMP_GET_NOTIF_SIZES,
		};
		for (unsigned i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			const struct scmp_arg_cmp c[] = { SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32,
								  ops[i]) };
			rc = allow_if(ctx, nr, 1, c);
			if (rc < 0)
				return rc;
		}
		const struct scmp_arg_cmp c[] = {
			SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, SECCOMP_SET_MODE_FILTER),
			SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0),
		};
		return allow_if(ctx, nr, 2, c);
	}
	default: return -EINVAL;
	}
}

/* The libseccomp context for the whole table.  0 or -errno. */

static int filter_ctx(scmp_filter_ctx *out)
{
	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		return -EOPNOTSUPP;

	/* Deny first: anything no rule below allows goes to the supervisor. */
	_cleanup_ctx_ scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_NOTIFY);
	if (!ctx)
		return -EINVAL; /* libseccomp says nothing more */

	/* The native (x86_64) arch is the only one in the context, so an
	 * i386 `int 0x80` fails the arch check, and libseccomp adds the x32
	 * check itself (nr >= 0x40000000 && nr != -1 -> bad-arch action);
	 * tests/unit/test_filter.c proves both kill. */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0) /* binary search over ~240 rules instead of a chain */
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0)
		return rc;

	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		const struct sc_entry *e = &sc_table[nr];

		if (!e->name)
			continue;
		switch (e->disp) {
		case SC_KERNEL: rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0); break;
		case SC_KERNEL_IF:
			rc = add_cond(ctx, nr,
				      inet_supervised && e->cond == COND_SOCKET_PLAIN ? COND_AF_UNIX
										      : e->cond);
			break;
		case SC_TRACE:
			if (nr == __NR_execveat) {
				/* All but moat's own exec by fd (SC_EXEC_FD_COOKIE),
				 * which falls to the default: a notification. */
				const struct scmp_arg_cmp c[] = { SCMP_A5(SCMP_CMP_NE,
									  SC_EXEC_FD_COOKIE, 0) };
				rc = seccomp_rule_add_array(ctx, SCMP_ACT_TRACE(SC_TRACE_DATA), nr,
							    1, c);
			} else {
				rc = seccomp_rule_add(ctx, SCMP_ACT_TRACE(SC_TRACE_DATA), nr, 0);
			}
			break;
		case SC_SUPERVISE:
		case SC_DENY:
			rc = 0; /* the default action */
			break;
		default:
			rc = -EINVAL; /* a table line we do not understand */
			break;
		}
		if (rc < 0)
			return rc;
	}
	*out = ctx;
	ctx = NULL;
	return 0;
}

/* Read all of memfd `fd` into a malloc'd buffer.  0 or -errno. */
static int slurp(int fd, void **buf, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	if (end < 0)
		return -errno;
	_cleanup_free_ char *p = malloc(end ? (size_t)end : 1);
	if (!p)
		return -ENOMEM;
	size_t got = 0;
	while (got < (size_t)end) {
		ssize_t n = pread(fd, p + got, (size_t)end - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		got += (size_t)n;
	}
	*buf = p;
	p = NULL;
	*len = got;
	return 0;
}

/* Export the context in one of libseccomp's formats into a memfd and read
 * it back (libseccomp 2.5 only writes to fds). */
static int export(int (*fn)(const scmp_filter_ctx, int), void **buf, size_t *len)
{
	_cleanup_ctx_ scmp_filter_ctx ctx = NULL;
	int rc = filter_ctx(&ctx);
	if (rc < 0)
		return rc;
	_cleanup_close_ int fd = memfd_create("moat-filter", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = fn(ctx, fd);
	if (rc < 0)
		return rc;
	return slurp(fd, buf, len);
}

int sc_filter_build(struct sock_fprog *prog)
{
	return sc_filter_build_variant(prog, false);
}

int sc_filter_build_variant(struct sock_fprog *prog, bool inet_sockets_supervised)
{
	_cleanup_free_ void *buf = NULL;
	size_t len = 0;
	inet_supervised = inet_sockets_supervised;
	int rc = export(seccomp_export_bpf, &buf, &len);
	inet_supervised = false;
	if (rc < 0)
		return rc;
	if (len == 0 || len % sizeof(struct sock_filter))
		return -EIO;
	if (len / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -E2BIG;
	prog->len = (unsigned short)(len / sizeof(struct sock_filter));
	prog->filter = buf;
	buf = NULL;
	return 0;
}

int sc_filter_pfc(FILE *out)
{
	_cleanup_free_ void *buf = NULL;
	size_t len = 0;
	int rc = export(seccomp_export_pfc, &buf, &len);
	if (rc < 0)
		return rc;
	if (fwrite(buf, 1, len, out) != len || fflush(out) != 0)
		return -EIO;
	return 0;
}
