/* moat: run a program with every resource-naming syscall serviced by a
 * supervisor.  The command line becomes a run plan (cli/options.h: one
 * table of the options); the run follows it, a step at a time, and tears
 * down what it made.  The work is in the modules. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/outfile.h"
#include "audit/stack.h"
#include "cli/options.h"
#include "cli/mcp.h"
#include "cli/report.h"
#include "cli/session.h"
#include "core/creds.h"
#include "fs-emulation/scratch.h"
#include "fs-emulation/vfs.h"
#include "interposer/sandbox.h"
#include "interposer/userns.h"
#include "interposer/watchdog.h"
#include "net-stub/net.h"
#include "syscall-table/filter.h"

#define MOAT_VERSION "0.1.0"

/* The free fds moat needs at least (it uses about 40 for a run). */
#define MOAT_MIN_FDS 64

/* The default memory limit: half of what moat may use, the host's RAM or
 * the limit of a cgroup moat runs in, whichever is smaller (0: unknown). */
static uint64_t default_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
	uint64_t ceiling = cgroup_memory_ceiling();
	if (ceiling && (!ram || ceiling < ram))
		ram = ceiling;
	return ram / 2;
}

/* What the sandbox's processes use now, for the memory moat holds for it
 * (fs-emulation/held.c): the memory cgroup's charge, or the last sample. */
static uint64_t mem_used_hook(void *ctx)
{
	struct sandbox *sb = ctx;
	uint64_t u = cgroup_memory_usage(&sb->cg);
	return u ? u : sb->res.rss_kb * 1024;
}

/* The report of a run the watchdog ended (its loop stuck in one call):
 * from the watchdog's thread, with the loop frozen, so no stdio and no
 * allocation — a fixed line with status XX and the watchdog's own. */
static struct outfile *last_report;
static void report_last_words(const char *msg)
{
	struct outfile *o = last_report;
	if (!o || o->fd < 0)
		return;
	char line[512];
	size_t ml = strcspn(msg, "\n");
	int n = snprintf(line, sizeof line,
			 "{\"status\":\"XX\",\"message\":\"%.*s\",\"limit\":null,\"killed\":true,"
			 "\"moat-exit\":125,\"version\":\"%s\"}\n",
			 (int)(ml > 300 ? 300 : ml), msg, MOAT_VERSION);
	if (n <= 0 || (size_t)n >= sizeof line)
		return;
	if (o->regular && ftruncate(o->fd, 0) < 0)
		return;
	ssize_t w = o->regular ? pwrite(o->fd, line, (size_t)n, 0) : write(o->fd, line, (size_t)n);
	(void)w;
}

/* moat failed before the run: the outputs it made are removed (nothing
 * half-made is left), those that were there stay. */
static void outputs_drop(struct outfile *alog, struct outfile *rep)
{
	outfile_close(alog, true);
	outfile_close(rep, true);
}

static int die(const char *fmt, const char *arg, const char *hint)
{
	fprintf(stderr, "moat: ");
	fprintf(stderr, fmt, arg);
	if (hint)
		fprintf(stderr, " (%s)", hint);
	fputc('\n', stderr);
	return 125;
}

static int kernel_ok(void)
{
	struct utsname u;
	int maj = 0, min = 0;
	if (uname(&u) == 0)
		sscanf(u.release, "%d.%d", &maj, &min);
	return maj > 5 || (maj == 5 && min >= 14);
}

/* A writable --bind the sandbox's uid cannot write is read-only in effect
 * (host permissions apply to the sandbox): say so before the run. */
static void warn_readonly_binds(struct sandbox *sb, struct vfs *v, const struct vfs_mount_req *req,
				int nreq)
{
	for (int i = 0; i < nreq; i++) {
		if (req[i].kind != MNT_BIND || req[i].ro)
			continue;
		struct vfs_mount *m = vfs_mount_of(v, req[i].dst);
		creds_sandbox(&sb->creds);
		int r = faccessat(m->root_fd, "", W_OK | X_OK, AT_EACCESS | AT_EMPTY_PATH);
		creds_self(&sb->creds);
		if (r < 0)
			fprintf(stderr,
				"moat: warning: --bind %s %s: not writable by the sandbox's uid %u, "
				"so read-only in effect (choose --uid/--gid, or change its permissions)\n",
				req[i].src, req[i].dst, (unsigned)sb->creds.uid);
	}
}

/* ---- the run: the plan's steps ----
 *
 * A step that can fail returns 0 to go on, or moat's exit code (125)
 * after one line naming what failed.  Failing before the program's view
 * exists, it removes the outputs and the scratch directory this moat
 * made (nothing half-made is left); the cgroups go at moat's exit
 * (cgroup.c), the rest with the process.  From the view on, run_finish
 * takes everything down and writes the report, a failure's too. */

/* One run: the plan it follows and what it makes.  Static storage: the
 * view and the network make it large. */
struct run {
	const struct run_config *rc;
	struct sandbox sb;
	struct vfs v;
	struct net net; /* the plan's policy, then its worlds (net_setup) */
	char *env[RUN_MAX_ENV + 1];
	struct sock_fprog prog;
	struct outfile alog, rep;      /* moat's own outputs */
	char scratch[PATH_MAX];        /* the writable layers live below it */
	char layer[PATH_MAX];          /* --persist, absolute */
	char pins[NET_MAX_PINS * 200]; /* the names moat resolved, for /etc/hosts */
	bool private_mounts;           /* moat has a mount namespace of its own */
};

/* moat holds fds for the view, the cgroups and the network besides each
 * call's own: its soft limit goes up to the hard one, and the program
 * gets the caller's back (limits_child_plan). */
static int run_fds(struct run *r)
{
	struct limits *lim = &r->sb.lim;
	struct rlimit nof;
	if (getrlimit(RLIMIT_NOFILE, &nof) < 0)
		return 0;
	if (nof.rlim_cur < nof.rlim_max) {
		struct rlimit up = { nof.rlim_max < 65536 ? nof.rlim_max : 65536, nof.rlim_max };
		if (up.rlim_cur > nof.rlim_cur && setrlimit(RLIMIT_NOFILE, &up) == 0)
			lim->nofile_caller = nof.rlim_cur;
		nof.rlim_cur = up.rlim_cur;
	}
	/* What the caller left open counts against it too. */
	unsigned long long open_fds = 0;
	DIR *fds = opendir("/proc/self/fd");
	for (struct dirent *e; fds && (e = readdir(fds));) {
		/* 3 and up, below the limit (higher ones take no slot), not
		 * this listing's own */
		unsigned long long fd = strtoull(e->d_name, NULL, 10);
		open_fds += e->d_name[0] != '.' && fd >= 3 && fd < nof.rlim_cur &&
			    (int)fd != dirfd(fds);
	}
	if (fds)
		closedir(fds);
	if (nof.rlim_cur < MOAT_MIN_FDS + 3 + open_fds) { /* + 0-2 */
		char n[64];
		snprintf(n, sizeof n, "%llu with %llu fds open", (unsigned long long)nof.rlim_cur,
			 open_fds);
		return die("ulimit -n is %s", n,
			   "moat needs 64 free fds of its own: raise it or close some");
	}
	/* Raised for moat first: it fails as it would for the child (no
	 * CAP_SYS_RESOURCE), and then is said here. */
	struct rlimit hi = { nof.rlim_cur, lim->nofile };
	if (lim->nofile > nof.rlim_max && setrlimit(RLIMIT_NOFILE, &hi) < 0) {
		char n[64];
		snprintf(n, sizeof n, "%u is above the hard limit %llu", lim->nofile,
			 (unsigned long long)nof.rlim_max);
		return die("--open-files-limit %s", n,
			   "raising it needs CAP_SYS_RESOURCE: see ulimit -Hn");
	}
	return 0;
}

/* What this host and this moat can do of the plan; the quotas' private
 * mount namespace. */
static int run_host(struct run *r)
{
	char err[512];
	if (!kernel_ok())
		return die("this kernel is too old%s", "", "moat needs Linux >= 5.14");
	if (run_config_check(r->rc, err, sizeof err) < 0)
		return die("%s", err, NULL);
	/* As root always: the sandbox's own tmpfs mounts with a size (its
	 * mount(2), fs-emulation/sys_mount.c) are made there too. */
	if (!r->rc->quota && geteuid() != 0)
		return 0;
	if (unshare(CLONE_NEWNS) < 0) {
		if (r->rc->quota)
			return die("cannot make a private mount namespace for the quotas: %s",
				   strerror(errno), NULL);
		return 0; /* mount(2) with a size= is then refused */
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return die("cannot make a private mount namespace for the quotas: %s",
			   strerror(errno), NULL);
	r->private_mounts = true;
	return 0;
}

/* The plan's network policy, as much of it as it holds: its rules and
 * the names they pinned, all that net_policy_add/load fill in.  Not the
 * whole struct net: 133 KB of mostly empty tables, and a copy faults in
 * every page of both (~0.8 ms). */
static void run_net_policy(struct net *to, const struct net *from)
{
	to->nrule = from->nrule;
	memcpy(to->rule, from->rule, (size_t)from->nrule * sizeof from->rule[0]);
	to->npin = from->npin;
	memcpy(to->pin, from->pin, (size_t)from->npin * sizeof from->pin[0]);
}

/* The private world (a warning only when it cannot be made). */
static void run_net(struct run *r)
{
	char err[512];
	run_net_policy(&r->net, &r->rc->net);
	r->sb.net = &r->net;
	if (net_setup(&r->net, r->rc->root, err, sizeof err) < 0)
		fprintf(stderr, "moat: warning: %s; the sandbox gets no private loopback\n", err);
}

/* From the first directory made to the last removed, the signals a user
 * ends moat with are the program's (sandbox_run forwards them); one that
 * comes before it runs is forwarded at its start. */
static void run_signals(struct run *r)
{
	sigset_t stop;
	sigemptyset(&stop);
	int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
		struct sigaction sa; /* one the caller ignores stays ignored */
		if (sigaction(stops[k], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(&stop, stops[k]);
	}
	sigprocmask(SIG_BLOCK, &stop, &r->sb.opt.sigmask);
	r->sb.opt.sigmask_set = true;
}

/* The limits the kernel holds: the sandbox's cgroups. */
static int run_cgroups(struct run *r)
{
	struct sandbox *sb = &r->sb;
	char err[512];
	if (sb->lim.mem_default)
		sb->lim.mem_bytes = default_memory();
	if (cgroup_setup(&sb->cg, r->rc->cg_use, &sb->lim, err, sizeof err) < 0)
		return die("%s", err, NULL);
	/* The default is the kernel's to hold: moat's own sampling is no
	 * basis for killing a program that asked for no limit. */
	if (sb->lim.mem_default && !sb->cg.ver[CGP_MEMORY])
		sb->lim.mem_bytes = 0;
	return 0;
}

/* The program, its ids, its filter and its outputs' relay. */
static void run_sandbox(struct run *r)
{
	const struct run_config *rc = r->rc;
	struct sandbox *sb = &r->sb;
	for (int k = 0; k <= rc->nenv; k++)
		r->env[k] = rc->env[k];
	sb->out.on = rc->json || rc->lim.output_bytes;
	sb->out.capture = rc->json;
	sb->out.limit = rc->lim.output_bytes;
	sb->opt.argv = rc->argv;
	sb->opt.chdir = rc->chdir;
	sb->opt.lifeline = rc->lifeline;
	if (rc->lifeline >= 0) /* moat's own: not the sandbox's, nor a helper's */
		fcntl(rc->lifeline, F_SETFD, FD_CLOEXEC);
	sb->opt.env = r->env;
	/* In its own network namespace (moat root) the sandbox makes TCP and
	 * UDP sockets itself; otherwise moat makes them in the private world
	 * (or refuses them): a socket of the host's namespace would bind a
	 * host port on its first write. */
	bool netns = r->net.mode == NET_NETNS;
	r->prog.len = netns ? sc_filter_blob_len : sc_filter_blob_inet_len;
	r->prog.filter = (struct sock_filter *)(netns ? sc_filter_blob : sc_filter_blob_inet);
	sb->opt.filter = &r->prog;
	sb->creds = (struct creds){ .as_root = rc->root,
				    .uid = rc->uid,
				    .gid = rc->gid,
				    .id_uid = rc->uid,
				    .id_gid = rc->gid,
				    .ngroups = 1,
				    .groups = { rc->gid } };
	machine_init(&sb->machine, rc->hostname);
	sb->vfs = &r->v;
}

/* Root inside (docs/design.md "Root inside"): with moat root and --uid 0,
 * a user namespace whose ids 0..65535 are a range of host ids of the
 * sandbox's own.  moat serves its root as host root without capabilities
 * (as it served --uid 0 before), its other ids as their host ids. */
static int run_userns(struct run *r)
{
	const struct run_config *rc = r->rc;
	struct creds *cr = &r->sb.creds;
	if (!rc->root || rc->uid != 0 || r->net.mode != NET_NETNS)
		return 0;
	if (rc->gid >= CREDS_NS_RANGE)
		return die("--gid %s: with --uid 0 the sandbox's ids are 0 to 65535", "", NULL);
	uid_t base;
	int e = userns_take(&base);
	if (e < 0) {
		char why[64];
		snprintf(why, sizeof why, "%s", strerror(-e));
		return die("cannot take a range of host ids for the sandbox's root: %s", why,
			   e == -EAGAIN ? "1024 sandboxes with --uid 0 run already"
					: "moat needs a directory of its own, /run/moat");
	}
	cr->base = base;
	cr->id_uid = base;
	cr->id_gid = base + rc->gid;
	cr->uid = 0;
	cr->gid = rc->gid ? base + rc->gid : 0;
	cr->ngroups = 1;
	cr->groups[0] = cr->gid;
	return 0;
}

/* The view's settings (vfs_setup makes it, later). */
static void run_view(struct run *r)
{
	const struct run_config *rc = r->rc;
	struct vfs *v = &r->v;
	v->creds = &r->sb.creds;
	v->mem_ctx = &r->sb;
	v->mem_limit = r->sb.lim.mem_bytes;
	for (int k = 0; k < rc->netc; k++)
		v->etc_allow[v->netc_allow++] = rc->etc[k];
	v->mem_used = mem_used_hook;
	v->machine = &r->sb.machine;
	for (int k = 0, off = 0; k < r->net.npin; k++) {
		char a[INET6_ADDRSTRLEN];
		inet_ntop(r->net.pin[k].family, r->net.pin[k].addr, a, sizeof a);
		off += snprintf(r->pins + off, sizeof r->pins - (size_t)off, "%s\t%s\n", a,
				r->net.pin[k].host);
	}
	v->etc_hosts_pins = r->pins;
	v->etc_dns_stub = r->net.dns_fd >= 0;
	v->etc_no_egress = r->net.nrule == 0;
	/* Without root the sandbox's sockets start in the host's network
	 * namespace (docs/network.md): its /proc/net would be the host's. */
	v->proc_net = r->net.mode == NET_NETNS;
	v->private_mounts = r->private_mounts;
	v->disk_limited = r->rc->disk_limit != 0;
}

/* The run's random id (its scratch directory's name, its abstract
 * socket namespace). */
static int run_id(struct run *r)
{
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
		return die("getrandom failed%s", "", NULL);
	for (int k = 0; k < 8; k++)
		snprintf(r->sb.id + 2 * k, 3, "%02x", rnd[k]);
	memcpy(r->net.id, r->sb.id, sizeof r->net.id);
	return 0;
}

/* The audit log is the record of what the sandbox tried: a log the
 * sandbox can write it could also erase or forge.  Refused inside a
 * writable --bind or the --persist directory. */
static int run_log_outside(struct run *r)
{
	const struct run_config *rc = r->rc;
	for (int k = 0; k < rc->nmount + (rc->persist ? 1 : 0); k++) {
		bool pk = k == rc->nmount;
		if (!pk && (rc->mount[k].kind != MNT_BIND || rc->mount[k].ro))
			continue;
		const char *src = pk ? rc->persist : rc->mount[k].src;
		int sfd = open(src, O_PATH | O_DIRECTORY | O_CLOEXEC);
		bool below = sfd >= 0 && outfile_below(&r->alog, sfd);
		if (sfd >= 0)
			close(sfd);
		if (below) {
			char err[PATH_MAX + 256];
			outputs_drop(&r->alog, &r->rep);
			snprintf(err, sizeof err, "%s is inside %s %s, which the sandbox can write",
				 rc->audit_log, pk ? "--persist" : "--bind", src);
			return die(
				"--audit-log %s", err,
				"it could remove or rewrite its own record: put the log outside it");
		}
	}
	return 0;
}

/* moat's own outputs, opened now, before anything of the sandbox's
 * exists (audit/outfile.h): nothing it does can redirect them. */
static int run_outputs(struct run *r)
{
	const struct run_config *rc = r->rc;
	char err[PATH_MAX + 256];
	if (rc->report && outfile_open(&r->rep, rc->report, false, 0644, err, sizeof err) < 0)
		return die("--report %s", err, NULL);
	if (rc->audit_log &&
	    outfile_open(&r->alog, rc->audit_log, true, 0600, err, sizeof err) < 0) {
		outfile_close(&r->rep, true);
		return die("--audit-log %s", err, NULL);
	}
	int code;
	if (rc->audit_log && (code = run_log_outside(r)))
		return code;
	if (rc->report) {
		last_report = &r->rep;
		watchdog_last_words(report_last_words);
	}
	if (rc->audit_log) {
		r->sb.audit = audit_open(r->alog.fd, rc->audit_level, &rc->audit_caps);
		if (!r->sb.audit) {
			outputs_drop(&r->alog, &r->rep);
			return die("--audit-log %s: out of memory", rc->audit_log, NULL);
		}
		r->alog.fd = -1; /* the log's now */
	}
	return 0;
}

/* The scratch directory, 0710, of the sandbox's group: the sandbox's ids
 * may pass through (the kernel walks exec paths with its credentials)
 * but not list, and no other local user may reach in: the sandbox's
 * /tmp and /workspace below are 01777 and the sandbox's, and moat
 * removes them as root at the end. */
static int run_scratch(struct run *r)
{
	const char *tmp = getenv("MOAT_SCRATCH");
	snprintf(r->scratch, sizeof r->scratch, "%s/moat-%s", tmp && *tmp ? tmp : "/tmp", r->sb.id);
	bool made = mkdir(r->scratch, 0710) == 0;
	if (!made || (r->rc->root && chown(r->scratch, (uid_t)-1, r->rc->gid) < 0) ||
	    chmod(r->scratch, 0710) < 0) {
		int e = errno;
		if (made) /* never a directory of someone else's */
			rmdir(r->scratch);
		outputs_drop(&r->alog, &r->rep);
		return die("cannot create the scratch directory %s", r->scratch, strerror(e));
	}
	/* Removed even by a moat that ends without run_finish: the
	 * watchdog's last resort, a fatal signal (fs-emulation/scratch.h). */
	scratch_hold(r->scratch);
	return 0;
}

/* The --persist directory, absolute, and refused before anything is made
 * when its parent is missing: a typo must not leave a directory behind. */
static int run_persist(struct run *r)
{
	const char *persist = r->rc->persist;
	char parent[PATH_MAX];
	snprintf(parent, sizeof parent, "%s", persist);
	char *slash = strrchr(parent, '/');
	if (slash)
		*(slash == parent ? slash + 1 : slash) = '\0';
	else
		snprintf(parent, sizeof parent, ".");
	if (!realpath(parent, r->layer)) {
		rmdir(r->scratch);
		outputs_drop(&r->alog, &r->rep);
		return die("--persist %s: its parent directory does not exist", persist,
			   "create it first");
	}
	const char *base = strrchr(persist, '/') ? strrchr(persist, '/') + 1 : persist;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		rmdir(r->scratch);
		outputs_drop(&r->alog, &r->rep);
		return die("--persist %s: name a directory, not its parent", persist, NULL);
	}
	size_t ln = strlen(r->layer);
	snprintf(r->layer + ln, sizeof r->layer - ln, "%s%s", r->layer[ln - 1] == '/' ? "" : "/",
		 base);
	return 0;
}

/* Every writable layer lives in scratch: under --disk-limit one tmpfs of
 * that size, seen only in this mount namespace (the host sees an empty
 * directory, and gets its memory back when moat exits, even killed). */
static int run_disk(struct run *r)
{
	char opts[64];
	snprintf(opts, sizeof opts, "size=%llu,mode=0710,gid=%u", r->rc->disk_limit, r->rc->gid);
	if (mount("tmpfs", r->scratch, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		int e = errno;
		rmdir(r->scratch);
		outputs_drop(&r->alog, &r->rep);
		return die("--disk-limit: cannot mount its tmpfs: %s", strerror(e), NULL);
	}
	return 0;
}

/* What the sandbox can write, moat never parses for a stack. */
static void run_distrust(struct run *r)
{
	const struct run_config *rc = r->rc;
	stack_walker_ids(rc->uid, rc->gid);
	stack_distrust(r->scratch);
	if (rc->persist)
		stack_distrust(r->layer);
	for (int k = 0; k < rc->nmount; k++) {
		char real[PATH_MAX];
		if (rc->mount[k].kind == MNT_BIND && !rc->mount[k].ro &&
		    realpath(rc->mount[k].src, real))
			stack_distrust(real);
	}
}

/* A program that failed with its writable layers full failed of the
 * disk limit (it saw ENOSPC): DL. */
static void run_disk_verdict(struct run *r)
{
	struct run_result *res = &r->sb.res;
	struct statvfs fs;
	if (r->rc->disk_limit && (!strcmp(res->status, "RE") || !strcmp(res->status, "SG")) &&
	    statvfs(r->scratch, &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize < 65536) {
		snprintf(res->status, sizeof res->status, "DL");
		res->limit = "disk";
		snprintf(res->message, sizeof res->message,
			 "disk limit of %llu bytes reached (the program got ENOSPC)",
			 r->rc->disk_limit);
	}
}

/* The view, the starting directory in it, and the program's run: moat's
 * exit code (the program's, or 125). */
static int run_program(struct run *r)
{
	const struct run_config *rc = r->rc;
	char err[512];
	umask(0); /* the sandbox's own umask is applied by each handler */
	run_distrust(r);
	if (vfs_setup(&r->v, r->scratch, rc->persist ? r->layer : NULL, rc->uid, rc->gid, rc->mount,
		      rc->nmount, err, sizeof err) < 0)
		return die("%s", err, NULL);
	struct vfs_path p;
	creds_sandbox(&r->sb.creds);
	int w = vfs_walk(&r->v, NULL, "/", rc->chdir, VW_FOLLOW, &p);
	creds_self(&r->sb.creds);
	if (w == 0)
		warn_readonly_binds(&r->sb, &r->v, rc->mount, rc->nmount);
	int code;
	if (w < 0 || !p.exists || !S_ISDIR(p.st.st_mode)) {
		code = die("--chdir %s: no such directory in the sandbox", rc->chdir, NULL);
	} else {
		r->sb.opt.chdir = p.vpath[0] ? strdup(p.vpath) : rc->chdir;
		code = sandbox_run(&r->sb);
		cgroup_cleanup(&r->sb.cg);
		run_disk_verdict(r);
	}
	if (w == 0)
		vfs_path_release(&p);
	return code;
}

/* The run's end: its files listed, the view and the worlds taken down,
 * the summaries and the report written. */
static void run_finish(struct run *r, int code)
{
	const struct run_config *rc = r->rc;
	struct sandbox *sb = &r->sb;
	/* The run's files, while the layers still exist. */
	if ((rc->report || rc->json) && sb->res.t0_real.tv_sec)
		report_collect_files(&report_files, &r->v, sb->res.t0_real);
	vfs_teardown(&r->v);
	if (sb->audit)
		audit_summary(sb->audit, "net-summary", net_summary_fields, &r->net);
	net_summary(&r->net, stderr);
	/* Last, so `--report -` ends stderr with the report's one line. */
	if (rc->report) {
		if (!sb->res.status[0]) /* moat failed before the run */
			snprintf(sb->res.status, sizeof sb->res.status, "XX");
		struct report_args ra = { sb, sb->init_status, code, MOAT_VERSION };
		int rr = outfile_rewrite(&r->rep, report_print_to, &ra);
		if (rr < 0)
			fprintf(stderr, "moat: --report %s: %s\n", rc->report, strerror(-rr));
		outfile_close(&r->rep, false);
	}
	if (rc->json) {
		if (!sb->res.status[0])
			snprintf(sb->res.status, sizeof sb->res.status, "XX");
		report_json(stdout, sb, sb->init_status, code, MOAT_VERSION);
		fflush(stdout);
	}
	net_teardown(&r->net);
	if (rc->disk_limit) {
		umount2(r->scratch, MNT_DETACH);
		rmdir(r->scratch);
	}
	scratch_forget(r->scratch);
	audit_close(sb->audit);
	outfile_close(&r->alog, false);
}

/* Follow the plan: check the host, make the run's parts in order, run
 * the program, take everything down.  moat's exit code. */
static int run_plan_execute(const struct run_config *rc)
{
	static struct run run;
	struct run *r = &run;
	r->rc = rc;
	r->sb.lim = rc->lim;
	r->alog = r->rep = (struct outfile){ .fd = -1, .dirfd = -1 };
	int code;
	if ((code = run_fds(r)) || (code = run_host(r)))
		return code;
	run_net(r);
	run_signals(r);
	if ((code = run_cgroups(r)))
		return code;
	run_sandbox(r);
	if ((code = run_userns(r)))
		return code;
	run_view(r);
	if ((code = run_id(r)) || (code = run_outputs(r)) || (code = run_scratch(r)) ||
	    (rc->persist && (code = run_persist(r))) || (rc->disk_limit && (code = run_disk(r))))
		return code;
	code = run_program(r);
	run_finish(r, code);
	return code;
}

static int cmd_run(int argc, char **argv)
{
	stack_unwinder_early(); /* before anything of the sandbox's exists */
	static struct run_config rc;
	/* An argument is at most 128 KiB (MAX_ARG_STRLEN): a message that
	 * echoes one holds it whole. */
	static char err[(128 << 10) + 512];
	run_config_defaults(&rc); /* rc is static: already zero */
	if (options_parse_argv(&rc, argc, argv, err, sizeof err) < 0)
		return die("%s", err, NULL);
	return run_plan_execute(&rc);
}

int main(int argc, char **argv)
{
	/* fds 0-2 are the sandbox's; were one closed, moat's own first open
	 * would take its number and be handed to the sandbox as stdin. */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			return 125;
	/* A write of moat's to a reader that went away (the stack walker, an
	 * audit log on a pipe) is an error to handle, not moat's death (and
	 * the sandbox's with it).  The sandbox gets the default back. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		options_usage(stderr);
		return 125;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("moat %s\n", MOAT_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		options_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "session"))
		return cmd_session(argc - 2, argv + 2);
	if (!strcmp(argv[1], "mcp"))
		return cmd_mcp(argc - 2, argv + 2);
	if (!strcmp(argv[1], "run")) {
		if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
			options_usage(stdout);
			return 0;
		}
		return cmd_run(argc - 2, argv + 2);
	}
	fprintf(stderr, "moat: unknown command '%s' (try: moat run -- CMD)\n", argv[1]);
	return 125;
}
