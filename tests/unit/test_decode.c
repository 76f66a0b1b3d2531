/* The audit decoders with real values. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <asm/termbits.h> /* struct termios2, for TCSETS2 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "syscall-table/decode.h"
#include "syscall-table/table.h"

static char out[512];

static const char *dec(unsigned kind, uint64_t val)
{
	int n = sc_decode_arg(out, sizeof(out), kind, val);
	ck_assert_int_eq(n, (int)strlen(out));
	return out;
}

START_TEST(test_numbers_and_fds)
{
	ck_assert_str_eq(dec(A_INT, (uint64_t)-5), "-5");
	ck_assert_str_eq(dec(A_INT, 0xffffffff00000007ULL), "7"); /* the kernel reads 32 bits */
	ck_assert_str_eq(dec(A_UINT, 4000000000U), "4000000000");
	ck_assert_str_eq(dec(A_SIZE, 1ULL << 40), "1099511627776");
	ck_assert_str_eq(dec(A_OFF, (uint64_t)-1), "-1");
	ck_assert_str_eq(dec(A_HEX, 0xdeadbeefULL), "0xdeadbeef");
	ck_assert_str_eq(dec(A_FD, 3), "3");
	ck_assert_str_eq(dec(A_DIRFD, (uint64_t)(int64_t)AT_FDCWD), "AT_FDCWD");
	ck_assert_str_eq(dec(A_DIRFD, (uint32_t)AT_FDCWD), "AT_FDCWD");
	ck_assert_str_eq(dec(A_DIRFD, 7), "7");
	ck_assert_str_eq(dec(A_PID, (uint64_t)-1), "-1");
	ck_assert_str_eq(dec(A_UID, 1000), "1000");
	ck_assert_str_eq(dec(A_UID, 0xffffffffULL), "-1");
	ck_assert_str_eq(dec(A_NONE, 123), "");
}
END_TEST

START_TEST(test_pointers)
{
	ck_assert_str_eq(dec(A_PTR, 0x7ffc1234abcdULL), "0x7ffc1234abcd");
	ck_assert_str_eq(dec(A_PATH, 0x5555deadULL), "0x5555dead");
	ck_assert_str_eq(dec(A_SOCKADDR, 0x1000), "0x1000");
	ck_assert_str_eq(dec(A_MSGHDR, 0x1000), "0x1000");
	ck_assert_str_eq(dec(A_ARGV, 0x1000), "0x1000");
	ck_assert_str_eq(dec(A_OPENHOW, 0x1000), "0x1000");
	ck_assert_str_eq(dec(A_BUF, 0), "NULL");
	ck_assert_str_eq(dec(A_NKINDS + 3, 0x10), "0x10");
}
END_TEST

START_TEST(test_open_flags)
{
	ck_assert_str_eq(dec(A_OFLAGS, O_RDONLY), "O_RDONLY");
	ck_assert_str_eq(dec(A_OFLAGS, O_RDONLY | O_CLOEXEC | O_DIRECTORY),
			 "O_RDONLY|O_DIRECTORY|O_CLOEXEC");
	ck_assert_str_eq(dec(A_OFLAGS, O_WRONLY | O_CREAT | O_TRUNC), "O_WRONLY|O_CREAT|O_TRUNC");
	ck_assert_str_eq(dec(A_OFLAGS, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW),
			 "O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW");
	ck_assert_str_eq(dec(A_OFLAGS, O_WRONLY | O_APPEND | O_NONBLOCK),
			 "O_WRONLY|O_APPEND|O_NONBLOCK");
	ck_assert_str_eq(dec(A_OFLAGS, O_RDWR | O_TMPFILE), "O_RDWR|O_TMPFILE");
	ck_assert_str_eq(dec(A_OFLAGS, O_WRONLY | O_SYNC), "O_WRONLY|O_SYNC");
	ck_assert_str_eq(dec(A_OFLAGS, O_WRONLY | O_DSYNC), "O_WRONLY|O_DSYNC");
	ck_assert_str_eq(dec(A_OFLAGS, O_PATH | O_CLOEXEC), "O_RDONLY|O_CLOEXEC|O_PATH");
	ck_assert_str_eq(dec(A_OFLAGS, 0100000),
			 "O_RDONLY|O_LARGEFILE"); /* 0 in glibc, a bit in the kernel */
	ck_assert_str_eq(dec(A_OFLAGS, O_RDONLY | 0x40000000), "O_RDONLY|0x40000000");
	ck_assert_str_eq(dec(A_OFLAGS, 3), "O_ACCMODE");
}
END_TEST

START_TEST(test_at_and_rename_flags)
{
	ck_assert_str_eq(dec(A_ATFLAGS, 0), "0");
	ck_assert_str_eq(dec(A_ATFLAGS, AT_SYMLINK_NOFOLLOW), "AT_SYMLINK_NOFOLLOW");
	ck_assert_str_eq(dec(A_ATFLAGS, AT_REMOVEDIR), "AT_REMOVEDIR");
	ck_assert_str_eq(dec(A_ATFLAGS, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW),
			 "AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH");
	ck_assert_str_eq(dec(A_ATFLAGS, AT_SYMLINK_FOLLOW | 0x10000), "AT_SYMLINK_FOLLOW|0x10000");
	ck_assert_str_eq(dec(A_RENAMEFLAGS, RENAME_NOREPLACE), "RENAME_NOREPLACE");
	ck_assert_str_eq(dec(A_RENAMEFLAGS, RENAME_EXCHANGE | RENAME_WHITEOUT),
			 "RENAME_EXCHANGE|RENAME_WHITEOUT");
}
END_TEST

START_TEST(test_mode)
{
	ck_assert_str_eq(dec(A_MODE, 0644), "0644");
	ck_assert_str_eq(dec(A_MODE, 0755), "0755");
	ck_assert_str_eq(dec(A_MODE, 0), "0");
	ck_assert_str_eq(dec(A_MODE, 04755), "04755");
	ck_assert_str_eq(dec(A_MODE, S_IFCHR | 0620), "S_IFCHR|0620");
	ck_assert_str_eq(dec(A_MODE, S_IFIFO | 0600), "S_IFIFO|0600");
}
END_TEST

START_TEST(test_signals)
{
	ck_assert_str_eq(dec(A_SIG, SIGKILL), "SIGKILL");
	ck_assert_str_eq(dec(A_SIG, SIGTERM), "SIGTERM");
	ck_assert_str_eq(dec(A_SIG, SIGSYS), "SIGSYS");
	ck_assert_str_eq(dec(A_SIG, 0), "0");
	ck_assert_str_eq(dec(A_SIG, 65), "65");
	ck_assert_str_eq(sc_signal_name(SIGCHLD), "SIGCHLD");
	ck_assert_str_eq(sc_signal_name(SIGSTKFLT), "SIGSTKFLT");
	ck_assert_str_eq(sc_signal_name(32), "SIGRTMIN");
	ck_assert_str_eq(sc_signal_name(34), "SIGRT_2");
	ck_assert_str_eq(sc_signal_name(64), "SIGRT_32");
	ck_assert_ptr_null(sc_signal_name(0));
	ck_assert_ptr_null(sc_signal_name(65));
	ck_assert_ptr_null(sc_signal_name(-9));
	for (int s = 1; s <= 64; s++)
		ck_assert_ptr_nonnull(sc_signal_name(s));
}
END_TEST

START_TEST(test_errno)
{
	ck_assert_str_eq(sc_errno_name(EACCES), "EACCES");
	ck_assert_str_eq(sc_errno_name(EPERM), "EPERM");
	ck_assert_str_eq(sc_errno_name(ENOSYS), "ENOSYS");
	ck_assert_str_eq(sc_errno_name(EAGAIN), "EAGAIN");
	ck_assert_str_eq(sc_errno_name(EOPNOTSUPP), "EOPNOTSUPP");
	ck_assert_str_eq(sc_errno_name(ECONNREFUSED), "ECONNREFUSED");
	ck_assert_str_eq(sc_errno_name(EAFNOSUPPORT), "EAFNOSUPPORT");
	ck_assert_str_eq(sc_errno_name(EHWPOISON), "EHWPOISON");
	ck_assert_str_eq(sc_errno_name(512), "ERESTARTSYS");
	ck_assert_ptr_null(sc_errno_name(0));
	ck_assert_ptr_null(sc_errno_name(-1));
	ck_assert_ptr_null(sc_errno_name(4000));
	/* Every errno the C library knows has a name here. */
	for (int e = 1; e <= EHWPOISON; e++) {
		if (e == 41 || e == 58) /* unused on Linux */
			continue;
		ck_assert_msg(sc_errno_name(e) != NULL, "errno %d", e);
	}
}
END_TEST

START_TEST(test_families_and_socket_types)
{
	ck_assert_str_eq(sc_family_name(AF_UNIX), "AF_UNIX");
	ck_assert_str_eq(sc_family_name(AF_INET6), "AF_INET6");
	ck_assert_str_eq(sc_family_name(AF_NETLINK), "AF_NETLINK");
	ck_assert_str_eq(sc_family_name(AF_PACKET), "AF_PACKET");
	ck_assert_str_eq(sc_family_name(AF_VSOCK), "AF_VSOCK");
	ck_assert_ptr_null(sc_family_name(200));
	ck_assert_ptr_null(sc_family_name(-1));
	ck_assert_str_eq(dec(A_FAMILY, AF_INET), "AF_INET");
	ck_assert_str_eq(dec(A_FAMILY, 99), "99");
	ck_assert_str_eq(dec(A_SOCKTYPE, SOCK_STREAM), "SOCK_STREAM");
	ck_assert_str_eq(dec(A_SOCKTYPE, SOCK_STREAM | SOCK_CLOEXEC), "SOCK_STREAM|SOCK_CLOEXEC");
	ck_assert_str_eq(dec(A_SOCKTYPE, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC),
			 "SOCK_DGRAM|SOCK_NONBLOCK|SOCK_CLOEXEC");
	ck_assert_str_eq(dec(A_SOCKTYPE, SOCK_RAW), "SOCK_RAW");
	ck_assert_str_eq(dec(A_SOCKTYPE, 15), "15");
}
END_TEST

START_TEST(test_clone_flags)
{
	/* What glibc's fork() passes, and what pthread_create() passes. */
	ck_assert_str_eq(dec(A_CLONE, CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD),
			 "CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD");
	ck_assert_str_eq(dec(A_CLONE, CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
					      CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
					      CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID),
			 "CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|"
			 "CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID");
	ck_assert_str_eq(dec(A_CLONE, CLONE_NEWUSER | CLONE_NEWNS), "CLONE_NEWNS|CLONE_NEWUSER");
	ck_assert_str_eq(dec(A_CLONE, CLONE_VM | CLONE_VFORK | SIGCHLD),
			 "CLONE_VM|CLONE_VFORK|SIGCHLD");
	ck_assert_str_eq(dec(A_CLONE, 0), "0");
	ck_assert_str_eq(dec(A_CLONE, SIGCHLD), "SIGCHLD");
}
END_TEST

START_TEST(test_ioctl)
{
	ck_assert_str_eq(dec(A_IOCTL, TCGETS), "TCGETS");
	ck_assert_str_eq(dec(A_IOCTL, TIOCGWINSZ), "TIOCGWINSZ");
	ck_assert_str_eq(dec(A_IOCTL, FIONREAD), "FIONREAD");
	ck_assert_str_eq(dec(A_IOCTL, TIOCSTI), "TIOCSTI");
	ck_assert_str_eq(dec(A_IOCTL, (1ULL << 32) | TIOCSTI), "TIOCSTI"); /* the kernel's view */
	ck_assert_str_eq(dec(A_IOCTL, 0x1234abcd), "0x1234abcd");
	/* Every allowed request has a name, and names are unambiguous. */
	for (unsigned i = 0; i < sc_ioctl_nallowed; i++)
		ck_assert_msg(sc_ioctl_name(sc_ioctl_allowed[i]) != NULL, "%#lx",
			      sc_ioctl_allowed[i]);
	ck_assert_str_eq(sc_ioctl_name(TCSETS2), "TCSETS2");
	ck_assert_str_eq(sc_ioctl_name(TIOCGPTPEER), "TIOCGPTPEER");
}
END_TEST

START_TEST(test_mmap_prot_and_flags)
{
	ck_assert_str_eq(dec(A_PROT, PROT_NONE), "PROT_NONE");
	ck_assert_str_eq(dec(A_PROT, PROT_READ | PROT_WRITE), "PROT_READ|PROT_WRITE");
	ck_assert_str_eq(dec(A_PROT, PROT_READ | PROT_EXEC), "PROT_READ|PROT_EXEC");
	ck_assert_str_eq(dec(A_MAPFLAGS, MAP_PRIVATE | MAP_ANONYMOUS), "MAP_PRIVATE|MAP_ANONYMOUS");
	ck_assert_str_eq(dec(A_MAPFLAGS, MAP_PRIVATE | MAP_FIXED | MAP_DENYWRITE),
			 "MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE");
	ck_assert_str_eq(dec(A_MAPFLAGS, MAP_SHARED), "MAP_SHARED");
	ck_assert_str_eq(dec(A_MAPFLAGS, MAP_SHARED_VALIDATE | MAP_SYNC),
			 "MAP_SHARED_VALIDATE|MAP_SYNC");
}
END_TEST

START_TEST(test_truncation_is_snprintf_like)
{
	char small[8];
	int n = sc_decode_arg(small, sizeof(small), A_OFLAGS, O_RDONLY | O_CLOEXEC);

	ck_assert_int_eq(n, (int)strlen("O_RDONLY|O_CLOEXEC"));
	ck_assert_str_eq(small, "O_RDONL");
	ck_assert_int_eq(sc_decode_arg(NULL, 0, A_SIG, SIGKILL), 7);
	n = sc_decode_arg(small, 1, A_SIG, SIGKILL);
	ck_assert_int_eq(n, 7);
	ck_assert_str_eq(small, "");
}
END_TEST

static const char *sa_dec(const void *sa, size_t len)
{
	int n = sc_decode_sockaddr(out, sizeof(out), sa, len);
	ck_assert_int_eq(n, (int)strlen(out));
	return out;
}

START_TEST(test_sockaddr_unix)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	size_t base = offsetof(struct sockaddr_un, sun_path);

	strcpy(un.sun_path, "/tmp/.X11-unix/X0");
	ck_assert_str_eq(sa_dec(&un, sizeof(un)), "/tmp/.X11-unix/X0");
	ck_assert_str_eq(sa_dec(&un, base + strlen(un.sun_path)), "/tmp/.X11-unix/X0"); /* no NUL */
	ck_assert_str_eq(sa_dec(&un, base), "(unnamed)");

	/* Abstract: leading NUL, length-delimited, may hold NULs and bytes
	 * that must not reach the log raw. */
	memset(un.sun_path, 0, sizeof(un.sun_path));
	memcpy(un.sun_path, "\0dbus-abc", 9);
	ck_assert_str_eq(sa_dec(&un, base + 9), "@dbus-abc");
	memcpy(un.sun_path, "\0a\nb\0c\\", 7);
	ck_assert_str_eq(sa_dec(&un, base + 7), "@a\\x0ab\\x00c\\\\");

	/* Unaligned copy inside a bigger buffer. */
	char raw[1 + sizeof(struct sockaddr_un)];
	struct sockaddr_un p = { .sun_family = AF_UNIX, .sun_path = "/run/x.sock" };
	memcpy(raw + 1, &p, sizeof(p));
	ck_assert_str_eq(sa_dec(raw + 1, sizeof(p)), "/run/x.sock");
}
END_TEST

START_TEST(test_sockaddr_inet)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(80) };
	inet_pton(AF_INET, "1.2.3.4", &in.sin_addr);
	ck_assert_str_eq(sa_dec(&in, sizeof(in)), "1.2.3.4:80");
	in.sin_port = htons(65535);
	inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
	ck_assert_str_eq(sa_dec(&in, sizeof(in)), "127.0.0.1:65535");
	ck_assert_str_eq(sa_dec(&in, 8), "AF_INET(short:8)");

	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
	in6.sin6_addr = in6addr_loopback;
	ck_assert_str_eq(sa_dec(&in6, sizeof(in6)), "[::1]:80");
	ck_assert_str_eq(sa_dec(&in6, 24), "[::1]:80"); /* RFC 2133 length */
	inet_pton(AF_INET6, "2001:db8::1", &in6.sin6_addr);
	in6.sin6_port = htons(443);
	ck_assert_str_eq(sa_dec(&in6, sizeof(in6)), "[2001:db8::1]:443");
	inet_pton(AF_INET6, "fe80::1", &in6.sin6_addr);
	in6.sin6_scope_id = 2;
	ck_assert_str_eq(sa_dec(&in6, sizeof(in6)), "[fe80::1%2]:443");
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &in6.sin6_addr);
	in6.sin6_scope_id = 0;
	ck_assert_str_eq(sa_dec(&in6, sizeof(in6)), "[::ffff:10.0.0.1]:443");
	ck_assert_str_eq(sa_dec(&in6, 12), "AF_INET6(short:12)");
}
END_TEST

START_TEST(test_sockaddr_other)
{
	struct sockaddr_storage ss = { .ss_family = AF_NETLINK };
	ck_assert_str_eq(sa_dec(&ss, sizeof(ss)), "family=16");
	ss.ss_family = AF_PACKET;
	ck_assert_str_eq(sa_dec(&ss, 20), "family=17");
	ck_assert_str_eq(sa_dec(NULL, 16), "(none)");
	ck_assert_str_eq(sa_dec(&ss, 1), "(none)");
	/* Longer than any sockaddr: read no further than the storage. */
	char big[300] = { 0 };
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(53) };
	inet_pton(AF_INET, "9.9.9.9", &in.sin_addr);
	memcpy(big, &in, sizeof(in));
	ck_assert_str_eq(sa_dec(big, sizeof(big)), "9.9.9.9:53");
}
END_TEST

static Suite *decode_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *tc = tcase_create("decode");

	tcase_add_test(tc, test_numbers_and_fds);
	tcase_add_test(tc, test_pointers);
	tcase_add_test(tc, test_open_flags);
	tcase_add_test(tc, test_at_and_rename_flags);
	tcase_add_test(tc, test_mode);
	tcase_add_test(tc, test_signals);
	tcase_add_test(tc, test_errno);
	tcase_add_test(tc, test_families_and_socket_types);
	tcase_add_test(tc, test_clone_flags);
	tcase_add_test(tc, test_ioctl);
	tcase_add_test(tc, test_mmap_prot_and_flags);
	tcase_add_test(tc, test_truncation_is_snprintf_like);
	tcase_add_test(tc, test_sockaddr_unix);
	tcase_add_test(tc, test_sockaddr_inet);
	tcase_add_test(tc, test_sockaddr_other);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(decode_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
