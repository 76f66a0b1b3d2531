/* `moat run`'s options: the table, its setters, argv and --help
 * (options.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"

#define USAGE "usage: moat run [OPTIONS] -- CMD [ARGS...]"
#define HELP_COL 22 /* where the help text starts, its continuation lines too */

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
						      ...);
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- values ---- */

static int parse_id(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v > 0xfffffffeUL)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* "512", "64K", "1.5G" -> bytes. */
static int parse_size(const char *s, unsigned long long *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	double mul = 1;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1024.0;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1024.0 * 1024;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1024.0 * 1024 * 1024;
		end++;
		break;
	case 't':
	case 'T':
		mul = 1024.0 * 1024 * 1024 * 1024;
		end++;
		break;
	}
	if (*end == 'i' && mul > 1)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v * mul > 1e18)
		return -1;
	*out = (unsigned long long)(v * mul);
	return 0;
}

/* A positive size for option `o`. */
static int size_arg(const struct moat_option *o, const char *x, unsigned long long *out, char *err,
		    size_t errlen)
{
	if (parse_size(x, out) < 0 || *out == 0)
		return fail(err, errlen,
			    "%s: expected a positive number of bytes (K, M, G suffixes) (%s)",
			    o->name, x);
	return 0;
}

/* A positive count (at most a million) for option `o`. */
static int count_arg(const struct moat_option *o, const char *x, unsigned *out, char *err,
		     size_t errlen)
{
	unsigned v;
	if (parse_id(x, &v) < 0 || v == 0 || v > 1000000)
		return fail(err, errlen, "%s: expected a positive count (%s)", o->name, x);
	*out = v;
	return 0;
}

/* Seconds for option `o`: up to 1e7, 0 only where zero_ok. */
static int seconds_arg(const struct moat_option *o, const char *x, bool zero_ok, double *out,
		       char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double s = strtod(x, &end);
	if (errno || end == x || *end || s < 0 || s > 1e7 || (s == 0 && !zero_ok))
		return fail(err, errlen, "%s: expected a number of seconds (0.5, 10) (%s)", o->name,
			    x);
	*out = s;
	return 0;
}

/* ---- the view ---- */

/* One mount of the view: where it goes, checked before its source. */
static int mount_add(struct run_config *rc, const struct moat_option *o, struct vfs_mount_req m,
		     char *err, size_t errlen)
{
	const char *dst = m.dst;
	if (dst[0] != '/')
		return fail(err, errlen, "%s: the destination must be an absolute path (%s)", dst,
			    o->name);
	if (strcmp(dst, "/") == 0 || strncmp(dst, "/proc", 5) == 0 || strncmp(dst, "/dev", 4) == 0)
		if (strcmp(dst, "/dev/shm") != 0)
			return fail(err, errlen,
				    "%s: cannot mount over the root, /proc or /dev (%s)", dst,
				    o->name);
	if (rc->nmount >= RUN_MAX_MOUNTS)
		return fail(err, errlen, "too many mounts");
	if (m.kind != MNT_TMPFS) {
		struct stat st;
		if (stat(m.src, &st) < 0)
			return fail(err, errlen,
				    "%s: source does not exist (give an existing host directory)",
				    m.src);
		if (!S_ISDIR(st.st_mode))
			return fail(err, errlen,
				    "%s: source is not a directory (only directories can be bound)",
				    m.src);
	}
	rc->mount[rc->nmount++] = m;
	return 0;
}

static int set_ro_bind(struct run_config *rc, const struct moat_option *o, char *const *args,
		       char *err, size_t errlen)
{
	struct vfs_mount_req m = { .src = args[0], .dst = args[1], .kind = MNT_BIND, .ro = true };
	return mount_add(rc, o, m, err, errlen);
}

static int set_bind(struct run_config *rc, const struct moat_option *o, char *const *args,
		    char *err, size_t errlen)
{
	struct vfs_mount_req m = { .src = args[0], .dst = args[1], .kind = MNT_BIND };
	return mount_add(rc, o, m, err, errlen);
}

static int set_overlay(struct run_config *rc, const struct moat_option *o, char *const *args,
		       char *err, size_t errlen)
{
	struct vfs_mount_req m = { .src = args[0], .dst = args[1], .kind = MNT_OVERLAY };
	return mount_add(rc, o, m, err, errlen);
}

/* DST or DST:SIZE (the last colon's: a DST may hold colons). */
static int set_tmpfs(struct run_config *rc, const struct moat_option *o, char *const *args,
		     char *err, size_t errlen)
{
	struct vfs_mount_req m = { .dst = args[0], .kind = MNT_TMPFS };
	const char *colon = strrchr(args[0], ':');
	if (colon) {
		if (parse_size(colon + 1, &m.size) < 0 || m.size == 0)
			return fail(
				err, errlen,
				"--tmpfs %s: SIZE must be a positive number of bytes (K, M, G suffixes)",
				args[0]);
		char *d = rc->tmpfs_dst[rc->nmount];
		snprintf(d, sizeof rc->tmpfs_dst[0], "%.*s", (int)(colon - args[0]), args[0]);
		m.dst = d;
	}
	if (mount_add(rc, o, m, err, errlen) < 0)
		return -1;
	if (colon)
		rc->quota = true;
	return 0;
}

static int set_disk_limit(struct run_config *rc, const struct moat_option *o, char *const *args,
			  char *err, size_t errlen)
{
	unsigned long long b;
	if (parse_size(args[0], &b) < 0 || b == 0)
		return fail(err, errlen,
			    "--disk-limit %s: expected a positive number of bytes "
			    "(K, M, G suffixes)",
			    args[0]);
	rc->disk_limit = b;
	rc->quota = true;
	return 0;
}

static int set_persist(struct run_config *rc, const struct moat_option *o, char *const *args,
		       char *err, size_t errlen)
{
	rc->persist = args[0];
	return 0;
}

static int set_chdir(struct run_config *rc, const struct moat_option *o, char *const *args,
		     char *err, size_t errlen)
{
	if (args[0][0] != '/')
		return fail(err, errlen, "--chdir %s: must be an absolute path inside the sandbox",
			    args[0]);
	rc->chdir = args[0];
	return 0;
}

/* One top-level name (or fnmatch pattern) of the host's /etc more: never
 * a path, never a secret's way around. */
static int set_etc(struct run_config *rc, const struct moat_option *o, char *const *args, char *err,
		   size_t errlen)
{
	const char *x = args[0];
	if (!*x || strchr(x, '/') || !strcmp(x, ".") || !strcmp(x, ".."))
		return fail(err, errlen,
			    "--etc %s: expected a name in /etc (postgresql-common, mysql*), "
			    "not a path",
			    x);
	if (rc->netc >= RUN_MAX_ETC)
		return fail(err, errlen, "--etc %s: at most 16", x);
	rc->etc[rc->netc++] = x;
	return 0;
}

/* 1-64 characters of [A-Za-z0-9.-]: what uname's nodename, /etc/hostname
 * and /etc/hosts can all carry unquoted. */
static bool valid_hostname(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-") == n;
}

static int set_hostname(struct run_config *rc, const struct moat_option *o, char *const *args,
			char *err, size_t errlen)
{
	if (!valid_hostname(args[0]))
		/* Not echoed: it may hold a newline, and the error is one line. */
		return fail(err, errlen,
			    "--hostname: not a valid host name "
			    "(give 1 to 64 characters of A-Z a-z 0-9 . -)");
	rc->hostname = args[0];
	return 0;
}

/* ---- the program ---- */

/* One VAR=VALUE at the end of envbuf, which the caller made sure has room
 * for it. */
__attribute__((format(printf, 2, 3))) static char *env_put(struct run_config *rc, const char *fmt,
							   ...)
{
	char *at = rc->envbuf + rc->envused;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(at, sizeof rc->envbuf - rc->envused, fmt, ap);
	va_end(ap);
	rc->envused += (size_t)n + 1;
	return at;
}

/* VAR=VALUE, or a new VALUE for a VAR already there (a default too). */
static int set_setenv(struct run_config *rc, const struct moat_option *o, char *const *args,
		      char *err, size_t errlen)
{
	const char *x = args[0], *y = args[1];
	if (!*x || strchr(x, '='))
		return fail(err, errlen, "--setenv: invalid variable name '%s'", x);
	if (rc->nenv == RUN_MAX_ENV)
		return fail(err, errlen, "too many --setenv");
	int slot = rc->nenv;
	size_t n = strlen(x);
	for (int k = 0; k < rc->nenv; k++)
		if (!strncmp(rc->env[k], x, n) && rc->env[k][n] == '=')
			slot = k;
	size_t len = n + 1 + strlen(y) + 1;
	if (len > RUN_ENV_LEN)
		return fail(err, errlen, "--setenv %s: value too long", x);
	if (len > sizeof rc->envbuf - rc->envused)
		return fail(err, errlen, "--setenv %s: the environment is over %zu bytes", x,
			    sizeof rc->envbuf);
	rc->env[slot] = env_put(rc, "%s=%s", x, y);
	if (slot == rc->nenv)
		rc->env[++rc->nenv] = NULL;
	return 0;
}

/* --uid and --gid: another id than the caller's only for root. */
static int set_id(struct run_config *rc, const struct moat_option *o, char *const *args, char *err,
		  size_t errlen)
{
	bool is_uid = !strcmp(o->name, "--uid");
	unsigned v;
	if (parse_id(args[0], &v) < 0)
		return fail(err, errlen, "%s: not a numeric id (%s)", args[0], o->name);
	if (!rc->root && v != (is_uid ? geteuid() : getegid()))
		return fail(err, errlen, "%s: only root can run the sandbox as another id (%s)",
			    args[0], o->name);
	*(is_uid ? &rc->uid : &rc->gid) = v;
	return 0;
}

/* ---- limits ---- */

static int set_time_limit(struct run_config *rc, const struct moat_option *o, char *const *args,
			  char *err, size_t errlen)
{
	return seconds_arg(o, args[0], false, &rc->lim.cpu_s, err, errlen);
}

static int set_wall_time_limit(struct run_config *rc, const struct moat_option *o,
			       char *const *args, char *err, size_t errlen)
{
	return seconds_arg(o, args[0], false, &rc->lim.wall_s, err, errlen);
}

static int set_kill_grace(struct run_config *rc, const struct moat_option *o, char *const *args,
			  char *err, size_t errlen)
{
	return seconds_arg(o, args[0], true, &rc->lim.grace_s, err, errlen);
}

static int set_memory_limit(struct run_config *rc, const struct moat_option *o, char *const *args,
			    char *err, size_t errlen)
{
	unsigned long long b = 0;
	if (strcmp(args[0], "none") && size_arg(o, args[0], &b, err, errlen) < 0)
		return -1;
	rc->lim.mem_bytes = b;
	rc->lim.mem_default = false;
	return 0;
}

static int set_pids_limit(struct run_config *rc, const struct moat_option *o, char *const *args,
			  char *err, size_t errlen)
{
	unsigned v = 0;
	if (strcmp(args[0], "none") && count_arg(o, args[0], &v, err, errlen) < 0)
		return -1;
	rc->lim.pids = v;
	return 0;
}

static int set_file_size_limit(struct run_config *rc, const struct moat_option *o,
			       char *const *args, char *err, size_t errlen)
{
	unsigned long long b;
	if (size_arg(o, args[0], &b, err, errlen) < 0)
		return -1;
	rc->lim.fsize_bytes = b;
	return 0;
}

static int set_open_files_limit(struct run_config *rc, const struct moat_option *o,
				char *const *args, char *err, size_t errlen)
{
	return count_arg(o, args[0], &rc->lim.nofile, err, errlen);
}

static int set_output_limit(struct run_config *rc, const struct moat_option *o, char *const *args,
			    char *err, size_t errlen)
{
	unsigned long long b;
	if (size_arg(o, args[0], &b, err, errlen) < 0)
		return -1;
	rc->lim.output_bytes = b;
	return 0;
}

static int set_cgroup(struct run_config *rc, const struct moat_option *o, char *const *args,
		      char *err, size_t errlen)
{
	if (!strcmp(args[0], "auto"))
		rc->cg_use = CG_AUTO;
	else if (!strcmp(args[0], "off"))
		rc->cg_use = CG_OFF;
	else if (!strcmp(args[0], "required"))
		rc->cg_use = CG_REQUIRED;
	else
		return fail(err, errlen, "--cgroup %s: expected auto, off or required", args[0]);
	return 0;
}

/* ---- outputs ---- */

static int set_report(struct run_config *rc, const struct moat_option *o, char *const *args,
		      char *err, size_t errlen)
{
	rc->report = args[0];
	return 0;
}

static int set_lifeline(struct run_config *rc, const struct moat_option *o, char *const *args,
			char *err, size_t errlen)
{
	char *end;
	errno = 0;
	long fd = strtol(args[0], &end, 10);
	if (errno || *end || end == args[0] || fd < 3 || fd > INT_MAX) {
		snprintf(err, errlen, "--lifeline %s: expected an fd number of 3 or more", args[0]);
		return -1;
	}
	struct stat st;
	int fl = fcntl((int)fd, F_GETFL);
	if (fl < 0 || fstat((int)fd, &st) < 0 || !S_ISFIFO(st.st_mode) ||
	    (fl & O_ACCMODE) != O_RDONLY) {
		snprintf(err, errlen,
			 "--lifeline %s: not the read end of a pipe open in moat's caller",
			 args[0]);
		return -1;
	}
	rc->lifeline = (int)fd;
	return 0;
}

static int set_json(struct run_config *rc, const struct moat_option *o, char *const *args,
		    char *err, size_t errlen)
{
	rc->json = true;
	return 0;
}

/* ---- the network ---- */

static int set_allow_net(struct run_config *rc, const struct moat_option *o, char *const *args,
			 char *err, size_t errlen)
{
	return net_policy_add(&rc->net, args[0], err, errlen);
}

static int set_net_policy(struct run_config *rc, const struct moat_option *o, char *const *args,
			  char *err, size_t errlen)
{
	return net_policy_load(&rc->net, args[0], err, errlen);
}

/* ---- the audit log ---- */

static int set_audit_log(struct run_config *rc, const struct moat_option *o, char *const *args,
			 char *err, size_t errlen)
{
	rc->audit_log = args[0];
	return 0;
}

static int set_audit_level(struct run_config *rc, const struct moat_option *o, char *const *args,
			   char *err, size_t errlen)
{
	if (!strcmp(args[0], "denials"))
		rc->audit_level = AUDIT_DENIALS;
	else if (!strcmp(args[0], "supervised"))
		rc->audit_level = AUDIT_SUPERVISED;
	else
		return fail(err, errlen, "--audit-level %s: expected denials or supervised",
			    args[0]);
	return 0;
}

static int set_audit_max(struct run_config *rc, const struct moat_option *o, char *const *args,
			 char *err, size_t errlen)
{
	const char *x = args[0];
	unsigned long long b = 0;
	if (strcmp(x, "none") && (parse_size(x, &b) < 0 || b == 0))
		return fail(err, errlen,
			    "--audit-max %s: expected a positive number of bytes "
			    "(K, M, G suffixes) or none",
			    x);
	rc->audit_caps.max_bytes = b;
	return 0;
}

static int set_audit_rate(struct run_config *rc, const struct moat_option *o, char *const *args,
			  char *err, size_t errlen)
{
	const char *x = args[0];
	char *end;
	errno = 0;
	double r = strcmp(x, "none") ? strtod(x, &end) : 0;
	if (strcmp(x, "none") && (errno || *end || end == x || !(r > 0) || r > 1e9))
		return fail(err, errlen,
			    "--audit-rate %s: expected records a second (a positive "
			    "number) or none",
			    x);
	rc->audit_caps.rate = r;
	rc->audit_caps.burst = r * AUDIT_BURST_PER_RATE;
	return 0;
}

/* ---- the table ---- */

/* clang-format off */
const struct moat_option moat_options[] = {
	{ .name = "--ro-bind", .nargs = 2, .metavar = { "SRC", "DST" }, .set = set_ro_bind,
	  .help = "show host directory SRC at DST, read-only" },
	{ .name = "--bind", .nargs = 2, .metavar = { "SRC", "DST" }, .set = set_bind,
	  .help = "show host directory SRC at DST, writable" },
	{ .name = "--overlay", .nargs = 2, .metavar = { "SRC", "DST" }, .set = set_overlay,
	  .help = "show host directory SRC at DST under a private writable\n"
		  "layer: changes stay in the sandbox, SRC is never written" },
	{ .name = "--tmpfs", .nargs = 1, .metavar = { "DST[:SIZE]" }, .set = set_tmpfs,
	  .help = "a private empty writable directory at DST (SIZE: its quota)" },
	{ .name = "--disk-limit", .nargs = 1, .metavar = { "SIZE" }, .set = set_disk_limit,
	  .help = "all writable layers together (/tmp, /workspace, /dev/shm,\n"
		  "--tmpfs, the overlays' layers) hold at most SIZE bytes;\n"
		  "past it writes fail with ENOSPC (SIZE takes K, M, G)" },
	{ .name = "--persist", .nargs = 1, .metavar = { "DIR" }, .set = set_persist,
	  .help = "keep the writable layers of /usr, /etc and --overlay\n"
		  "mounts in DIR, so a later run continues from them" },
	{ .name = "--chdir", .nargs = 1, .metavar = { "DIR" }, .set = set_chdir,
	  .help = "start in DIR (default /workspace)" },
	{ .name = "--etc", .nargs = 1, .metavar = { "NAME" }, .set = set_etc,
	  .help = "show the host's /etc/NAME too (the default /etc shows\n"
		  "only what programs need; repeatable, a pattern allowed)" },
	{ .name = "--setenv", .nargs = 2, .metavar = { "VAR", "VALUE" }, .set = set_setenv,
	  .help = "add VAR=VALUE to the sandbox's environment" },
	{ .name = "--uid", .nargs = 1, .metavar = { "N" }, .set = set_id,
	  .help = "the sandbox's ids (default 65534 when run as root)" },
	{ .name = "--gid", .nargs = 1, .metavar = { "N" }, .set = set_id, .flags = OPT_JOINED,
	  .help = "the sandbox's group id (default 65534 when run as root)" },
	{ .name = "--hostname", .nargs = 1, .metavar = { "NAME" }, .set = set_hostname,
	  .help = "the sandbox's host name (default moat)" },
	{ .name = "--time-limit", .nargs = 1, .metavar = { "SEC" }, .set = set_time_limit,
	  .help = "CPU time of all sandbox processes together (TO)" },
	{ .name = "--wall-time-limit", .nargs = 1, .metavar = { "SEC" }, .set = set_wall_time_limit,
	  .help = "wall time from the first exec (TW)" },
	{ .name = "--memory-limit", .nargs = 1, .metavar = { "SIZE" }, .set = set_memory_limit,
	  .help = "memory of all processes together (ML; K, M, G; default\n"
		  "half the RAM, held by a cgroup only; none: no limit)" },
	{ .name = "--pids-limit", .nargs = 1, .metavar = { "N" }, .set = set_pids_limit,
	  .help = "tasks (processes and threads) alive at once (PL;\n"
		  "default 4096; none: no limit)" },
	{ .name = "--file-size-limit", .nargs = 1, .metavar = { "SIZE" }, .set = set_file_size_limit,
	  .gap = 3, .help = "per process (rlimits)" },
	{ .name = "--open-files-limit", .nargs = 1, .metavar = { "N" }, .set = set_open_files_limit,
	  .flags = OPT_JOINED, .help = "open files per process (RLIMIT_NOFILE)" },
	{ .name = "--kill-grace", .nargs = 1, .metavar = { "SEC" }, .set = set_kill_grace,
	  .help = "SIGTERM, then SIGKILL after SEC (default 0.5)" },
	{ .name = "--cgroup", .nargs = 1, .metavar = { "MODE" }, .set = set_cgroup,
	  .help = "auto (default): the kernel enforces memory and tasks in\n"
		  "cgroups of the sandbox's own where moat may make them;\n"
		  "off: moat's own accounting only; required: fail without\n"
		  "them" },
	{ .name = "--report", .nargs = 1, .metavar = { "FILE" }, .set = set_report,
	  .help = "write the run report (JSON) to FILE; - for stderr" },
	{ .name = "--lifeline", .nargs = 1, .metavar = { "FD" }, .set = set_lifeline,
	  .help = "FD is the read end of a pipe: when every writer has\n"
		  "closed it (its parent died), the sandbox ends as at a\n"
		  "second signal" },
	{ .name = "--output-limit", .nargs = 1, .metavar = { "SIZE" }, .set = set_output_limit,
	  .help = "stdout and stderr together; the rest is cut (OL)" },
	{ .name = "--json", .set = set_json,
	  .help = "print stdout, stderr (each capped at 1 MiB) and the report\n"
		  "as one JSON object on stdout" },
	{ .name = "--allow-net", .nargs = 1, .metavar = { "RULE" }, .set = set_allow_net,
	  .help = "let the sandbox reach RULE: HOST[:PORT], ADDR[/LEN][:PORT]\n"
		  "or [ADDR6[/LEN]][:PORT]; PORT may be N, N-M or *; host\n"
		  "names are resolved once, at start (repeatable)" },
	{ .name = "--net-policy", .nargs = 1, .metavar = { "FILE" }, .set = set_net_policy,
	  .help = "the rules of FILE, one per line (# comments)" },
	{ .name = "--audit-log", .nargs = 1, .metavar = { "FILE" }, .set = set_audit_log,
	  .help = "append one JSON line per denial to FILE" },
	{ .name = "--audit-level", .nargs = 1, .metavar = { "L" }, .set = set_audit_level,
	  .help = "denials (default) or supervised (every supervised call)" },
	{ .name = "--audit-max", .nargs = 1, .metavar = { "SIZE" }, .set = set_audit_max,
	  .help = "the run writes at most SIZE of records (default 64M; none)" },
	{ .name = "--audit-rate", .nargs = 1, .metavar = { "N" }, .set = set_audit_rate,
	  .help = "records a second after a burst of 10 s of them (default\n"
		  "100; none); what is dropped is counted in the log and report" },
	{ .name = NULL },
};
/* clang-format on */

const struct moat_option *option_find(const char *name)
{
	for (const struct moat_option *o = moat_options; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

static int missing_args(const struct moat_option *o, char *err, size_t errlen)
{
	return fail(err, errlen, "%s needs %s", o->name,
		    o->nargs == 2 ? "two arguments" : "an argument");
}

int option_apply(struct run_config *rc, const struct moat_option *o, char *const *args, char *err,
		 size_t errlen)
{
	for (unsigned k = 0; k < o->nargs; k++)
		if (!args || !args[k])
			return missing_args(o, err, errlen);
	return o->set(rc, o, args, err, errlen);
}

int options_parse_argv(struct run_config *rc, int argc, char **argv, char *err, size_t errlen)
{
	int i = 0;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		const struct moat_option *o = option_find(a);
		if (!o)
			return fail(err, errlen, "unknown option %s (see moat run --help)", a);
		if (i + (int)o->nargs >= argc)
			return missing_args(o, err, errlen);
		if (option_apply(rc, o, argv + i + 1, err, errlen) < 0)
			return -1;
		i += (int)o->nargs;
	}
	if (i >= argc)
		return fail(err, errlen, "no command given (%s)", USAGE);
	rc->argv = argv + i;
	return 0;
}

/* ---- --help ---- */

/* "--bind SRC DST" */
static int synopsis(const struct moat_option *o, char *buf, size_t len)
{
	return snprintf(buf, len, "%s%s%s%s%s", o->name, o->nargs > 0 ? " " : "",
			o->nargs > 0 ? o->metavar[0] : "", o->nargs > 1 ? " " : "",
			o->nargs > 1 ? o->metavar[1] : "");
}

/* One line of --help (two entries on it when the next is OPT_JOINED):
 * the synopsis, then the help from column HELP_COL, its continuation
 * lines indented to it. */
static void usage_entry(FILE *f, const struct moat_option *o)
{
	char syn[256];
	int n = synopsis(o, syn, sizeof syn);
	if (o[1].name && (o[1].flags & OPT_JOINED)) {
		n += snprintf(syn + n, sizeof syn - (size_t)n, ", ");
		n += synopsis(&o[1], syn + n, sizeof syn - (size_t)n);
	}
	int pad = n < HELP_COL - 2 ? HELP_COL - 2 - n : o->gap ? (int)o->gap : 2;
	fprintf(f, "  %s%*s", syn, pad, "");
	for (const char *h = o->help; *h;) {
		size_t len = strcspn(h, "\n");
		fprintf(f, "%.*s\n", (int)len, h);
		h += len;
		if (*h == '\n' && *++h)
			fprintf(f, "%*s", HELP_COL, "");
	}
}

void options_usage(FILE *f)
{
	fprintf(f, "%s\n\n", USAGE);
	for (const struct moat_option *o = moat_options; o->name; o++)
		if (!(o->flags & OPT_JOINED))
			usage_entry(f, o);
	fputs("  --version, --help\n", f);
}

/* ---- the plan ---- */

void run_config_init(struct run_config *rc)
{
	memset(rc, 0, sizeof *rc);
	run_config_defaults(rc);
}

void run_config_defaults(struct run_config *rc)
{
	rc->chdir = "/workspace";
	rc->hostname = "moat";
	rc->lifeline = -1;
	rc->root = geteuid() == 0;
	rc->uid = rc->root ? 65534 : geteuid();
	rc->gid = rc->root ? 65534 : getegid();
	/* The defaults keep the host alive whatever runs: a fork bomb stops
	 * at 4096 tasks, a runaway allocation at half the RAM. */
	rc->lim = (struct limits){ .grace_s = 0.5, .pids = 4096, .mem_default = true };
	rc->cg_use = CG_AUTO;
	rc->audit_level = AUDIT_DENIALS;
	/* A denial loop writes ~30 MiB/s of records: capped, and rate-limited
	 * with what was dropped said (docs/audit.md "Size and rate"). */
	rc->audit_caps = (struct audit_caps){ AUDIT_MAX_BYTES_DEFAULT, AUDIT_RATE_DEFAULT,
					      AUDIT_RATE_DEFAULT * AUDIT_BURST_PER_RATE };
	const char *lang = getenv("LANG"), *term = getenv("TERM");
	/* LANG and TERM are the caller's, cut to one variable's room */
	const int room = RUN_ENV_LEN - (int)sizeof "LANG=";
	rc->envused = 0;
	rc->env[0] = env_put(rc,
			     "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	rc->env[1] = env_put(rc, "HOME=/workspace");
	rc->env[2] = env_put(rc, "LANG=%.*s", room, lang && *lang ? lang : "C.UTF-8");
	rc->env[3] = env_put(rc, "TERM=%.*s", room, term && *term ? term : "dumb");
	rc->nenv = 4;
	rc->env[rc->nenv] = NULL;
}

int run_config_check(const struct run_config *rc, char *err, size_t errlen)
{
	if (rc->disk_limit && rc->persist)
		return fail(err, errlen,
			    "--disk-limit and --persist together (a persisted layer lives "
			    "on the host's disk, outside the limit; drop one)");
	if (rc->quota && !rc->root)
		return fail(err, errlen,
			    "--disk-limit and --tmpfs DST:SIZE need root (they are tmpfs "
			    "mounts in a private mount namespace; run moat as root or drop them)");
	return 0;
}
