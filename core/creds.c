/* The supervisor's credentials: fsuid/fsgid and capability switches. */
#include "core/creds.h"

#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

/* While it serves the sandbox the supervisor keeps only the capabilities
 * its own mechanics need — ptrace and pidfd_getfd of tasks of another uid
 * (SYS_PTRACE), signals to them (KILL), switching its fs and thread ids
 * (SETUID, SETGID) — so nothing it does for the sandbox can use the rest
 * (SETFCAP for security.capability, SYS_ADMIN for trusted.* xattrs...). */
#define LOOP_CAPS \
	((1u << CAP_SYS_PTRACE) | (1u << CAP_KILL) | (1u << CAP_SETUID) | (1u << CAP_SETGID))

static void set_caps(bool all)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return;
	d[0].effective = all ? d[0].permitted : d[0].permitted & LOOP_CAPS;
	d[1].effective = all ? d[1].permitted : 0;
	syscall(SYS_capset, &h, d);
}

void creds_sandbox(const struct creds *cr)
{
	if (cr->as_root) {
		setfsgid(cr->gid);
		setfsuid(cr->uid);
		set_caps(false);
	}
}

void creds_self(const struct creds *cr)
{
	if (cr->as_root) {
		set_caps(true);
		setfsuid(0);
		setfsgid(0);
	}
}

void creds_identity_begin(const struct creds *cr)
{
	if (!cr->as_root)
		return;
	/* Raw syscalls: glibc's wrappers would change every thread. */
	syscall(SYS_setresgid, cr->gid, cr->gid, 0);
	syscall(SYS_setresuid, cr->uid, cr->uid, 0);
	creds_sandbox(cr);
}

void creds_identity_end(const struct creds *cr)
{
	if (!cr->as_root)
		return;
	syscall(SYS_setresuid, 0, 0, 0);
	syscall(SYS_setresgid, 0, 0, 0);
	creds_sandbox(cr); /* the loop's usual state: sandbox fsuid */
}

void creds_bare_begin(const struct creds *cr)
{
	if (!cr->as_root)
		return;
	syscall(SYS_setresgid, cr->gid, cr->gid, 0);
	syscall(SYS_setresuid, cr->uid, cr->uid, 0);
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return;
	d[0].effective = d[1].effective = 0;
	syscall(SYS_capset, &h, d);
}

void creds_caps_back(void)
{
	set_caps(true);
}

void creds_admin_begin(const struct creds *cr)
{
	if (cr->as_root)
		set_caps(true);
}

void creds_admin_end(const struct creds *cr)
{
	if (cr->as_root)
		set_caps(false);
}

void creds_drop_thread(const struct creds *cr)
{
	if (!cr->as_root)
		return;
	/* Raw syscalls: glibc's wrappers would change every thread. */
	syscall(SYS_setresgid, cr->gid, cr->gid, cr->gid);
	syscall(SYS_setresuid, cr->uid, cr->uid, cr->uid);
}
