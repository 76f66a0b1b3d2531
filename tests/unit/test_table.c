/* The syscall table against the kernel headers and the policy's invariants.
 *
 * The header is parsed at test time, not compiled in, so a line missing from
 * table.c (or a name that drifted) fails here rather than silently becoming
 * "unknown, ENOSYS". */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "syscall-table/table.h"

#define UNISTD_64 "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"

struct hdr_nr {
	char name[64];
	int nr;
};

/* Every `#define __NR_name number` of the header; returns the count. */
static int parse_unistd(struct hdr_nr *out, int max)
{
	FILE *f = fopen(UNISTD_64, "r");
	char line[256];
	int n = 0;

	ck_assert_msg(f != NULL, "cannot open %s", UNISTD_64);
	while (fgets(line, sizeof(line), f)) {
		struct hdr_nr h;
		if (sscanf(line, "#define __NR_%63s %d", h.name, &h.nr) != 2)
			continue;
		ck_assert_int_lt(n, max);
		out[n++] = h;
	}
	fclose(f);
	return n;
}

START_TEST(test_every_header_number_has_its_line)
{
	static struct hdr_nr h[SC_NR_MAX];
	int n = parse_unistd(h, SC_NR_MAX);

	ck_assert_int_ge(n, 350); /* 6.1 has 362: the parse did work */
	for (int i = 0; i < n; i++) {
		const struct sc_entry *e = sc_lookup(h[i].nr);
		ck_assert_msg(e != NULL, "__NR_%s (%d) has no table line", h[i].name, h[i].nr);
		ck_assert_msg(strcmp(e->name, h[i].name) == 0,
			      "__NR_%s (%d) is named \"%s\" in the table", h[i].name, h[i].nr,
			      e->name);
	}
}
END_TEST

START_TEST(test_newer_syscalls)
{
	static const char *const names[] = {
		[451] = "cachestat",         [452] = "fchmodat2",
		[453] = "map_shadow_stack",  [454] = "futex_wake",
		[455] = "futex_wait",        [456] = "futex_requeue",
		[457] = "statmount",         [458] = "listmount",
		[459] = "lsm_get_self_attr", [460] = "lsm_set_self_attr",
		[461] = "lsm_list_modules",  [462] = "mseal",
	};

	for (int nr = 451; nr <= 462; nr++)
		ck_assert_str_eq(sc_name(nr), names[nr]);
	ck_assert_int_eq(sc_lookup(452)->disp, SC_SUPERVISE);
	ck_assert_ptr_eq((void *)sc_lookup(452)->handler,
			 (void *)sc_lookup(sc_by_name("fchmodat"))->handler);
	for (int nr = 457; nr <= 461; nr++) {
		ck_assert_int_eq(sc_lookup(nr)->disp, SC_DENY);
		ck_assert_int_eq(sc_lookup(nr)->err, ENOSYS);
	}
	ck_assert_int_eq(sc_lookup(462)->disp, SC_KERNEL);
}
END_TEST

START_TEST(test_names_unique)
{
	for (int a = 0; a < SC_NR_MAX; a++) {
		if (!sc_table[a].name)
			continue;
		for (int b = a + 1; b < SC_NR_MAX; b++)
			ck_assert_msg(!sc_table[b].name ||
					      strcmp(sc_table[a].name, sc_table[b].name) != 0,
				      "%s at %d and %d", sc_table[a].name, a, b);
	}
}
END_TEST

START_TEST(test_columns_well_formed)
{
	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		const struct sc_entry *e = &sc_table[nr];
		if (!e->name)
			continue;
		ck_assert_msg(e->cls < SC_NCLASS, "%s: class %u", e->name, e->cls);
		ck_assert_msg(e->disp <= SC_DENY, "%s: disp %u", e->name, e->disp);
		bool ended = false;
		for (int i = 0; i < 6; i++) {
			ck_assert_msg(e->arg[i] < A_NKINDS, "%s: arg %d kind %u", e->name, i,
				      e->arg[i]);
			if (e->arg[i] == A_NONE)
				ended = true;
			else
				ck_assert_msg(!ended, "%s: arg %d after A_NONE", e->name, i);
		}
	}
}
END_TEST

START_TEST(test_handlers_where_needed)
{
	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		const struct sc_entry *e = &sc_table[nr];
		if (!e->name)
			continue;
		bool wants = e->disp == SC_SUPERVISE || e->disp == SC_KERNEL_IF ||
			     e->disp == SC_TRACE;
		if (wants)
			ck_assert_msg(e->handler != NULL, "%s (%s) has no handler", e->name,
				      sc_disp_name(e->disp));
		else
			ck_assert_msg(e->handler == NULL, "%s (%s) has a handler nobody calls",
				      e->name, sc_disp_name(e->disp));
		if (e->disp == SC_KERNEL_IF)
			ck_assert_msg(e->cond != COND_NONE, "%s: KERNEL_IF without condition",
				      e->name);
		else
			ck_assert_msg(e->cond == COND_NONE, "%s: condition on a %s line", e->name,
				      sc_disp_name(e->disp));
	}
}
END_TEST

START_TEST(test_deny_has_errno)
{
	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		const struct sc_entry *e = &sc_table[nr];
		if (!e->name)
			continue;
		if (e->disp == SC_DENY)
			ck_assert_msg(e->err > 0 && e->err < 4096, "%s: DENY with err %d", e->name,
				      e->err);
		else
			ck_assert_msg(e->err == 0, "%s: err %d on a %s line", e->name, e->err,
				      sc_disp_name(e->disp));
	}
}
END_TEST

START_TEST(test_trace_is_exactly_exec)
{
	int n = 0;

	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		const struct sc_entry *e = &sc_table[nr];
		if (!e->name || e->disp != SC_TRACE)
			continue;
		ck_assert_msg(strcmp(e->name, "execve") == 0 || strcmp(e->name, "execveat") == 0,
			      "%s is TRACE", e->name);
		n++;
	}
	ck_assert_int_eq(n, 2);
}
END_TEST

/* docs/architecture.md rule 8, line by line: the refused kernel surface. */
START_TEST(test_kernel_surface_refused)
{
	/* clang-format off */
	static const struct { const char *name; int err; } deny[] = {
		{ "ptrace", EPERM }, { "process_vm_readv", EPERM }, { "process_vm_writev", EPERM },
		{ "pidfd_getfd", EPERM }, { "kcmp", EPERM },
		{ "unshare", EPERM }, { "setns", EPERM },
		{ "pivot_root", EPERM },
		{ "open_tree", EPERM }, { "move_mount", EPERM }, { "fsopen", EPERM },
		{ "fsconfig", EPERM }, { "fsmount", EPERM }, { "fspick", EPERM },
		{ "mount_setattr", EPERM }, { "bpf", EPERM }, { "perf_event_open", EACCES },
		{ "userfaultfd", EPERM }, { "io_uring_setup", EPERM }, { "io_uring_enter", EPERM },
		{ "io_uring_register", EPERM }, { "add_key", ENOSYS }, { "request_key", ENOSYS },
		{ "keyctl", ENOSYS }, { "open_by_handle_at", EPERM },
		{ "name_to_handle_at", EOPNOTSUPP }, { "kexec_load", EPERM },
		{ "kexec_file_load", EPERM }, { "init_module", EPERM }, { "finit_module", EPERM },
		{ "delete_module", EPERM }, { "settimeofday", EPERM }, { "clock_settime", EPERM },
		{ "clock_adjtime", EPERM }, { "adjtimex", EPERM }, { "iopl", EPERM },
		{ "ioperm", EPERM }, { "modify_ldt", ENOSYS },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]); i++) {
		int nr = sc_by_name(deny[i].name);
		ck_assert_msg(nr >= 0, "%s missing", deny[i].name);
		ck_assert_msg(sc_table[nr].disp == SC_DENY && sc_table[nr].err == deny[i].err,
			      "%s: %s err %d", deny[i].name, sc_disp_name(sc_table[nr].disp),
			      sc_table[nr].err);
	}

	static const struct {
		const char *name;
		unsigned cond;
	} cond[] = {
		{ "socket", COND_SOCKET_PLAIN },
		{ "socketpair", COND_AF_UNIX },
		{ "clone", COND_NO_NS_FLAGS },
		{ "sendto", COND_NO_ADDR },
		{ "ioctl", COND_IOCTL_ALLOWED },
		{ "seccomp", COND_SECCOMP_NO_LISTENER },
		{ "setsockopt", COND_SOCKOPT_ALLOWED },
		{ "prlimit64", COND_PID_SELF },
		{ "sched_getaffinity", COND_PID_SELF },
		{ "shmget", COND_OWN_IPC },
		{ "semget", COND_OWN_IPC },
		{ "msgget", COND_OWN_IPC },
		{ "mq_open", COND_OWN_IPC },
		{ "mq_unlink", COND_OWN_IPC },
	};
	for (size_t i = 0; i < sizeof(cond) / sizeof(cond[0]); i++) {
		const struct sc_entry *e = sc_lookup(sc_by_name(cond[i].name));
		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(e->disp, SC_KERNEL_IF);
		ck_assert_int_eq(e->cond, cond[i].cond);
	}

	/* Calls that name a host resource never run in the kernel as is (a
	 * pid call runs there only for pid 0, the caller's own). */
	/* clang-format off */
	static const char *const supervised[] = {
		"open", "openat", "openat2", "stat", "newfstatat", "statx", "execve",
		"connect", "bind", "sendmsg", "sendmmsg", "kill", "tgkill", "tkill",
		"rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open", "chdir",
		"getxattr", "prlimit64", "sched_setaffinity", "setpriority",
		"ioprio_set", "inotify_add_watch", "getcwd", "umask",
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(supervised) / sizeof(supervised[0]); i++) {
		const struct sc_entry *e = sc_lookup(sc_by_name(supervised[i]));
		ck_assert_ptr_nonnull(e);
		ck_assert_msg(e->disp == SC_SUPERVISE || e->disp == SC_TRACE ||
				      (e->disp == SC_KERNEL_IF && e->cond == COND_PID_SELF),
			      "%s is %s", supervised[i], sc_disp_name(e->disp));
	}
}
END_TEST

START_TEST(test_ioctl_allowlist)
{
	static const unsigned long never[] = { TIOCSTI, TIOCLINUX, TIOCSCTTY, TIOCCONS, TIOCSETD };

	ck_assert_uint_ge(sc_ioctl_nallowed, 30);
	for (unsigned i = 0; i < sc_ioctl_nallowed; i++) {
		for (size_t j = 0; j < sizeof(never) / sizeof(never[0]); j++)
			ck_assert_msg(sc_ioctl_allowed[i] != never[j], "%#lx allowed", never[j]);
		for (unsigned k = i + 1; k < sc_ioctl_nallowed; k++)
			ck_assert_msg(sc_ioctl_allowed[i] != sc_ioctl_allowed[k], "%#lx twice",
				      sc_ioctl_allowed[i]);
	}
	bool tcgets = false, fionread = false;
	for (unsigned i = 0; i < sc_ioctl_nallowed; i++) {
		tcgets |= sc_ioctl_allowed[i] == TCGETS;
		fionread |= sc_ioctl_allowed[i] == FIONREAD;
	}
	ck_assert(tcgets && fionread);
}
END_TEST

START_TEST(test_lookup_round_trip)
{
	int n = 0;

	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		if (!sc_table[nr].name) {
			ck_assert_ptr_null(sc_lookup(nr));
			ck_assert_ptr_null(sc_name(nr));
			continue;
		}
		ck_assert_ptr_eq(sc_lookup(nr), &sc_table[nr]);
		ck_assert_str_eq(sc_name(nr), sc_table[nr].name);
		ck_assert_int_eq(sc_by_name(sc_table[nr].name), nr);
		n++;
	}
	ck_assert_int_eq(n, 362 + 12);
	ck_assert_int_eq(sc_by_name("openat"), 257);
	ck_assert_int_eq(sc_by_name("nosuchcall"), -1);
	ck_assert_int_eq(sc_by_name(""), -1);
	ck_assert_int_eq(sc_by_name(NULL), -1);
}
END_TEST

START_TEST(test_unknown_numbers)
{
	static const long unknown[] = { 335,           423,       463, 500,
					SC_NR_MAX - 1, SC_NR_MAX, -1,  0x40000000L | 39,
					0x7fffffffL };

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		ck_assert_msg(sc_lookup(unknown[i]) == NULL, "%ld known", unknown[i]);
		ck_assert_ptr_null(sc_name(unknown[i]));
	}
}
END_TEST

START_TEST(test_class_and_disp_names)
{
	ck_assert_str_eq(sc_class_name(SC_FILE), "file");
	ck_assert_str_eq(sc_class_name(SC_NET), "net");
	ck_assert_str_eq(sc_class_name(SC_SYSTEM), "system");
	for (unsigned c = 0; c < SC_NCLASS; c++)
		ck_assert_ptr_nonnull(sc_class_name(c));
	ck_assert_str_eq(sc_class_name(SC_NCLASS), "unknown");
	ck_assert_str_eq(sc_disp_name(SC_KERNEL), "kernel");
	ck_assert_str_eq(sc_disp_name(SC_KERNEL_IF), "kernel_if");
	ck_assert_str_eq(sc_disp_name(SC_SUPERVISE), "supervise");
	ck_assert_str_eq(sc_disp_name(SC_TRACE), "trace");
	ck_assert_str_eq(sc_disp_name(SC_DENY), "deny");
	ck_assert_str_eq(sc_disp_name(99), "unknown");
	ck_assert_str_eq(sc_class_name(sc_lookup(sc_by_name("connect"))->cls), "net");
}
END_TEST

static Suite *table_suite(void)
{
	Suite *s = suite_create("syscall-table");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_every_header_number_has_its_line);
	tcase_add_test(tc, test_newer_syscalls);
	tcase_add_test(tc, test_names_unique);
	tcase_add_test(tc, test_columns_well_formed);
	tcase_add_test(tc, test_handlers_where_needed);
	tcase_add_test(tc, test_deny_has_errno);
	tcase_add_test(tc, test_trace_is_exactly_exec);
	tcase_add_test(tc, test_kernel_surface_refused);
	tcase_add_test(tc, test_ioctl_allowlist);
	tcase_add_test(tc, test_lookup_round_trip);
	tcase_add_test(tc, test_unknown_numbers);
	tcase_add_test(tc, test_class_and_disp_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(table_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
