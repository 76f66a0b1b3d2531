/* The supervisor's credentials while it works for the sandbox.
 *
 * When moat runs as root, host file operations for the sandbox run with
 * the sandbox's fsuid/fsgid (host DAC applies as it would to the sandbox)
 * and with only the capabilities the loop's own mechanics need; moat's own
 * scratch work runs with its own.  Not root: every switch is a no-op. */
#ifndef MOAT_CREDS_H
#define MOAT_CREDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define CREDS_GROUPS_MAX 32
/* A user namespace's range (docs/design.md "Root inside"): sandbox id k is
 * host id base + k, for k below CREDS_NS_RANGE. */
#define CREDS_NS_RANGE 65536

struct creds {
	bool as_root; /* the supervisor is root: switch */
	uid_t uid;    /* the ids moat acts with for the sandbox: fsuid, fsgid */
	gid_t gid;
	/* The ids the kernel records for its sockets (SO_PEERCRED,
	 * SCM_CREDENTIALS): the caller's own host ids.  Equal to uid and gid
	 * but for a user namespace's root, which moat serves as host root
	 * (docs/design.md "Root inside") while the kernel knows it as
	 * `base`. */
	uid_t id_uid;
	gid_t id_gid;
	/* With a user namespace: the host id of the sandbox's id 0 (0: no
	 * user namespace; ids are shown as they are). */
	uid_t base;
	/* Supplementary groups (host ids) moat acts with; 0 of them: gid
	 * alone. */
	int ngroups;
	gid_t groups[CREDS_GROUPS_MAX];
};

/* Serve the calls of this thread with `cr` from now on: the fs ids and
 * groups are switched when they differ from the thread's, and
 * creds_sandbox called with any other creds of the same sandbox (the
 * vfs's, after moat's own work) comes back to these.  NULL: the creds
 * each caller names. */
void creds_call(const struct creds *cr);
/* moat's look into /proc/PID of a sandbox process for the call this
 * thread serves: with the caller's own kernel ids (id_uid, id_gid) as fs
 * ids, which /proc's owners and its ptrace checks expect, instead of the
 * ids moat acts with on files (they differ for a user namespace's root,
 * served as host root).  Without a user namespace nothing changes.
 * Ended by creds_proc_end. */
void creds_proc_begin(void);
void creds_proc_end(void);
/* Inside creds_proc_begin/end, for a look into the caller's own process
 * (/proc/PID/fd, fdinfo of its own pid): a process that changed its ids is
 * not dumpable, its fd directories are its namespace root's (0500), and
 * the kernel lets the process itself in whatever its ids — moat then
 * needs CAP_DAC_READ_SEARCH for the directory.  Ended by
 * creds_proc_own_end, before creds_proc_end. */
void creds_proc_own_begin(void);
void creds_proc_own_end(void);
/* moat's own files in its skeleton (the /proc listings) while it serves a
 * call: made with the ids the skeleton belongs to (`uid`, `gid`: the run's
 * first ids), whatever ids the caller took since (a process that gave up
 * root cannot write there).  No capability; creds_proc_begin/end nest
 * inside.  Ended by creds_skel_end.  Without a user namespace every call
 * has the run's ids: nothing changes. */
void creds_skel_begin(uid_t uid, gid_t gid);
void creds_skel_end(void);
/* Would creds_proc_begin switch anything?  (A caller that can do without
 * /proc, with a pidfd, saves the switch: four credential changes.) */
bool creds_proc_switches(void);
/* Whom this thread serves now, as the kernel's permission checks see it:
 * a key of the fs ids and groups of creds_call's creds; 0 without a user
 * namespace, where every call has the run's ids.  What one identity may
 * look up (a directory fd of the dentry cache, reached through parents
 * it may search) another may not. */
uint64_t creds_who(void);
/* A sandbox id (as the caller named it) as the host's: -1 stays -1,
 * without a user namespace nothing changes; with one, root is host root
 * (moat serves the sandbox's root so) and k is base + k.  -EINVAL for an
 * id the namespace does not map. */
int creds_host_id(const struct creds *cr, uint32_t id, uint32_t *host);
/* An id of the host as the sandbox is shown it: itself without a user
 * namespace; with one the sandbox's id for it (host root, which moat
 * serves the sandbox's root as, included), else the overflow id 65534. */
uid_t creds_show_uid(const struct creds *cr, uid_t host);
gid_t creds_show_gid(const struct creds *cr, gid_t host);

/* Real, effective, saved uid (host ids) and CapEff of thread `tid`, from
 * /proc/TID/status.  0, -ESRCH when it is gone, or another -errno. */
int creds_thread_read(pid_t tid, unsigned ids[3], unsigned long long *capeff);

/* The loop's usual state: the sandbox's fsuid/fsgid, the loop's
 * capabilities (ptrace, kill, setuid, setgid) effective. */
void creds_sandbox(const struct creds *cr);
/* moat's own: fsuid 0, every capability it holds. */
void creds_self(const struct creds *cr);
/* Take the sandbox's real and effective ids too (this thread only; the saved
 * uid stays 0 so creds_identity_end can return).  For calls whose caller
 * identity the kernel records and shows to others: connect (SO_PEERCRED)
 * and sendmsg (SCM_CREDENTIALS).  Without it a peer would see root. */
void creds_identity_begin(const struct creds *cr);
void creds_identity_end(const struct creds *cr);
/* The sandbox's ids and no capability at all (this thread only), for
 * sockets made for the sandbox: a socket keeps its maker's credentials,
 * and netlink checks them.  Ended by creds_identity_end. */
void creds_bare_begin(const struct creds *cr);
/* The root inside's DAC override (docs/filesystem.md "Permissions"): may
 * moat redo, with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, what the
 * kernel refused with EACCES on a node owned by `owner`, for the call this
 * thread serves?  Yes when the caller is the sandbox's root (a user
 * namespace's, served as host root) and the node is host root's or one of
 * the sandbox's ids.  The caller (fs-emulation) also wants a node of the
 * sandbox's own layers, decided on an fd of the node or of its directory. */
bool creds_dac_may(uid_t owner);
/* Those two capabilities effective, for one redone call; creds_dac_end
 * goes back to the loop's usual set. */
void creds_dac_begin(void);
void creds_dac_end(void);
/* ... and CAP_FOWNER too, for a removal in a sticky directory (/tmp) of a
 * node of another sandbox id; ended by creds_dac_end. */
void creds_sticky_begin(void);
/* Every capability moat holds, effective, for a moment (setns into the
 * sandbox's network namespace); creds_admin_end goes back to the loop's
 * usual set. */
void creds_admin_begin(const struct creds *cr);
/* CAP_CHOWN, CAP_FOWNER and CAP_FSETID alone (root's, which keeps a
 * set-group-ID bit it sets on a file of a group it is not in), effective
 * for one change moat makes for the sandbox's root in its own layers
 * (sys_attr.c); ended by creds_admin_end. */
void creds_owner_begin(const struct creds *cr);
void creds_admin_end(const struct creds *cr);
/* Every capability moat holds effective again, on this thread only and
 * with raw syscalls (async-signal-safe): for moat's last work from a
 * thread that was serving the sandbox (a fatal signal's handler). */
void creds_caps_back(void);
/* For a thread of its own (a job): the sandbox's ids for good, real,
 * effective and saved.  This thread only. */
void creds_drop_thread(const struct creds *cr);

#endif
