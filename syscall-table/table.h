/* The x86_64 syscall table: one line per syscall, indexed by number.
 *
 * Every number <asm/unistd_64.h> defines has an entry; a number without an
 * entry (name == NULL) is unknown and answered with ENOSYS plus an audit
 * record.  The seccomp filter is built from this table (filter.c), and the
 * dispatcher finds the handler here.  Nothing in this module performs a
 * syscall on the sandbox's behalf. */
#ifndef MOAT_SYSCALL_TABLE_H
#define MOAT_SYSCALL_TABLE_H

#include <stdint.h>

struct call;
struct verdict;

/* A handler turns a copied, validated call into a verdict (see
 * core/call.h).  It never replies; the dispatcher does. */
typedef struct verdict (*sc_handler)(struct call *c);

/* clang-format off */
enum sc_class {
	SC_FILE, SC_NET, SC_PROCESS, SC_MEMORY, SC_SIGNAL,
	SC_TIME, SC_IPC, SC_IDENTITY, SC_SYSTEM, SC_NCLASS
};
/* clang-format on */

/* Where a call goes.  KERNEL: allowed in the BPF filter, no cost.
 * KERNEL_IF: allowed in BPF when the register condition `cond` holds,
 * otherwise supervised (the handler then decides, usually deny).
 * SUPERVISE: user notification, the handler performs the call.
 * TRACE: SECCOMP_RET_TRACE, the handler decides at the ptrace stop (exec;
 * interposer/dispatch.c, dispatch_stop).
 * DENY: supervised only to be audited and refused with `err`. */
enum sc_disp { SC_KERNEL, SC_KERNEL_IF, SC_SUPERVISE, SC_TRACE, SC_DENY };

/* Register-only conditions for SC_KERNEL_IF; filter.c turns each into
 * libseccomp argument comparisons. */
enum sc_cond {
	COND_NONE,
	COND_AF_UNIX,             /* socketpair: arg0 == AF_UNIX */
	COND_SOCKET_PLAIN,        /* socket: AF_UNIX, or AF_INET/AF_INET6 TCP or UDP */
	COND_NO_NS_FLAGS,         /* clone: arg0 has no CLONE_NEW* bit */
	COND_NO_ADDR,             /* sendto: arg4 (dest addr) == NULL */
	COND_IOCTL_ALLOWED,       /* ioctl: arg1 is in the request allowlist */
	COND_SECCOMP_NO_LISTENER, /* seccomp: no NEW_LISTENER flag */
	COND_FCNTL_ALLOWED,       /* fcntl: arg1 is in the command allowlist (no F_SETOWN*) */
	COND_SOCKOPT_ALLOWED,     /* setsockopt: (level, option) in the allowlist */
	COND_CLOCK_OWN,           /* clock_*, timer_create: arg0 is no CPU clock of another pid */
	COND_FADV_KEEPS,          /* fadvise64: arg3 is not POSIX_FADV_DONTNEED */
	COND_NO_RWF_NOWAIT,       /* preadv2/pwritev2: arg5 without RWF_NOWAIT */
	COND_PID_SELF,            /* a pid in arg0 (low 32 bits) that is 0: the caller's own */
	COND_OWN_IPC,             /* SysV IPC, mq_open: always where the sandbox has an IPC
				     namespace of its own (moat root), never elsewhere */
};

/* Argument kinds: how the decoders print an argument in the audit log. */
enum sc_arg {
	A_NONE = 0,
	A_INT,         /* signed decimal */
	A_UINT,        /* unsigned decimal */
	A_HEX,         /* opaque value, hex */
	A_FD,          /* file descriptor */
	A_DIRFD,       /* fd or AT_FDCWD */
	A_PATH,        /* pointer to a NUL-terminated path */
	A_STR,         /* pointer to another string (xattr name, ...) */
	A_OFLAGS,      /* open(2) flags */
	A_ATFLAGS,     /* AT_* flags */
	A_MODE,        /* permission bits, octal */
	A_PTR,         /* pointer to something not decoded */
	A_BUF,         /* pointer to a buffer */
	A_SIZE,        /* a length */
	A_OFF,         /* a file offset */
	A_PID,         /* a process or thread id */
	A_SIG,         /* a signal number */
	A_SOCKADDR,    /* pointer to a struct sockaddr */
	A_MSGHDR,      /* pointer to a struct msghdr */
	A_FAMILY,      /* address family (AF_*) */
	A_SOCKTYPE,    /* socket type with SOCK_* flags */
	A_CLONE,       /* clone flags */
	A_IOCTL,       /* ioctl request */
	A_UID,         /* uid or gid */
	A_PROT,        /* mmap protection */
	A_MAPFLAGS,    /* mmap flags */
	A_ARGV,        /* pointer to a NULL-terminated string vector */
	A_OPENHOW,     /* pointer to struct open_how */
	A_RENAMEFLAGS, /* renameat2 flags */
	A_NKINDS
};

struct sc_entry {
	const char *name;   /* NULL: no such syscall */
	uint8_t arg[6];     /* enum sc_arg, A_NONE past the last */
	uint8_t cls;        /* enum sc_class */
	uint8_t disp;       /* enum sc_disp */
	uint8_t cond;       /* enum sc_cond, for SC_KERNEL_IF */
	int16_t err;        /* errno for SC_DENY */
	sc_handler handler; /* for SC_SUPERVISE, SC_KERNEL_IF and SC_TRACE */
};

#define SC_NR_MAX 512

extern const struct sc_entry sc_table[SC_NR_MAX];

/* The entry for `nr`, or NULL when the table does not know it. */
const struct sc_entry *sc_lookup(long nr);
/* The syscall's name, or NULL. */
const char *sc_name(long nr);
/* The number of a syscall by name, or -1. */
int sc_by_name(const char *name);
const char *sc_class_name(unsigned cls);
const char *sc_disp_name(unsigned disp);

/* The fcntl commands that run in the kernel (COND_FCNTL_ALLOWED). */
extern const unsigned sc_fcntl_allowed[];
extern const unsigned sc_fcntl_nallowed;

/* The socket options that run in the kernel (COND_SOCKOPT_ALLOWED): every
 * option of the levels in sc_sockopt_levels, and the (level, option) pairs
 * of sc_sockopt_allowed.  The rest — an interface (SO_BINDTODEVICE),
 * multicast membership, anything unlisted — is performed by the supervisor,
 * which refuses the interface and multicast ones on a socket of the host's
 * network (docs/network.md). */
extern const int sc_sockopt_levels[];
extern const unsigned sc_sockopt_nlevels;
extern const struct sc_sockopt {
	int level, option;
} sc_sockopt_allowed[];
extern const unsigned sc_sockopt_nallowed;
/* The ioctl requests that run in the kernel (COND_IOCTL_ALLOWED). */
extern const unsigned long sc_ioctl_allowed[];
extern const unsigned sc_ioctl_nallowed;

#endif
