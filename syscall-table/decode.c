/* Argument decoders (see decode.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/ioctl.h>
#include <asm/termbits.h> /* struct termios2, for TCGETS2 and friends */
#include <linux/fs.h>

#include "syscall-table/decode.h"
#include "syscall-table/table.h"

/* Kernel values glibc 2.36 does not name (or names as 0, like O_LARGEFILE
 * on x86_64, where the kernel still has the bit). */
#define K_O_LARGEFILE 0100000
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef PROT_SEM
#define PROT_SEM 0x8
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* An snprintf-style sink: writes what fits, counts everything. */
struct out {
	char *buf;
	size_t len;
	size_t pos; /* length of the full text so far */
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->pos < o->len ? o->len - o->pos : 0;

	va_start(ap, fmt);
	int n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

static int done(struct out *o)
{
	if (o->len && o->pos >= o->len)
		o->buf[o->len - 1] = '\0';
	else if (o->len && o->pos == 0)
		o->buf[0] = '\0';
	return o->pos > INT32_MAX ? INT32_MAX : (int)o->pos;
}

/* Bytes from the sandbox: printable ASCII as is, the rest as \xNN, so the
 * text is one line whatever the program put in its names. */
static void put_escaped(struct out *o, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\')
			put(o, "\\\\");
		else if (s[i] >= 0x20 && s[i] < 0x7f)
			put(o, "%c", s[i]);
		else
			put(o, "\\x%02x", s[i]);
	}
}

struct flag {
	uint64_t bits;
	const char *name;
};
/* clang-format off */
#define FL(x) { (uint64_t)(x), #x }

/* NAME|NAME|0xrest; a multi-bit entry matches only when all its bits are
 * set, so list those before their parts.  `first` false means something
 * was printed already and the flags continue it with '|'. */
static void put_flags(struct out *o, uint64_t v, const struct flag *f, size_t n, bool first)
{
	for (size_t i = 0; i < n && v; i++) {
		if (f[i].bits && (v & f[i].bits) == f[i].bits) {
			put(o, "%s%s", first ? "" : "|", f[i].name);
			v &= ~f[i].bits;
			first = false;
		}
	}
	if (v)
		put(o, "%s%#llx", first ? "" : "|", (unsigned long long)v);
	else if (first)
		put(o, "0");
}

static const struct flag open_flags[] = {
	FL(O_TMPFILE), FL(O_SYNC), /* multi-bit: before O_DIRECTORY, O_DSYNC */
	FL(O_CREAT), FL(O_EXCL), FL(O_NOCTTY), FL(O_TRUNC), FL(O_APPEND),
	FL(O_NONBLOCK), FL(O_DSYNC), FL(O_ASYNC), FL(O_DIRECT),
	{ K_O_LARGEFILE, "O_LARGEFILE" }, FL(O_DIRECTORY), FL(O_NOFOLLOW),
	FL(O_NOATIME), FL(O_CLOEXEC), FL(O_PATH),
};

static const struct flag at_flags[] = {
	FL(AT_SYMLINK_NOFOLLOW), FL(AT_REMOVEDIR), FL(AT_SYMLINK_FOLLOW),
	FL(AT_NO_AUTOMOUNT), FL(AT_EMPTY_PATH), FL(AT_STATX_FORCE_SYNC),
	FL(AT_STATX_DONT_SYNC), FL(AT_RECURSIVE),
};

static const struct flag clone_flags[] = {
	FL(CLONE_VM), FL(CLONE_FS), FL(CLONE_FILES), FL(CLONE_SIGHAND),
	FL(CLONE_PIDFD), FL(CLONE_PTRACE), FL(CLONE_VFORK), FL(CLONE_PARENT),
	FL(CLONE_THREAD), FL(CLONE_NEWNS), FL(CLONE_SYSVSEM), FL(CLONE_SETTLS),
	FL(CLONE_PARENT_SETTID), FL(CLONE_CHILD_CLEARTID), FL(CLONE_DETACHED),
	FL(CLONE_UNTRACED), FL(CLONE_CHILD_SETTID), FL(CLONE_NEWCGROUP),
	FL(CLONE_NEWUTS), FL(CLONE_NEWIPC), FL(CLONE_NEWUSER), FL(CLONE_NEWPID),
	FL(CLONE_NEWNET), FL(CLONE_IO), FL(CLONE_CLEAR_SIGHAND),
	FL(CLONE_INTO_CGROUP),
};

static const struct flag sock_flags[] = { FL(SOCK_NONBLOCK), FL(SOCK_CLOEXEC) };

static const struct flag prot_flags[] = {
	FL(PROT_READ), FL(PROT_WRITE), FL(PROT_EXEC), FL(PROT_SEM),
	FL(PROT_GROWSDOWN), FL(PROT_GROWSUP),
};

static const struct flag map_flags[] = {
	FL(MAP_FIXED), FL(MAP_ANONYMOUS), FL(MAP_32BIT), FL(MAP_GROWSDOWN),
	FL(MAP_DENYWRITE), FL(MAP_EXECUTABLE), FL(MAP_LOCKED),
	FL(MAP_NORESERVE), FL(MAP_POPULATE), FL(MAP_NONBLOCK), FL(MAP_STACK),
	FL(MAP_HUGETLB), FL(MAP_SYNC), FL(MAP_FIXED_NOREPLACE),
};

static const struct flag rename_flags[] = {
	FL(RENAME_NOREPLACE), FL(RENAME_EXCHANGE), FL(RENAME_WHITEOUT),
};
/* clang-format on */

#define E(x) [x] = #x
/* clang-format off */
static const char *const errno_names[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
	E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES),
	E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
	E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK),
	E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK),
	E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ECHRNG),
	E(EL2NSYNC), E(EL3HLT), E(EL3RST), E(ELNRNG), E(EUNATCH), E(ENOCSI),
	E(EL2HLT), E(EBADE), E(EBADR), E(EXFULL), E(ENOANO), E(EBADRQC),
	E(EBADSLT), E(EBFONT), E(ENOSTR), E(ENODATA), E(ETIME), E(ENOSR),
	E(ENONET), E(ENOPKG), E(EREMOTE), E(ENOLINK), E(EADV), E(ESRMNT),
	E(ECOMM), E(EPROTO), E(EMULTIHOP), E(EDOTDOT), E(EBADMSG),
	E(EOVERFLOW), E(ENOTUNIQ), E(EBADFD), E(EREMCHG), E(ELIBACC),
	E(ELIBBAD), E(ELIBSCN), E(ELIBMAX), E(ELIBEXEC), E(EILSEQ),
	E(ERESTART), E(ESTRPIPE), E(EUSERS), E(ENOTSOCK), E(EDESTADDRREQ),
	E(EMSGSIZE), E(EPROTOTYPE), E(ENOPROTOOPT), E(EPROTONOSUPPORT),
	E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT), E(EAFNOSUPPORT),
	E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH),
	E(ENETRESET), E(ECONNABORTED), E(ECONNRESET), E(ENOBUFS), E(EISCONN),
	E(ENOTCONN), E(ESHUTDOWN), E(ETOOMANYREFS), E(ETIMEDOUT),
	E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY),
	E(EINPROGRESS), E(ESTALE), E(EUCLEAN), E(ENOTNAM), E(ENAVAIL),
	E(EISNAM), E(EREMOTEIO), E(EDQUOT), E(ENOMEDIUM), E(EMEDIUMTYPE),
	E(ECANCELED), E(ENOKEY), E(EKEYEXPIRED), E(EKEYREVOKED),
	E(EKEYREJECTED), E(EOWNERDEAD), E(ENOTRECOVERABLE), E(ERFKILL),
	E(EHWPOISON),
};
/* clang-format on */
#undef E

const char *sc_errno_name(int err)
{
	/* The kernel's internal restart codes (include/linux/errno.h): a
	 * tracer sees them in rax at a syscall-exit stop. */
	switch (err) {
	case 512: return "ERESTARTSYS";
	case 513: return "ERESTARTNOINTR";
	case 514: return "ERESTARTNOHAND";
	case 515: return "ENOIOCTLCMD";
	case 516: return "ERESTART_RESTARTBLOCK";
	case 524: return "ENOTSUPP";
	}
	if (err <= 0 || (size_t)err >= ARRAY_LEN(errno_names))
		return NULL;
	return errno_names[err];
}

#define S(x) [x] = #x
/* clang-format off */
static const char *const signal_names[] = {
	S(SIGHUP), S(SIGINT), S(SIGQUIT), S(SIGILL), S(SIGTRAP), S(SIGABRT),
	S(SIGBUS), S(SIGFPE), S(SIGKILL), S(SIGUSR1), S(SIGSEGV), S(SIGUSR2),
	S(SIGPIPE), S(SIGALRM), S(SIGTERM), S(SIGSTKFLT), S(SIGCHLD),
	S(SIGCONT), S(SIGSTOP), S(SIGTSTP), S(SIGTTIN), S(SIGTTOU), S(SIGURG),
	S(SIGXCPU), S(SIGXFSZ), S(SIGVTALRM), S(SIGPROF), S(SIGWINCH), S(SIGIO),
	S(SIGPWR), S(SIGSYS),
	/* The kernel's SIGRTMIN is 32 (glibc keeps 32 and 33 for itself and
	 * calls 34 SIGRTMIN); strace's names, which do not depend on libc. */
	[32] = "SIGRTMIN",
	"SIGRT_1", "SIGRT_2", "SIGRT_3", "SIGRT_4", "SIGRT_5", "SIGRT_6",
	"SIGRT_7", "SIGRT_8", "SIGRT_9", "SIGRT_10", "SIGRT_11", "SIGRT_12",
	"SIGRT_13", "SIGRT_14", "SIGRT_15", "SIGRT_16", "SIGRT_17", "SIGRT_18",
	"SIGRT_19", "SIGRT_20", "SIGRT_21", "SIGRT_22", "SIGRT_23", "SIGRT_24",
	"SIGRT_25", "SIGRT_26", "SIGRT_27", "SIGRT_28", "SIGRT_29", "SIGRT_30",
	"SIGRT_31", "SIGRT_32",
};
/* clang-format on */
#undef S

const char *sc_signal_name(int sig)
{
	if (sig <= 0 || (size_t)sig >= ARRAY_LEN(signal_names))
		return NULL;
	return signal_names[sig];
}

#define A(x) [x] = #x
static const char *const family_names[] = {
	A(AF_UNSPEC),    A(AF_UNIX),       A(AF_INET),    A(AF_AX25),    A(AF_IPX),
	A(AF_APPLETALK), A(AF_NETROM),     A(AF_BRIDGE),  A(AF_ATMPVC),  A(AF_X25),
	A(AF_INET6),     A(AF_ROSE),       A(AF_DECnet),  A(AF_NETBEUI), A(AF_SECURITY),
	A(AF_KEY),       A(AF_NETLINK),    A(AF_PACKET),  A(AF_ASH),     A(AF_ECONET),
	A(AF_ATMSVC),    A(AF_RDS),        A(AF_SNA),     A(AF_IRDA),    A(AF_PPPOX),
	A(AF_WANPIPE),   A(AF_LLC),        A(AF_IB),      A(AF_MPLS),    A(AF_CAN),
	A(AF_TIPC),      A(AF_BLUETOOTH),  A(AF_IUCV),    A(AF_RXRPC),   A(AF_ISDN),
	A(AF_PHONET),    A(AF_IEEE802154), A(AF_CAIF),    A(AF_ALG),     A(AF_NFC),
	A(AF_VSOCK),     A(AF_KCM),        A(AF_QIPCRTR), A(AF_SMC),     A(AF_XDP),
	A(AF_MCTP),
};
#undef A

const char *sc_family_name(int af)
{
	if (af < 0 || (size_t)af >= ARRAY_LEN(family_names))
		return NULL;
	return family_names[af];
}

/* clang-format off */
static const struct flag ioctl_names[] = {
	/* the allowlist (table.c) */
	FL(TCGETS), FL(TCSETS), FL(TCSETSW), FL(TCSETSF), FL(TCGETA),
	FL(TCSETA), FL(TCSETAW), FL(TCSETAF), FL(TCSBRK), FL(TCXONC),
	FL(TCFLSH), FL(TIOCGPGRP), FL(TIOCSPGRP), FL(TIOCOUTQ), FL(TIOCGWINSZ),
	FL(TIOCSWINSZ), FL(TIOCGSID), FL(TIOCMGET), FL(FIONREAD), FL(FIONBIO),
	FL(FIOCLEX), FL(FIONCLEX), FL(FIOASYNC), FL(TIOCGPTN), FL(TIOCSPTLCK),
	FL(TIOCGPTPEER), FL(TCGETS2), FL(TCSETS2), FL(TCSETSW2), FL(TCSETSF2),
	FL(FIGETBSZ), FL(FS_IOC_GETFLAGS),
	/* refused, named so a denial reads well */
	FL(TIOCSTI), FL(TIOCSCTTY), FL(TIOCNOTTY), FL(TIOCLINUX), FL(TIOCCONS),
	FL(TIOCSETD), FL(TIOCGETD), FL(TIOCEXCL), FL(TIOCNXCL), FL(TIOCPKT),
	FL(TIOCMSET), FL(TIOCMBIS), FL(TIOCMBIC), FL(TIOCSBRK), FL(TIOCCBRK),
	FL(TCSBRKP), FL(TIOCVHANGUP), FL(TIOCGSERIAL), FL(TIOCSSERIAL),
	FL(TIOCGLCKTRMIOS), FL(TIOCSLCKTRMIOS), FL(FIOQSIZE), FL(FIBMAP),
	FL(FICLONE), FL(FICLONERANGE), FL(FIDEDUPERANGE), FL(FS_IOC_SETFLAGS),
	FL(FS_IOC_GETVERSION), FL(FS_IOC_SETVERSION), FL(FS_IOC_FSGETXATTR),
	FL(FS_IOC_FSSETXATTR), FL(BLKGETSIZE64), FL(FIOSETOWN), FL(FIOGETOWN),
	FL(SIOCSPGRP), FL(SIOCGPGRP), FL(SIOCATMARK), FL(SIOCGIFCONF),
	FL(SIOCGIFFLAGS), FL(SIOCSIFFLAGS), FL(SIOCGIFINDEX), FL(SIOCGIFNAME),
	FL(SIOCGIFADDR), FL(SIOCGIFHWADDR), FL(SIOCGIFMTU),
};
/* clang-format on */

const char *sc_ioctl_name(unsigned long req)
{
	uint32_t r = (uint32_t)req; /* the kernel's cmd is an unsigned int */

	for (size_t i = 0; i < ARRAY_LEN(ioctl_names); i++)
		if ((uint32_t)ioctl_names[i].bits == r)
			return ioctl_names[i].name;
	return NULL;
}

static void put_ptr(struct out *o, uint64_t v)
{
	if (v)
		put(o, "%#llx", (unsigned long long)v);
	else
		put(o, "NULL");
}

static void put_mode(struct out *o, uint32_t v)
{
	static const struct flag types[] = {
		FL(S_IFSOCK), FL(S_IFLNK), FL(S_IFREG), FL(S_IFBLK),
		FL(S_IFDIR),  FL(S_IFCHR), FL(S_IFIFO),
	};
	uint32_t type = v & S_IFMT, rest = v & ~(uint32_t)(S_IFMT | 07777);
	bool named = false;

	for (size_t i = 0; type && i < ARRAY_LEN(types); i++) {
		if (types[i].bits == type) {
			put(o, "%s|", types[i].name);
			named = true;
		}
	}
	if (type && !named)
		rest |= type;
	put(o, "%#o", v & 07777);
	if (rest)
		put(o, "|%#x", rest);
}

int sc_decode_arg(char *buf, size_t len, unsigned kind, uint64_t val)
{
	struct out o = { buf, len, 0 };
	uint32_t lo = (uint32_t)val;
	const char *name;

	switch (kind) {
	case A_NONE: break;
	case A_INT:
	case A_FD:
	case A_PID: put(&o, "%d", (int32_t)lo); break;
	case A_UINT: put(&o, "%u", lo); break;
	case A_SIZE: put(&o, "%llu", (unsigned long long)val); break;
	case A_OFF: put(&o, "%lld", (long long)(int64_t)val); break;
	case A_DIRFD:
		if ((int32_t)lo == AT_FDCWD)
			put(&o, "AT_FDCWD");
		else
			put(&o, "%d", (int32_t)lo);
		break;
	case A_PTR:
	case A_BUF:
	case A_PATH:
	case A_STR:
	case A_SOCKADDR:
	case A_MSGHDR:
	case A_ARGV:
	case A_OPENHOW: put_ptr(&o, val); break;
	case A_OFLAGS: {
		static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE" };
		put(&o, "%s", acc[lo & O_ACCMODE]);
		if (lo & ~(uint32_t)O_ACCMODE)
			put_flags(&o, lo & ~(uint32_t)O_ACCMODE, open_flags, ARRAY_LEN(open_flags),
				  false);
		break;
	}
	case A_ATFLAGS: put_flags(&o, lo, at_flags, ARRAY_LEN(at_flags), true); break;
	case A_RENAMEFLAGS: put_flags(&o, lo, rename_flags, ARRAY_LEN(rename_flags), true); break;
	case A_MODE: put_mode(&o, lo); break;
	case A_SIG:
		if ((name = sc_signal_name((int32_t)lo)))
			put(&o, "%s", name);
		else
			put(&o, "%d", (int32_t)lo);
		break;
	case A_FAMILY:
		if ((name = sc_family_name((int32_t)lo)))
			put(&o, "%s", name);
		else
			put(&o, "%d", (int32_t)lo);
		break;
	case A_SOCKTYPE: {
		static const char *const types[] = {
			[SOCK_STREAM] = "SOCK_STREAM",
			[SOCK_DGRAM] = "SOCK_DGRAM",
			[SOCK_RAW] = "SOCK_RAW",
			[SOCK_RDM] = "SOCK_RDM",
			[SOCK_SEQPACKET] = "SOCK_SEQPACKET",
			[SOCK_DCCP] = "SOCK_DCCP",
			[SOCK_PACKET] = "SOCK_PACKET",
		};
		uint32_t t = lo & 0xf; /* SOCK_TYPE_MASK */
		if (t < ARRAY_LEN(types) && types[t])
			put(&o, "%s", types[t]);
		else
			put(&o, "%u", t);
		if (lo & ~0xfu)
			put_flags(&o, lo & ~0xfu, sock_flags, ARRAY_LEN(sock_flags), false);
		break;
	}
	case A_CLONE: {
		/* clone's low byte is the exit signal (CSIGNAL). */
		uint64_t flags = val & ~(uint64_t)CSIGNAL;
		int sig = (int)(val & CSIGNAL);
		if (flags)
			put_flags(&o, flags, clone_flags, ARRAY_LEN(clone_flags), true);
		if (sig) {
			name = sc_signal_name(sig);
			if (name)
				put(&o, "%s%s", flags ? "|" : "", name);
			else
				put(&o, "%s%#x", flags ? "|" : "", sig);
		}
		if (!flags && !sig)
			put(&o, "0");
		break;
	}
	case A_IOCTL:
		if ((name = sc_ioctl_name(lo)))
			put(&o, "%s", name);
		else
			put(&o, "%#x", lo);
		break;
	case A_UID:
		if (lo == (uint32_t)-1)
			put(&o, "-1");
		else
			put(&o, "%u", lo);
		break;
	case A_PROT:
		if (lo == PROT_NONE)
			put(&o, "PROT_NONE");
		else
			put_flags(&o, lo, prot_flags, ARRAY_LEN(prot_flags), true);
		break;
	case A_MAPFLAGS: {
		static const char *const types[] = {
			[MAP_SHARED] = "MAP_SHARED",
			[MAP_PRIVATE] = "MAP_PRIVATE",
			[MAP_SHARED_VALIDATE] = "MAP_SHARED_VALIDATE",
		};
		uint32_t t = lo & 0x0f; /* MAP_TYPE */
		if (t < ARRAY_LEN(types) && types[t])
			put(&o, "%s", types[t]);
		else
			put(&o, "%#x", t);
		if (lo & ~0x0fu)
			put_flags(&o, lo & ~0x0fu, map_flags, ARRAY_LEN(map_flags), false);
		break;
	}
	case A_HEX:
	default: put(&o, "%#llx", (unsigned long long)val); break;
	}
	return done(&o);
}

int sc_decode_sockaddr(char *buf, size_t len, const void *sa, size_t salen)
{
	struct out o = { buf, len, 0 };
	struct sockaddr_storage ss;
	sa_family_t family;

	if (!sa || salen < sizeof(family)) {
		put(&o, "(none)");
		return done(&o);
	}
	/* A copy: `sa` may sit anywhere in a buffer and be any length. */
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, sa, salen < sizeof(ss) ? salen : sizeof(ss));
	if (salen > sizeof(ss))
		salen = sizeof(ss);
	family = ss.ss_family;

	switch (family) {
	case AF_UNIX: {
		const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;
		size_t off = offsetof(struct sockaddr_un, sun_path);
		size_t n = salen > sizeof(*un) ? sizeof(un->sun_path) : salen - off;
		const unsigned char *p = (const unsigned char *)un->sun_path;

		if (n == 0) {
			put(&o, "(unnamed)");
		} else if (p[0] == '\0') {
			/* Abstract: every byte after the NUL is the name,
			 * NULs included. */
			put(&o, "@");
			put_escaped(&o, p + 1, n - 1);
		} else {
			size_t plen = strnlen((const char *)p, n);
			put_escaped(&o, p, plen);
		}
		break;
	}
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
		char a[INET_ADDRSTRLEN];

		if (salen < sizeof(*in)) {
			put(&o, "AF_INET(short:%zu)", salen);
			break;
		}
		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		put(&o, "%s:%u", a, ntohs(in->sin_port));
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
		char a[INET6_ADDRSTRLEN];

		/* The kernel accepts the 24-byte RFC 2133 form without the
		 * scope id. */
		if (salen < offsetof(struct sockaddr_in6, sin6_scope_id)) {
			put(&o, "AF_INET6(short:%zu)", salen);
			break;
		}
		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		put(&o, "[%s", a);
		if (salen >= sizeof(*in6) && in6->sin6_scope_id)
			put(&o, "%%%u", in6->sin6_scope_id);
		put(&o, "]:%u", ntohs(in6->sin6_port));
		break;
	}
	default: put(&o, "family=%u", family); break;
	}
	return done(&o);
}
