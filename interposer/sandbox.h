/* One sandbox: what the supervisor holds for the whole run. */
#ifndef MOAT_SANDBOX_H
#define MOAT_SANDBOX_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/filter.h>

#include "interposer/cgroup.h"
#include "interposer/limits.h"
#include "interposer/output.h"
#include "syscall-table/table.h"

struct vfs;
struct audit;
struct net;

struct sandbox_opts {
	char **argv;              /* the command */
	const char *chdir;        /* virtual starting directory */
	char **env;               /* the sandbox's whole environment */
	uid_t uid;                /* sandbox credentials */
	gid_t gid;
	const char *audit_log;    /* NULL: none */
	const struct sock_fprog *filter; /* the seccomp program to install */
	sigset_t sigmask;         /* the program's signal mask: the caller's */
	bool sigmask_set;
};

struct sandbox {
	struct sandbox_opts opt;
	struct vfs *vfs;
	struct audit *audit;
	struct net *net;          /* the network policy and worlds (net-stub) */
	int notify_fd;
	pid_t init_pid;
	int init_status;          /* wait status of the first process */
	bool init_done;
	int exec_err_fd;          /* read end: errno of a failed first exec */
	bool as_root;             /* the supervisor is root: switch fsuid */
	uid_t uid;
	gid_t gid;
	char id[17];              /* random id: abstract socket namespace */
	uint64_t supervised[SC_NCLASS];
	uint64_t denied[SC_NCLASS];
	struct limits lim;        /* what the run may use (cli) */
	struct cgroups cg;        /* the kernel's enforcement of them (cgroup.c) */
	struct run_result res;    /* what it came to (interposer/limits.c) */
	struct output out;        /* stdout/stderr relayed or captured (output.c) */
};

/* Supervisor credentials: host file operations for the sandbox run with
 * the sandbox's fsuid/fsgid (host DAC applies as it would to the sandbox);
 * moat's own scratch work runs with its own. */
void creds_sandbox(struct sandbox *sb);
void creds_self(struct sandbox *sb);
/* Take the sandbox's real and effective ids too (this thread only; the saved
 * uid stays 0 so creds_identity_end can return).  For calls whose caller
 * identity the kernel records and shows to others: connect (SO_PEERCRED)
 * and sendmsg (SCM_CREDENTIALS).  Without it a peer would see root. */
void creds_identity_begin(struct sandbox *sb);
void creds_identity_end(struct sandbox *sb);
/* The sandbox's ids and no capability at all (this thread only), for
 * sockets made for the sandbox: a socket keeps its maker's credentials,
 * and netlink checks them.  Ended by creds_identity_end. */
void creds_bare_begin(struct sandbox *sb);
/* Every capability moat holds, effective, for a moment (setns into the
 * sandbox's network namespace); creds_admin_end goes back to the loop's
 * usual set. */
void creds_admin_begin(struct sandbox *sb);
void creds_admin_end(struct sandbox *sb);

/* Start the sandbox (fork, seize, filter, first exec) and run the event
 * loop until the first process exits.  Returns moat's exit code. */
int sandbox_run(struct sandbox *sb);

#endif
