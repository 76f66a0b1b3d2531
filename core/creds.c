/* The supervisor's credentials: fsuid/fsgid and capability switches. */
#include "core/creds.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* `caps` (of the first 32) made effective too, of what moat is permitted,
 * on this thread, for one call moat makes for the sandbox. */
static void raise_caps(const struct creds *cr, uint32_t caps)
{
	if (!cr || !cr->as_root)
		return;
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return;
	d[0].effective |= d[0].permitted & caps;
	syscall(SYS_capset, &h, d);
}

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

/* The creds this thread serves its calls with (creds_call), and the fs
 * ids and groups it holds now (fs_valid false after a setresuid, which
 * resets the fs ids). */
static __thread struct creds call_copy; /* a copy: its task may go */
static __thread const struct creds *call_creds;
static __thread struct {
	bool fs_valid, groups_known;
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[CREDS_GROUPS_MAX];
} held;

static bool groups_equal(const struct creds *cr)
{
	if (!held.groups_known || held.ngroups != cr->ngroups)
		return false;
	for (int i = 0; i < cr->ngroups; i++)
		if (held.groups[i] != cr->groups[i])
			return false;
	return true;
}

/* The fs ids and groups of `cr` on this thread, where they differ. */
static void apply_ids(const struct creds *cr)
{
	if (!held.fs_valid || held.gid != cr->gid)
		setfsgid(cr->gid);
	if (!held.fs_valid || held.uid != cr->uid) {
		setfsuid(cr->uid);
		/* An fsuid that becomes 0 brings the file capabilities back
		 * into the effective set (capabilities(7)): gone again at
		 * once, or moat would serve the sandbox with DAC override
		 * (tests/security/esc_uid0_dac). */
		if (cr->uid == 0)
			set_caps(false);
	}
	held.fs_valid = true;
	held.uid = cr->uid;
	held.gid = cr->gid;
	/* The groups of this thread alone: the raw call (glibc's changes
	 * every thread's). */
	if (cr->ngroups > 0 && !groups_equal(cr) &&
	    syscall(SYS_setgroups, cr->ngroups, cr->groups) == 0) {
		held.groups_known = true;
		held.ngroups = cr->ngroups;
		for (int i = 0; i < cr->ngroups; i++)
			held.groups[i] = cr->groups[i];
	}
}

void creds_sandbox(const struct creds *cr)
{
	if (call_creds && call_creds->as_root)
		cr = call_creds;
	if (cr->as_root) {
		apply_ids(cr);
		set_caps(false);
	}
}

void creds_call(const struct creds *cr)
{
	call_creds = NULL;
	if (!cr)
		return;
	if (cr->base) { /* only a user namespace's tasks have ids of their own */
		call_copy = *cr;
		call_creds = &call_copy;
	}
	if (cr->as_root)
		apply_ids(cr);
}

uint64_t creds_who(void)
{
	const struct creds *cr = call_creds;
	if (!cr)
		return 0;
	/* FNV-1a over the ids the kernel checks a lookup against */
	uint64_t h = 14695981039346656037ULL;
	uint32_t ids[3 + CREDS_GROUPS_MAX];
	int n = 0;
	ids[n++] = cr->uid;
	ids[n++] = cr->gid;
	ids[n++] = (uint32_t)cr->ngroups;
	for (int i = 0; i < cr->ngroups && i < CREDS_GROUPS_MAX; i++)
		ids[n++] = cr->groups[i];
	const unsigned char *b = (const unsigned char *)ids;
	for (size_t i = 0; i < (size_t)n * sizeof ids[0]; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h | 1; /* never 0, the run's own */
}

bool creds_proc_switches(void)
{
	const struct creds *cr = call_creds;
	return cr && cr->as_root && (cr->uid != cr->id_uid || cr->gid != cr->id_gid);
}

void creds_proc_begin(void)
{
	const struct creds *cr = call_creds;
	if (!creds_proc_switches())
		return;
	setfsgid(cr->id_gid);
	setfsuid(cr->id_uid);
	held.fs_valid = false;
}

/* creds_skel_begin's ids while it lasts (this thread's). */
static __thread struct {
	bool on;
	uid_t uid;
	gid_t gid;
} skel;

static void skel_ids(void)
{
	setfsgid(skel.gid);
	setfsuid(skel.uid);
	if (skel.uid == 0)
		set_caps(false); /* as apply_ids: no file capabilities back */
	held.fs_valid = false;
}

void creds_proc_end(void)
{
	const struct creds *cr = call_creds;
	if (cr && cr->as_root && skel.on)
		skel_ids();
	else if (cr && cr->as_root && !held.fs_valid)
		apply_ids(cr);
}

void creds_skel_begin(uid_t uid, gid_t gid)
{
	const struct creds *cr = call_creds;
	if (!cr || !cr->as_root)
		return;
	skel.on = true;
	skel.uid = uid;
	skel.gid = gid;
	skel_ids();
}

void creds_skel_end(void)
{
	const struct creds *cr = call_creds;
	if (!cr || !cr->as_root)
		return;
	skel.on = false;
	apply_ids(cr);
}

int creds_host_id(const struct creds *cr, uint32_t id, uint32_t *host)
{
	*host = id;
	if (!cr->base || id == (uint32_t)-1 || id == 0)
		return 0;
	if (id >= CREDS_NS_RANGE)
		return -EINVAL;
	*host = cr->base + id;
	return 0;
}

uid_t creds_show_uid(const struct creds *cr, uid_t host)
{
	if (!cr->base || host == 0)
		return host;
	if (host >= cr->base && host - cr->base < CREDS_NS_RANGE)
		return host - cr->base;
	return 65534;
}

gid_t creds_show_gid(const struct creds *cr, gid_t host)
{
	return (gid_t)creds_show_uid(cr, (uid_t)host);
}

void creds_self(const struct creds *cr)
{
	if (cr->as_root) {
		set_caps(true);
		setfsuid(0);
		setfsgid(0);
		held.fs_valid = false;
	}
}

void creds_identity_begin(const struct creds *cr)
{
	if (!cr->as_root)
		return;
	/* Raw syscalls: glibc's wrappers would change every thread. */
	syscall(SYS_setresgid, cr->id_gid, cr->id_gid, 0);
	syscall(SYS_setresuid, cr->id_uid, cr->id_uid, 0);
	held.fs_valid = false;
	creds_sandbox(cr);
}

void creds_identity_end(const struct creds *cr)
{
	if (!cr->as_root)
		return;
	syscall(SYS_setresuid, 0, 0, 0);
	syscall(SYS_setresgid, 0, 0, 0);
	held.fs_valid = false;
	creds_sandbox(cr); /* the loop's usual state: sandbox fsuid */
}

void creds_bare_begin(const struct creds *cr)
{
	if (!cr->as_root)
		return;
	syscall(SYS_setresgid, cr->id_gid, cr->id_gid, 0);
	syscall(SYS_setresuid, cr->id_uid, cr->id_uid, 0);
	held.fs_valid = false;
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

void creds_owner_begin(const struct creds *cr)
{
	raise_caps(cr, (1u << CAP_CHOWN) | (1u << CAP_FOWNER) | (1u << CAP_FSETID));
}

void creds_proc_own_begin(void)
{
	raise_caps(call_creds, 1u << CAP_DAC_READ_SEARCH);
}

void creds_proc_own_end(void)
{
	const struct creds *cr = call_creds;
	if (cr && cr->as_root)
		set_caps(false);
}

bool creds_dac_may(uid_t owner)
{
	const struct creds *cr = call_creds;
	if (!cr || !cr->as_root || !cr->base || cr->uid != 0)
		return false;
	return owner == 0 || (owner >= cr->base && owner - cr->base < CREDS_NS_RANGE);
}

void creds_dac_begin(void)
{
	raise_caps(call_creds, (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
}

void creds_sticky_begin(void)
{
	raise_caps(call_creds,
		   (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER));
}

void creds_dac_end(void)
{
	const struct creds *cr = call_creds;
	if (cr && cr->as_root)
		set_caps(false);
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
	held.fs_valid = false;
	if (cr->id_uid != cr->uid || cr->id_gid != cr->gid) {
		/* A user namespace's root: the kernel's identity is its own
		 * (H), its files are served as host root's.  The saved ids
		 * stay root's so the fs ids can be root's too, as on the
		 * loop's threads in creds_identity_begin. */
		creds_identity_begin(cr);
		return;
	}
	/* Raw syscalls: glibc's wrappers would change every thread. */
	syscall(SYS_setresgid, cr->id_gid, cr->id_gid, cr->id_gid);
	syscall(SYS_setresuid, cr->id_uid, cr->id_uid, cr->id_uid);
}

/* Real, effective, saved uid (host ids) and CapEff of thread `tid` from
 * /proc (the whole file: a long Groups: line comes before CapEff).  0, or
 * -ESRCH when it is gone, or another -errno. */
int creds_thread_read(pid_t tid, unsigned ids[3], unsigned long long *capeff)
{
	char path[64];
	const size_t cap = 64 << 10;
	snprintf(path, sizeof path, "/proc/%d/status", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	char *st = malloc(cap); /* serving threads run at once: not static */
	size_t n = 0;
	ssize_t got;
	while (st && n < cap - 1 && (got = read(fd, st + n, cap - 1 - n)) > 0)
		n += (size_t)got;
	close(fd);
	if (!st)
		return -ENOMEM;
	st[n] = '\0';
	const char *u = strstr(st, "\nUid:"), *k = strstr(st, "\nCapEff:");
	int r = n == 0 ? -ESRCH : 0;
	if (r == 0 && (!u || !k || sscanf(u + 5, "%u %u %u", &ids[0], &ids[1], &ids[2]) != 3 ||
		       sscanf(k + 8, "%llx", capeff) != 1))
		r = -EIO;
	free(st);
	return r;
}
