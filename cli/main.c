/* moat: run a program with every resource-naming syscall serviced by a
 * supervisor.  Option parsing and the run's setup and teardown; the work
 * is in the modules. */
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
#include "audit/report.h"
#include "audit/stack.h"
#include "cli/options.h"
#include "fs-emulation/vfs.h"
#include "interposer/sandbox.h"
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
static void warn_readonly_binds(struct sandbox *sb, struct vfs *v,
				const struct vfs_mount_req *req, int nreq)
{
	for (int i = 0; i < nreq; i++) {
		if (req[i].kind != MNT_BIND || req[i].ro)
			continue;
		struct vfs_mount *m = vfs_mount_of(v, req[i].dst);
		creds_sandbox(sb);
		int r = faccessat(m->root_fd, "", W_OK | X_OK, AT_EACCESS | AT_EMPTY_PATH);
		creds_self(sb);
		if (r < 0)
			fprintf(stderr,
				"moat: warning: --bind %s %s: not writable by the sandbox's uid %u, "
				"so read-only in effect (choose --uid/--gid, or change its permissions)\n",
				req[i].src, req[i].dst, (unsigned)sb->uid);
	}
}

/* The overlay's copy-up works with moat's own credentials (interposer
 * owns them). */
static void creds_self_hook(void *sb)
{
	creds_self(sb);
}

static void creds_sandbox_hook(void *sb)
{
	creds_sandbox(sb);
}

static int cmd_run(int argc, char **argv)
{
	static struct run_config rc;
	/* An argument is at most 128 KiB (MAX_ARG_STRLEN): a message that
	 * echoes one holds it whole. */
	static char perr[(128 << 10) + 512];
	run_config_init(&rc);
	if (options_parse_argv(&rc, argc, argv, perr, sizeof perr) < 0)
		return die("%s", perr, NULL);
	const struct vfs_mount_req *req = rc.mount;
	int nreq = rc.nmount;
	const char *chdir_to = rc.chdir, *audit_log = rc.audit_log, *persist = rc.persist;
	unsigned long long disk_limit = rc.disk_limit;
	bool root = rc.root;
	unsigned uid = rc.uid, gid = rc.gid;
	static struct net net;
	net = rc.net;
	char neterr[512];
	struct limits lim = rc.lim;
	const char *report = rc.report;
	bool json = rc.json;

	/* moat holds fds for the view, the cgroups and the network besides
	 * each call's own: its soft limit goes up to the hard one, and the
	 * program gets the caller's back (limits_child). */
	struct rlimit nof;
	if (getrlimit(RLIMIT_NOFILE, &nof) == 0) {
		if (nof.rlim_cur < nof.rlim_max) {
			struct rlimit up = { nof.rlim_max < 65536 ? nof.rlim_max : 65536, nof.rlim_max };
			if (up.rlim_cur > nof.rlim_cur && setrlimit(RLIMIT_NOFILE, &up) == 0)
				lim.nofile_caller = nof.rlim_cur;
			nof.rlim_cur = up.rlim_cur;
		}
		/* What the caller left open counts against it too. */
		unsigned long long open_fds = 0;
		DIR *fds = opendir("/proc/self/fd");
		for (struct dirent *e; fds && (e = readdir(fds));) {
			/* 3 and up, below the limit (higher ones take no slot),
			 * not this listing's own */
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
		/* Raised for moat first: it fails as it would for the child
		 * (no CAP_SYS_RESOURCE), and then is said here. */
		struct rlimit hi = { nof.rlim_cur, lim.nofile };
		if (lim.nofile > nof.rlim_max && setrlimit(RLIMIT_NOFILE, &hi) < 0) {
			char n[64];
			snprintf(n, sizeof n, "%u is above the hard limit %llu", lim.nofile,
				 (unsigned long long)nof.rlim_max);
			return die("--open-files-limit %s", n,
				   "raising it needs CAP_SYS_RESOURCE: see ulimit -Hn");
		}
	}
	if (!kernel_ok())
		return die("this kernel is too old%s", "", "moat needs Linux >= 5.14");
	if (disk_limit && persist)
		return die("--disk-limit and --persist together%s", "",
			   "a persisted layer lives on the host's disk, outside the limit; drop one");
	if (rc.quota && !root)
		return die("--disk-limit and --tmpfs DST:SIZE need root%s", "",
			   "they are tmpfs mounts in a private mount namespace; run moat as root or "
			   "drop them");
	if (rc.quota && (unshare(CLONE_NEWNS) < 0 ||
		      mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0))
		return die("cannot make a private mount namespace for the quotas: %s",
			   strerror(errno), NULL);
	if (net_setup(&net, root, neterr, sizeof neterr) < 0)
		fprintf(stderr, "moat: warning: %s; the sandbox gets no private loopback\n", neterr);

	static struct sandbox sb;
	sb.net = &net;
	sb.lim = lim;
	/* From the first directory made to the last removed, the signals a
	 * user ends moat with are the program's (sandbox_run forwards them);
	 * one that comes before it runs is forwarded at its start. */
	sigset_t stop;
	sigemptyset(&stop);
	int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
		struct sigaction sa; /* one the caller ignores stays ignored */
		if (sigaction(stops[k], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(&stop, stops[k]);
	}
	sigprocmask(SIG_BLOCK, &stop, &sb.opt.sigmask);
	sb.opt.sigmask_set = true;
	if (sb.lim.mem_default)
		sb.lim.mem_bytes = default_memory();
	char cgerr[512];
	if (cgroup_setup(&sb.cg, rc.cg_use, &sb.lim, cgerr, sizeof cgerr) < 0)
		return die("%s", cgerr, NULL);
	/* The default is the kernel's to hold: moat's own sampling is no
	 * basis for killing a program that asked for no limit. */
	if (sb.lim.mem_default && !sb.cg.ver[CGP_MEMORY])
		sb.lim.mem_bytes = 0;
	sb.out.on = json || lim.output_bytes;
	sb.out.capture = json;
	sb.out.limit = lim.output_bytes;
	static struct vfs v;
	sb.opt.argv = rc.argv;
	sb.opt.chdir = chdir_to;
	sb.opt.env = rc.env;
	sb.opt.uid = uid;
	sb.opt.gid = gid;
	sb.opt.audit_log = audit_log;
	static struct sock_fprog prog;
	/* In its own network namespace (moat root) the sandbox makes TCP and
	 * UDP sockets itself; otherwise moat makes them in the private world
	 * (or refuses them): a socket of the host's namespace would bind a
	 * host port on its first write. */
	prog.len = net.mode == NET_NETNS ? sc_filter_blob_len : sc_filter_blob_inet_len;
	prog.filter = (struct sock_filter *)(net.mode == NET_NETNS ? sc_filter_blob : sc_filter_blob_inet);
	sb.opt.filter = &prog;
	sb.uid = uid;
	sb.gid = gid;
	sb.as_root = root;
	sb.vfs = &v;
	v.creds_self = creds_self_hook;
	v.creds_sandbox = creds_sandbox_hook;
	v.creds_ctx = &sb;
	v.mem_limit = sb.lim.mem_bytes;
	for (int k = 0; k < rc.netc; k++)
		v.etc_allow[v.netc_allow++] = rc.etc[k];
	v.mem_used = mem_used_hook;
	snprintf(v.hostname, sizeof v.hostname, "%s", rc.hostname);
	static char pins[NET_MAX_PINS * 200];
	for (int k = 0, off = 0; k < net.npin; k++) {
		char a[INET6_ADDRSTRLEN];
		inet_ntop(net.pin[k].family, net.pin[k].addr, a, sizeof a);
		off += snprintf(pins + off, sizeof pins - (size_t)off, "%s\t%s\n", a, net.pin[k].host);
	}
	v.etc_hosts_pins = pins;
	v.etc_dns_stub = net.dns_fd >= 0;
	v.etc_no_egress = net.nrule == 0;
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
		return die("getrandom failed%s", "", NULL);
	for (int k = 0; k < 8; k++)
		snprintf(sb.id + 2 * k, 3, "%02x", rnd[k]);

	/* moat's own outputs, opened now, before anything of the sandbox's
	 * exists (audit/outfile.h): nothing it does can redirect them. */
	static struct outfile alog = { .fd = -1, .dirfd = -1 }, rep = { .fd = -1, .dirfd = -1 };
	char oerr[PATH_MAX + 256];
	if (report && outfile_open(&rep, report, false, 0644, oerr, sizeof oerr) < 0)
		return die("--report %s", oerr, NULL);
	if (audit_log && outfile_open(&alog, audit_log, true, 0600, oerr, sizeof oerr) < 0) {
		outfile_close(&rep, true);
		return die("--audit-log %s", oerr, NULL);
	}
	/* The audit log is the record of what the sandbox tried: a log the
	 * sandbox can write it could also erase or forge. */
	for (int k = 0; audit_log && k < nreq + (persist ? 1 : 0); k++) {
		bool pk = k == nreq;
		if (!pk && (req[k].kind != MNT_BIND || req[k].ro))
			continue;
		const char *src = pk ? persist : req[k].src;
		int sfd = open(src, O_PATH | O_DIRECTORY | O_CLOEXEC);
		bool below = sfd >= 0 && outfile_below(&alog, sfd);
		if (sfd >= 0)
			close(sfd);
		if (below) {
			outputs_drop(&alog, &rep);
			snprintf(oerr, sizeof oerr, "%s is inside %s %s, which the sandbox can write", audit_log,
				 pk ? "--persist" : "--bind", src);
			return die("--audit-log %s", oerr,
				   "it could remove or rewrite its own record: put the log outside it");
		}
	}
	if (report) {
		last_report = &rep;
		watchdog_last_words(report_last_words);
	}
	if (audit_log) {
		sb.audit = audit_open(alog.fd, rc.audit_level, &rc.audit_caps);
		if (!sb.audit) {
			outputs_drop(&alog, &rep);
			return die("--audit-log %s: out of memory", audit_log, NULL);
		}
		alog.fd = -1; /* the log's now */
	}
	const char *tmp = getenv("MOAT_SCRATCH");
	char scratch[PATH_MAX];
	snprintf(scratch, sizeof scratch, "%s/moat-%s", tmp && *tmp ? tmp : "/tmp", sb.id);
	/* 0710, of the sandbox's group: the sandbox's ids may pass through
	 * (the kernel walks exec paths with its credentials) but not list,
	 * and no other local user may reach in: the sandbox's /tmp and
	 * /workspace below are 01777 and the sandbox's, and moat removes
	 * them as root at the end. */
	bool made = mkdir(scratch, 0710) == 0;
	if (!made || (root && chown(scratch, (uid_t)-1, gid) < 0) || chmod(scratch, 0710) < 0) {
		int e = errno;
		if (made) /* never a directory of someone else's */
			rmdir(scratch);
		outputs_drop(&alog, &rep);
		errno = e;
		return die("cannot create the scratch directory %s", scratch, strerror(errno));
	}
	char layer[PATH_MAX];
	if (persist) {
		/* Absolute, and refused before anything is made when its parent
		 * is missing: a typo must not leave a directory behind. */
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%s", persist);
		char *slash = strrchr(parent, '/');
		if (slash)
			*(slash == parent ? slash + 1 : slash) = '\0';
		else
			snprintf(parent, sizeof parent, ".");
		if (!realpath(parent, layer)) {
			rmdir(scratch);
			outputs_drop(&alog, &rep);
			return die("--persist %s: its parent directory does not exist", persist,
				   "create it first");
		}
		const char *base = strrchr(persist, '/') ? strrchr(persist, '/') + 1 : persist;
		if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
			rmdir(scratch);
			outputs_drop(&alog, &rep);
			return die("--persist %s: name a directory, not its parent", persist, NULL);
		}
		size_t ln = strlen(layer);
		snprintf(layer + ln, sizeof layer - ln, "%s%s", layer[ln - 1] == '/' ? "" : "/", base);
	}
	if (disk_limit) {
		/* Every writable layer lives in scratch: one tmpfs of that size,
		 * seen only in this mount namespace (the host sees an empty
		 * directory, and gets its memory back when moat exits, even
		 * killed). */
		char opts[64];
		snprintf(opts, sizeof opts, "size=%llu,mode=0710,gid=%u", disk_limit, gid);
		if (mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
			int e = errno;
			rmdir(scratch);
			outputs_drop(&alog, &rep);
			return die("--disk-limit: cannot mount its tmpfs: %s", strerror(e), NULL);
		}
	}
	umask(0); /* the sandbox's own umask is applied by each handler */
	char err[512];
	/* What the sandbox can write, moat never parses for a stack. */
	stack_walker_ids(uid, gid);
	stack_distrust(scratch);
	if (persist)
		stack_distrust(layer);
	for (int k = 0; k < nreq; k++) {
		char real[PATH_MAX];
		if (req[k].kind == MNT_BIND && !req[k].ro && realpath(req[k].src, real))
			stack_distrust(real);
	}
	int r = vfs_setup(&v, scratch, persist ? layer : NULL, uid, gid, req, nreq, err, sizeof err);
	int code;
	if (r < 0) {
		code = die("%s", err, NULL);
	} else {
		struct vfs_path p;
		creds_sandbox(&sb);
		r = vfs_walk(&v, NULL, "/", chdir_to, VW_FOLLOW, &p);
		creds_self(&sb);
		if (r == 0)
			warn_readonly_binds(&sb, &v, req, nreq);
		if (r < 0 || !p.exists || !S_ISDIR(p.st.st_mode)) {
			code = die("--chdir %s: no such directory in the sandbox", chdir_to, NULL);
		} else {
			sb.opt.chdir = p.vpath[0] ? strdup(p.vpath) : chdir_to;
			code = sandbox_run(&sb);
			cgroup_cleanup(&sb.cg);
			/* A program that failed with its writable layers full
			 * failed of the disk limit (it saw ENOSPC): DL. */
			struct statvfs fs;
			if (disk_limit && (!strcmp(sb.res.status, "RE") || !strcmp(sb.res.status, "SG")) &&
			    statvfs(scratch, &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize < 65536) {
				snprintf(sb.res.status, sizeof sb.res.status, "DL");
				sb.res.limit = "disk";
				snprintf(sb.res.message, sizeof sb.res.message,
					 "disk limit of %llu bytes reached (the program got ENOSPC)", disk_limit);
			}
		}
		if (r == 0)
			vfs_path_release(&p);
	}
	/* The run's files, while the layers still exist. */
	if ((report || json) && sb.res.t0_real.tv_sec)
		report_collect_files(&report_files, &v, sb.res.t0_real);
	vfs_teardown(&v);
	if (sb.audit)
		audit_net_summary(sb.audit, &net);
	net_summary(&net, stderr);
	/* Last, so `--report -` ends stderr with the report's one line. */
	if (report) {
		if (!sb.res.status[0]) /* moat failed before the run */
			snprintf(sb.res.status, sizeof sb.res.status, "XX");
		struct report_args ra = { &sb, sb.init_status, code, MOAT_VERSION };
		int rr = outfile_rewrite(&rep, report_print_to, &ra);
		if (rr < 0)
			fprintf(stderr, "moat: --report %s: %s\n", report, strerror(-rr));
		outfile_close(&rep, false);
	}
	if (json) {
		if (!sb.res.status[0])
			snprintf(sb.res.status, sizeof sb.res.status, "XX");
		report_json(stdout, &sb, sb.init_status, code, MOAT_VERSION);
		fflush(stdout);
	}
	net_teardown(&net);
	if (disk_limit) {
		umount2(scratch, MNT_DETACH);
		rmdir(scratch);
	}
	audit_close(sb.audit);
	outfile_close(&alog, false);
	return code;
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
