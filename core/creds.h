/* The supervisor's credentials while it works for the sandbox.
 *
 * When moat runs as root, host file operations for the sandbox run with
 * the sandbox's fsuid/fsgid (host DAC applies as it would to the sandbox)
 * and with only the capabilities the loop's own mechanics need; moat's own
 * scratch work runs with its own.  Not root: every switch is a no-op. */
#ifndef MOAT_CREDS_H
#define MOAT_CREDS_H

#include <stdbool.h>
#include <sys/types.h>

struct creds {
	bool as_root; /* the supervisor is root: switch */
	uid_t uid;    /* the sandbox's ids */
	gid_t gid;
};

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
/* Every capability moat holds, effective, for a moment (setns into the
 * sandbox's network namespace); creds_admin_end goes back to the loop's
 * usual set. */
void creds_admin_begin(const struct creds *cr);
void creds_admin_end(const struct creds *cr);
/* Every capability moat holds effective again, on this thread only and
 * with raw syscalls (async-signal-safe): for moat's last work from a
 * thread that was serving the sandbox (a fatal signal's handler). */
void creds_caps_back(void);
/* For a thread of its own (a job): the sandbox's ids for good, real,
 * effective and saved.  This thread only. */
void creds_drop_thread(const struct creds *cr);

#endif
