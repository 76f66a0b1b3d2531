/* The run plan: everything `moat run`'s options say, validated, before
 * anything of the run exists.  The options' table (cli/options.h) fills
 * it, from argv or from any other front end (a session's create, an OCI
 * config.json); the run follows it (cli/main.c run_plan_execute).
 *
 * Strings are borrowed: the plan keeps the pointers it was given (argv,
 * or a parsed document), which must outlive it.  What it must build (a
 * VAR=VALUE, a --tmpfs DST without its :SIZE) it holds in its own
 * buffers, so a plan is large (~900 KiB): give it static storage or the
 * heap, never the stack.  A plan holds no fd and no process: dropping one
 * leaves nothing behind. */
#ifndef MOAT_RUN_CONFIG_H
#define MOAT_RUN_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "audit/audit.h"
#include "fs-emulation/vfs.h"
#include "interposer/cgroup.h"
#include "interposer/limits.h"
#include "net-stub/net.h"

#define RUN_MAX_ENV 128  /* variables, the four defaults included */
#define RUN_ENV_LEN 4096 /* one VAR=VALUE, its NUL included */
#define RUN_MAX_ETC 16   /* --etc names */
/* Mounts the options may ask for: vfs_setup adds a dozen of its own. */
#define RUN_MAX_MOUNTS (VFS_MAX_MOUNTS - 12)

struct run_config {
	/* The view (fs-emulation). */
	struct vfs_mount_req mount[VFS_MAX_MOUNTS]; /* --ro-bind, --bind, --overlay, --tmpfs */
	int nmount;
	char tmpfs_dst[VFS_MAX_MOUNTS][PATH_MAX]; /* mount[i].dst of a --tmpfs DST:SIZE */
	unsigned long long disk_limit;            /* --disk-limit: bytes, 0: none */
	bool quota;          /* --disk-limit or a --tmpfs SIZE: a private mount namespace */
	const char *persist; /* --persist DIR, or NULL */
	const char *chdir;   /* --chdir (default /workspace) */
	const char *etc[RUN_MAX_ETC]; /* --etc names or patterns */
	int netc;
	const char *hostname; /* --hostname (default moat) */

	/* The program. */
	char **argv;                /* the command: NULL until one is given */
	char *env[RUN_MAX_ENV + 1]; /* its whole environment, NULL-terminated */
	int nenv;
	/* What env[] points to, one after another (a replaced value's old
	 * text stays): the defaults share one page, not one each. */
	char envbuf[RUN_MAX_ENV * RUN_ENV_LEN];
	size_t envused;
	bool root;         /* moat runs as root (euid 0) */
	unsigned uid, gid; /* --uid, --gid (default 65534 as root, else the caller's) */

	/* What it may use (interposer). */
	struct limits lim;
	enum cg_use cg_use; /* --cgroup */
	/* The policy half of the network (--allow-net, --net-policy): host
	 * names are resolved when the option is applied.  The run takes a
	 * copy and fills in the runtime half (net_setup). */
	struct net net;

	/* moat's own outputs (audit). */
	const char *report;    /* --report FILE, "-": stderr; or NULL */
	int lifeline;          /* --lifeline FD, or -1 */
	bool json;             /* --json */
	const char *audit_log; /* --audit-log FILE, or NULL */
	enum audit_level audit_level;
	struct audit_caps audit_caps;
};

/* The defaults: what `moat run -- CMD` does.  Reads the caller's euid,
 * egid and LANG and TERM (the sandbox's LANG and TERM default to them). */
void run_config_init(struct run_config *rc);
/* The defaults only, on a plan already zero (static storage): moat's own
 * start, where zeroing ~900 KiB again costs the page faults of all of it
 * (measured: ~1.5 ms of a 20 ms `moat run -- true`). */
void run_config_defaults(struct run_config *rc);

/* What no single option can say wrong, only two together, and what this
 * moat cannot do (a quota without root).  0, or -1 with one line for
 * people in err.  Applying the options does not call it: the run does,
 * after its host checks. */
int run_config_check(const struct run_config *rc, char *err, size_t errlen);

#endif
