/* Argument decoders for the audit log and traces: register values to the
 * names people read (AT_FDCWD, O_RDONLY|O_CLOEXEC, SIGKILL, 127.0.0.1:80).
 *
 * All of them are pure functions of their arguments — no syscall, no
 * allocation, no global state — so the dispatcher can call them from any
 * thread.  The text is plain, not JSON-quoted: the audit writer escapes it.
 * Bytes that come from the sandbox (socket paths) are escaped here already
 * (\\ and \xNN for anything outside printable ASCII), so a hostile name
 * cannot forge log lines. */
#ifndef MOAT_DECODE_H
#define MOAT_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* Print argument value `val` of kind `kind` (enum sc_arg) into `buf`, like
 * snprintf: at most `len` bytes including the NUL, and the return value is
 * the length the full text has (so a return >= len means it was cut).
 * Conventions:
 *   - int-typed kinds (A_INT, A_UINT, A_FD, A_DIRFD, A_PID, A_SIG, A_UID,
 *     flag kinds except A_CLONE/A_MAPFLAGS) use the low 32 bits, which is
 *     what the kernel reads;
 *   - flags print as NAME|NAME, unknown bits as a trailing |0x..., zero as 0;
 *   - A_ATFLAGS prints 0x200 as AT_REMOVEDIR (it is AT_EACCESS for the
 *     faccessat family — the kind alone cannot tell);
 *   - pointers (A_PTR, A_BUF, and A_PATH, A_STR, A_SOCKADDR, A_MSGHDR,
 *     A_ARGV, A_OPENHOW, whose copied contents the dispatcher prints
 *     instead) print as 0x... hex, and NULL for zero;
 *   - A_NONE prints nothing; an unknown kind prints hex. */
int sc_decode_arg(char *buf, size_t len, unsigned kind, uint64_t val);

/* "EACCES" for EACCES, and so on (one name per value: EAGAIN, not
 * EWOULDBLOCK; EOPNOTSUPP, not ENOTSUP; EDEADLK), including the kernel's
 * internal ERESTART* values a tracer can see; NULL if unknown. */
const char *sc_errno_name(int err);

/* "SIGKILL" for 9; real-time signals in the kernel's numbering, as strace
 * prints them: 32 is "SIGRTMIN", 33..64 are "SIGRT_1".."SIGRT_32".  NULL
 * for 0 and anything outside 1..64. */
const char *sc_signal_name(int sig);

/* "AF_INET" for 2, and so on; NULL if unknown. */
const char *sc_family_name(int af);

/* The name of ioctl request `req` (low 32 bits compared), e.g. "TCGETS",
 * or NULL.  Knows the allowlist and the usual refused ones (TIOCSTI...). */
const char *sc_ioctl_name(unsigned long req);

/* Print the socket address `sa` of `salen` bytes (a copy the supervisor
 * made, any alignment), snprintf-like as above:
 *   AF_UNIX   /path, @abstract (the bytes after the leading NUL, escaped),
 *             or "(unnamed)" for an address with no path;
 *   AF_INET   1.2.3.4:80;
 *   AF_INET6  [::1]:80, with %scope when a scope id is given;
 *   others    family=N.
 * An address too short for its family prints "AF_X(short:N)"; a NULL or
 * family-less one prints "(none)". */
int sc_decode_sockaddr(char *buf, size_t len, const void *sa, size_t salen);

#endif
