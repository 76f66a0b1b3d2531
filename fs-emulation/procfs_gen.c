/* The generators of the synthetic /proc (procfs.h): the contents of its
 * files, made for the sandbox from the host's and from moat's own tables
 * (the walk and the serving are proc.c's).  Nothing written here names
 * the host: its host name, moat's pid, the host paths of mounts and the
 * scratch directory stay out (rule 6).
 *
 * The sandbox's machine boots when moat starts: uptime, btime and the
 * processes' start times count from there, and the CPU counters of
 * /proc/stat from the first look at them (see docs/filesystem.md). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/machine.h"
#include "core/hurry.h"
#include "core/creds.h"
#include "core/task.h"
#include "fs-emulation/etc.h"
#include "fs-emulation/procfs.h"
#include "fs-emulation/vfs.h"

/* ---- host facts ---- */

/* The whole host file, NUL-terminated, malloc'd (*len its length), or
 * NULL with errno set. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, off = 0;
	char *buf = malloc(cap);
	ssize_t n = 0;
	while (buf) {
		if (off + 1 >= cap) {
			char *nb = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
			if (!nb) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + off, cap - 1 - off);
		if (n <= 0)
			break;
		off += (size_t)n;
		/* The smaps of a process of 65,000 mappings takes the kernel
		 * most of a second to write: when the watchdog says a limit
		 * or a signal is due, the file is given up (EINTR). */
		if (hurry_now()) {
			free(buf);
			buf = NULL;
			errno = EINTR;
			break;
		}
	}
	int e = errno;
	close(fd);
	if (buf && n < 0) {
		free(buf);
		buf = NULL;
	}
	if (!buf) {
		errno = e;
		return NULL;
	}
	buf[off] = '\0';
	*len = off;
	return buf;
}

/* The first line of a small host file (a sysctl), without its newline. */
static void host_value(const char *path, char *out, size_t len, const char *fallback)
{
	size_t n;
	char *s = slurp(path, &n);
	snprintf(out, len, "%s", s ? s : fallback);
	out[strcspn(out, "\n")] = '\0';
	free(s);
}

static long clk_tck(void)
{
	static long hz;
	if (!hz)
		hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	return hz;
}

/* The fields after the command of a /proc/PID/stat line ("S 1 ..."), or
 * NULL: the command itself may hold spaces and parentheses. */
static char *stat_fields(char *line)
{
	char *paren = strrchr(line, ')');
	return paren && paren[1] == ' ' ? paren + 2 : NULL;
}

/* The sandbox's boot: moat's own start, in host clock ticks since the
 * host's boot (field 22 of its stat).  Fixed for the run. */
static unsigned long long boot_ticks(void)
{
	static unsigned long long ticks;
	static bool known;
	if (known)
		return ticks;
	size_t n;
	char *s = slurp("/proc/self/stat", &n);
	char *f = s ? stat_fields(s) : NULL;
	/* Field 22 is the 20th after the command. */
	for (int i = 0; f && i < 19; i++) {
		f = strchr(f, ' ');
		f = f ? f + 1 : NULL;
	}
	if (f)
		ticks = strtoull(f, NULL, 10);
	free(s);
	known = true;
	return ticks;
}

static double timespec_s(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds since the sandbox's boot. */
static double sandbox_uptime(void)
{
	double up = timespec_s(CLOCK_BOOTTIME) - (double)boot_ticks() / (double)clk_tck();
	return up > 0 ? up : 0;
}

/* Wall-clock time of the sandbox's boot (/proc/stat btime). */
static long long sandbox_btime(void)
{
	double host_boot = timespec_s(CLOCK_REALTIME) - timespec_s(CLOCK_BOOTTIME);
	return (long long)(host_boot + (double)boot_ticks() / (double)clk_tck());
}

/* The host's CPU counters as /proc/stat has them: cpu lines (10 values
 * each), ctxt and processes.  A snapshot is taken at the first look, and
 * the sandbox is shown what happened since, plus the time before it
 * counted as idle, so that every counter starts near zero at the
 * sandbox's boot and only grows. */
#define MAX_CPUS 1024
struct cpu_counts {
	int ncpu;                                 /* cpu0..cpuN-1 */
	unsigned long long cpu[MAX_CPUS + 1][10]; /* [0]: the "cpu" total */
	unsigned long long ctxt, processes;
};

static int read_counts(struct cpu_counts *c)
{
	size_t n;
	char *s = slurp("/proc/stat", &n);
	if (!s)
		return -errno;
	memset(c, 0, sizeof *c);
	for (char *save, *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "cpu", 3) == 0) {
			int row = 0;
			char *p = l + 3;
			if (isdigit((unsigned char)*p)) {
				row = atoi(p) + 1;
				if (row > MAX_CPUS)
					continue;
				if (row > c->ncpu)
					c->ncpu = row;
			}
			p = strchr(p, ' ');
			for (int k = 0; p && k < 10; k++)
				c->cpu[row][k] = strtoull(p, &p, 10);
		} else if (strncmp(l, "ctxt ", 5) == 0) {
			c->ctxt = strtoull(l + 5, NULL, 10);
		} else if (strncmp(l, "processes ", 10) == 0) {
			c->processes = strtoull(l + 10, NULL, 10);
		}
	}
	free(s);
	return 0;
}

static struct cpu_counts snap_counts, now_counts;
static bool have_snap;
static double snap_uptime;

/* now_counts, less the snapshot (taken now if it is the first look). */
static int sandbox_counts(void)
{
	int r = read_counts(&now_counts);
	if (r < 0)
		return r;
	if (!have_snap) {
		snap_counts = now_counts;
		snap_uptime = sandbox_uptime();
		have_snap = true;
	}
	unsigned long long before = (unsigned long long)(snap_uptime * (double)clk_tck());
	for (int row = 0; row <= now_counts.ncpu; row++) {
		for (int k = 0; k < 10; k++) {
			unsigned long long a = now_counts.cpu[row][k], b = snap_counts.cpu[row][k];
			now_counts.cpu[row][k] = a > b ? a - b : 0;
		}
		/* idle is field 3 */
		now_counts.cpu[row][3] += row ? before
					      : before * (unsigned long long)now_counts.ncpu;
	}
	now_counts.ctxt -= now_counts.ctxt > snap_counts.ctxt ? snap_counts.ctxt : now_counts.ctxt;
	now_counts.processes -= now_counts.processes > snap_counts.processes ? snap_counts.processes
									     : now_counts.processes;
	return 0;
}

/* The sandbox's processes by state: how many run, how many wait on I/O,
 * and the highest pid, for /proc/stat and /proc/loadavg. */
struct census {
	int running, blocked;
	pid_t last;
};

static int count_one(struct proc *p, void *arg)
{
	struct census *c = arg;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", p->tgid);
	size_t n;
	char *s = slurp(path, &n);
	char *f = s ? stat_fields(s) : NULL;
	if (f && f[0] == 'R')
		c->running++;
	if (f && f[0] == 'D')
		c->blocked++;
	if (p->tgid > c->last)
		c->last = p->tgid;
	free(s);
	return 0;
}

static struct census sandbox_census(void)
{
	struct census c = { 0 };
	proc_foreach(count_one, &c);
	/* The reader waits in its notification (S to the kernel) but is
	 * running as far as it knows, as a reader is on Linux. */
	if (c.running == 0)
		c.running = 1;
	return c;
}

/* ---- top-level files ---- */

/* The memory the sandbox may use, in kB: the host's total until moat
 * knows a limit.  When `v->mem_limit` exists it caps this, and every
 * meminfo value is capped with it (below). */
static unsigned long long mem_cap_kb(const struct vfs *v, unsigned long long host_total_kb)
{
	(void)v;
	return host_total_kb;
}

static int gen_meminfo(const struct vfs *v, FILE *out)
{
	/* The lines programs read (free, top, ps %MEM, psutil, the JVM and
	 * Go runtimes); the kernel's internals (vmalloc, DMA zones, per-cgroup
	 * and per-node detail) stay out. */
	/* clang-format off */
	static const char *const keys[] = {
		"MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapCached",
		"Active", "Inactive", "Active(anon)", "Inactive(anon)", "Active(file)",
		"Inactive(file)", "Unevictable", "Mlocked", "SwapTotal", "SwapFree", "Dirty",
		"Writeback", "AnonPages", "Mapped", "Shmem", "KReclaimable", "Slab",
		"SReclaimable", "SUnreclaim", "KernelStack", "PageTables", "CommitLimit",
		"Committed_AS", "HugePages_Total", "HugePages_Free", "HugePages_Rsvd",
		"HugePages_Surp", "Hugepagesize", NULL,
	};
	/* clang-format on */
	size_t n;
	char *s = slurp("/proc/meminfo", &n);
	if (!s)
		return -errno;
	unsigned long long cap = 0;
	for (char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, "MemTotal:", 9) == 0)
			cap = mem_cap_kb(v, strtoull(l + 9, NULL, 10));
	for (const char *const *k = keys; *k; k++) {
		size_t kl = strlen(*k);
		for (char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			if (strncmp(l, *k, kl) != 0 || l[kl] != ':')
				continue;
			char *end;
			unsigned long long val = strtoull(l + kl + 1, &end, 10);
			bool kb = strncmp(end, " kB", 3) == 0;
			if (kb && val > cap && strncmp(*k, "Swap", 4) != 0)
				val = cap;
			char key[32];
			snprintf(key, sizeof key, "%s:", *k);
			fprintf(out, "%-16s%8llu%s\n", key, val, kb ? " kB" : "");
			break;
		}
	}
	free(s);
	return 0;
}

static int gen_stat(FILE *out)
{
	int r = sandbox_counts();
	if (r < 0)
		return r;
	for (int row = 0; row <= now_counts.ncpu; row++) {
		if (row)
			fprintf(out, "cpu%d", row - 1);
		else
			fprintf(out, "cpu ");
		for (int k = 0; k < 10; k++)
			fprintf(out, " %llu", now_counts.cpu[row][k]);
		fputc('\n', out);
	}
	struct census c = sandbox_census();
	fprintf(out,
		"intr 0\nctxt %llu\nbtime %lld\nprocesses %llu\nprocs_running %d\n"
		"procs_blocked %d\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
		now_counts.ctxt, sandbox_btime(), now_counts.processes, c.running, c.blocked);
	return 0;
}

int procfs_sysinfo(struct sysinfo *si)
{
	if (sysinfo(si) < 0)
		return -errno;
	/* The machine the sandbox sees, as /proc/uptime and /proc/loadavg
	 * show it: booted when moat started, running only its own tasks.
	 * Memory and load are the host's, as /proc/meminfo's are. */
	si->uptime = (long)sandbox_uptime();
	si->procs = (unsigned short)(task_count() > 0xffff ? 0xffff : task_count());
	return 0;
}

static int gen_uptime(FILE *out)
{
	int r = sandbox_counts();
	if (r < 0)
		return r;
	fprintf(out, "%.2f %.2f\n", sandbox_uptime(),
		(double)now_counts.cpu[0][3] / (double)clk_tck());
	return 0;
}

static int gen_loadavg(FILE *out)
{
	/* The load averages are the host's (they say how busy the machine
	 * the sandbox shares is); the counts and the last pid are the
	 * sandbox's own, never the host's process table. */
	char host[128];
	host_value("/proc/loadavg", host, sizeof host, "0.00 0.00 0.00");
	double l1 = 0, l5 = 0, l15 = 0;
	sscanf(host, "%lf %lf %lf", &l1, &l5, &l15);
	struct census c = sandbox_census();
	fprintf(out, "%.2f %.2f %.2f %d/%u %d\n", l1, l5, l15, c.running, task_count(),
		(int)c.last);
	return 0;
}

static void uuid_text(char *out, size_t len)
{
	unsigned char b[16] = { 0 };
	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
		memset(b, 0, sizeof b);               /* never fails for 16 bytes once seeded */
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(out, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

/* /proc/sys values shown as the host's kernel has them: its constants and
 * its limits, which hold for the sandbox's processes too (read-only: a
 * write is refused like any write to /proc).  The IPC ones are the
 * defaults of a new IPC namespace unless the host changed its own. */
static bool sys_passthrough(const char *sub, const char *name, FILE *out)
{
	static const char *const kernel[] = { "cap_last_cap", "ngroups_max", "overflowuid",
					      "overflowgid",  "tainted",     "threads-max",
					      "shmmax",       "shmall",      "shmmni",
					      "msgmax",       "msgmnb",      "msgmni",
					      "sem",          NULL };
	static const char *const fs[] = { "pipe-max-size",
					  "pipe-user-pages-soft",
					  "pipe-user-pages-hard",
					  "lease-break-time",
					  "nr_open",
					  "file-max",
					  NULL };
	static const char *const vm[] = { "max_map_count", "mmap_min_addr", NULL };
	const char *const *tab = strcmp(sub, "sys/kernel") == 0 ? kernel
				 : strcmp(sub, "sys/fs") == 0   ? fs
				 : strcmp(sub, "sys/vm") == 0   ? vm
								: NULL;
	for (; tab && *tab; tab++)
		if (strcmp(*tab, name) == 0) {
			char path[96], val[256];
			snprintf(path, sizeof path, "/proc/%s/%s", sub, name);
			host_value(path, val, sizeof val, "");
			if (!val[0])
				return false;
			fprintf(out, "%s\n", val);
			return true;
		}
	return false;
}

int procfs_gen_top(const struct vfs *v, const char *sub, const char *name, FILE *out)
{
	struct utsname u;
	if (uname(&u) < 0)
		return -errno;
	if (sub[0] == '\0') {
		if (strcmp(name, "cpuinfo") == 0 || strcmp(name, "config.gz") == 0) {
			/* The host's.  cpuinfo names the CPU model and count, no
			 * host resource, and glibc counts processors from it;
			 * config.gz is the running kernel's build configuration
			 * (what uname's release names), which test suites and
			 * build tools read to know what the kernel offers. */
			size_t n;
			char *s = slurp(name[0] == 'c' && name[1] == 'p' ? "/proc/cpuinfo"
									 : "/proc/config.gz",
					&n);
			if (!s)
				return -errno;
			fwrite(s, 1, n, out);
			free(s);
			return 0;
		}
		if (strcmp(name, "meminfo") == 0)
			return gen_meminfo(v, out);
		if (strcmp(name, "stat") == 0)
			return gen_stat(out);
		if (strcmp(name, "uptime") == 0)
			return gen_uptime(out);
		if (strcmp(name, "loadavg") == 0)
			return gen_loadavg(out);
		if (strcmp(name, "version") == 0) {
			/* The kernel's names as uname gives them; not the host's
			 * build banner, whose user@host is the kernel builder's. */
			fprintf(out, "Linux version %s (moat@moat) (unknown compiler) %s\n",
				u.release, u.version);
			return 0;
		}
		if (strcmp(name, "filesystems") == 0) {
			/* The types the sandbox's mount table shows. */
			fputs("nodev\trootfs\nnodev\ttmpfs\nnodev\tdevtmpfs\nnodev\tproc\n", out);
			return 0;
		}
		return -ENOENT;
	}
	char val[128];
	if (sys_passthrough(sub, name, out))
		return 0;
	if (strcmp(sub, "sys/kernel") == 0) {
		if (strcmp(name, "hostname") == 0)
			fprintf(out, "%s\n", machine_hostname(v->machine));
		else if (strcmp(name, "domainname") == 0)
			fputs("(none)\n", out);
		else if (strcmp(name, "osrelease") == 0)
			fprintf(out, "%s\n", u.release);
		else if (strcmp(name, "ostype") == 0)
			fprintf(out, "%s\n", u.sysname);
		else if (strcmp(name, "pid_max") == 0) {
			/* Sandbox pids are host pids: the host's bound holds. */
			host_value("/proc/sys/kernel/pid_max", val, sizeof val, "4194304");
			fprintf(out, "%s\n", val);
		} else
			return -ENOENT;
		return 0;
	}
	if (strcmp(sub, "sys/kernel/random") == 0) {
		static char boot_id[40]; /* one per run, like a boot's */
		if (strcmp(name, "uuid") == 0) {
			uuid_text(val, sizeof val);
			fprintf(out, "%s\n", val);
		} else if (strcmp(name, "boot_id") == 0) {
			if (!boot_id[0])
				uuid_text(boot_id, sizeof boot_id);
			fprintf(out, "%s\n", boot_id);
		} else
			return -ENOENT;
		return 0;
	}
	if (strcmp(sub, "sys/vm") == 0 && strcmp(name, "overcommit_memory") == 0) {
		/* The policy the kernel applies to the sandbox's allocations. */
		host_value("/proc/sys/vm/overcommit_memory", val, sizeof val, "0");
		fprintf(out, "%s\n", val);
		return 0;
	}
	return -ENOENT;
}

/* ---- per-process files ---- */

/* Replace host scratch paths with the virtual paths of their mounts. */
static size_t devirtualize(struct vfs *v, char *buf, size_t n, size_t cap)
{
	for (int i = 0; i < v->nmnt; i++) {
		const struct vfs_mount *m = &v->mnt[i];
		if (m->kind == MNT_BIND)
			continue;
		size_t hl = strlen(m->host), vl = m->vlen;
		char *s = buf;
		while ((s = memmem(s, n - (size_t)(s - buf), m->host, hl))) {
			if (n - hl + vl >= cap)
				break;
			memmove(s + vl, s + hl, n - (size_t)(s - buf) - hl);
			memcpy(s, m->vpath, vl);
			n = n - hl + vl;
			s += vl;
		}
	}
	return n;
}

/* A pid the sandbox may see, or 0: a parent outside the sandbox (moat
 * itself, for the first process and for orphans it reaped) has no pid
 * here. */
static pid_t inside_pid(pid_t pid)
{
	return pid > 0 && proc_find(pid) ? pid : 0;
}

/* /proc/PID/stat with the parent hidden, the start time counted from the
 * sandbox's boot, and a job-control stop shown as the program would see it
 * without moat ("T"; to the kernel it is a ptrace stop, "t"). */
/* The reader describing itself: the kernel shows it running (R), as it
 * is, reading; under moat it waits for moat's answer (S) meanwhile. */
static bool reads_itself(const struct task *caller, pid_t id)
{
	return caller && caller->tid == id;
}

static int gen_pid_stat(const struct task *caller, pid_t id, FILE *out)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", id);
	size_t n;
	char *s = slurp(path, &n);
	if (!s)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	char *f = stat_fields(s);
	if (!f) {
		free(s);
		return -EIO;
	}
	struct task *t = task_find(id);
	fwrite(s, 1, (size_t)(f - s), out);
	int field = 3;
	for (char *save, *tok = strtok_r(f, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save), field++) {
		if (field > 3)
			fputc(' ', out);
		if (field == 3 && tok[0] == 't' && t && t->group_stopped)
			fputc('T', out);
		else if (field == 3 && tok[0] == 'S' && reads_itself(caller, id))
			fputc('R', out);
		else if (field == 4)
			fprintf(out, "%d", (int)inside_pid(atoi(tok)));
		else if (field == 22) {
			unsigned long long st = strtoull(tok, NULL, 10), b = boot_ticks();
			fprintf(out, "%llu", st > b ? st - b : 0);
		} else
			fputs(tok, out);
	}
	fputc('\n', out);
	free(s);
	return 0;
}

/* /proc/PID/status: PPid as in stat, TracerPid 0 (moat traces every
 * sandbox process; nothing inside can trace another), the same stop. */
/* An Uid:, Gid: or Groups: line of /proc/PID/status with its ids as the
 * sandbox is shown them (creds_show_uid). */
static void status_ids_shown(const struct vfs *v, const char *l, size_t klen, FILE *out)
{
	bool groups = klen == 7; /* "Groups:\t0 1 \n"; "Uid:\t0\t0\t0\t0\n" */
	fprintf(out, "%.*s%s", (int)klen, l, groups ? "\t" : "");
	const char *p = l + klen;
	for (;;) {
		char *end;
		while (*p == '\t' || *p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			break;
		unsigned long id = strtoul(p, &end, 10);
		fprintf(out, groups ? "%u " : "\t%u",
			(unsigned)creds_show_uid(v->creds, (uid_t)id));
		p = end;
	}
	fputs("\n", out);
}

static int gen_pid_status(const struct vfs *v, const struct task *caller, pid_t id, FILE *out)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", id);
	size_t n;
	char *s = slurp(path, &n);
	if (!s)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	struct task *t = task_find(id);
	for (char *save, *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "PPid:", 5) == 0)
			fprintf(out, "PPid:\t%d\n", (int)inside_pid(atoi(l + 5)));
		else if (strncmp(l, "TracerPid:", 10) == 0)
			fputs("TracerPid:\t0\n", out);
		else if (strncmp(l, "State:\tt", 8) == 0 && t && t->group_stopped)
			fputs("State:\tT (stopped)\n", out);
		else if (strncmp(l, "State:\tS", 8) == 0 && reads_itself(caller, id))
			fputs("State:\tR (running)\n", out);
		else if (v->creds && v->creds->base &&
			 (strncmp(l, "Uid:", 4) == 0 || strncmp(l, "Gid:", 4) == 0))
			status_ids_shown(v, l, 4, out);
		else if (v->creds && v->creds->base && strncmp(l, "Groups:", 7) == 0)
			status_ids_shown(v, l, 7, out);
		else
			fprintf(out, "%s\n", l);
	}
	free(s);
	return 0;
}

/* maps and smaps: each mapping's file by its path in the view (never the
 * host source of a bind, the scratch directory or the skeleton). */
static int gen_pid_maps(struct vfs *v, pid_t id, const char *name, FILE *out)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", id, name);
	size_t n;
	creds_proc_begin();
	char *s = slurp(path, &n);
	creds_proc_end();
	if (!s)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	char *save;
	unsigned lines = 0;
	for (char *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		/* A million lines of smaps take a while: given up when the
		 * watchdog says an action is due, as slurp's reads are. */
		if (++lines % 4096 == 0 && hurry_now()) {
			free(s);
			return -EINTR;
		}
		/* A mapping's line: "start-end perms offset dev inode   path". */
		size_t hex = strspn(l, "0123456789abcdef");
		char *p = l;
		for (int k = 0; hex && l[hex] == '-' && k < 5 && p; k++) {
			p = strchr(p, ' ');
			p = p ? p + strspn(p, " ") : NULL;
		}
		if (!hex || l[hex] != '-' || !p || *p != '/') {
			fprintf(out, "%s\n", l);
			continue;
		}
		char shown[PATH_MAX];
		procfs_shown_path(v, p, shown, sizeof shown);
		fprintf(out, "%.*s%s\n", (int)(p - l), l, shown);
	}
	free(s);
	return 0;
}

static const char *fstype_of(enum mnt_kind k)
{
	switch (k) {
	case MNT_ROOT: return "rootfs";
	case MNT_TMPFS: return "tmpfs";
	case MNT_DEV: return "devtmpfs";
	case MNT_PROC: return "proc";
	case MNT_OVERLAY: return "overlay";
	default: return "none"; /* binds: as /proc/mounts names them */
	}
}

/* /proc/PID/mountinfo for the virtual mount table.  Every mount's root is
 * "/": the directory a bind shows is a host path, never named here. */
static int gen_mountinfo(struct vfs *v, FILE *out)
{
	for (int i = 0; i < v->nmnt; i++) {
		const struct vfs_mount *m = &v->mnt[i];
		int parent = -1;
		size_t best = 0;
		for (int j = 0; j < v->nmnt; j++) {
			const struct vfs_mount *q = &v->mnt[j];
			if (j == i || q->vlen >= m->vlen ||
			    strncmp(m->vpath, q->vpath, q->vlen) != 0)
				continue;
			if ((q->vlen == 1 || m->vpath[q->vlen] == '/') && q->vlen >= best) {
				best = q->vlen;
				parent = j;
			}
		}
		const char *type = fstype_of(m->kind);
		fprintf(out, "%d %d %u:%u / %s %s - %s %s %s\n", 100 + i, 100 + parent,
			major(m->dev), minor(m->dev), m->vpath, m->ro ? "ro" : "rw", type,
			m->kind == MNT_BIND ? "moat" : type, m->ro ? "ro" : "rw");
	}
	return 0;
}

/* The Uid: or Gid: line of /proc/PID/status: real, effective, saved, fs. */
static int status_ids(pid_t pid, const char *key, unsigned ids[4])
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	size_t n;
	char *s = slurp(path, &n);
	char *l = s ? strstr(s, key) : NULL;
	int got = l ? sscanf(l + strlen(key), "%u %u %u %u", &ids[0], &ids[1], &ids[2], &ids[3])
		    : 0;
	free(s);
	return got == 4 ? 0 : -ENOENT;
}

/* environ and auxv are the process's secrets: as on Linux, only a caller
 * with the same ids reads them (its fs ids against the target's real,
 * effective and saved ones).  Unknown ids deny. */
static int may_read_private(struct task *caller, pid_t target)
{
	if (!caller)
		return -EACCES;
	if (caller->proc && caller->proc->tgid == target)
		return 0;
	unsigned cu[4], cg[4], tu[4], tg[4];
	if (status_ids(caller->tid, "\nUid:", cu) < 0 ||
	    status_ids(caller->tid, "\nGid:", cg) < 0 || status_ids(target, "\nUid:", tu) < 0 ||
	    status_ids(target, "\nGid:", tg) < 0)
		return -EACCES;
	for (int k = 0; k < 3; k++)
		if (tu[k] != cu[3] || tg[k] != cg[3])
			return -EACCES;
	return 0;
}

int procfs_gen_net(struct vfs *v, pid_t pid, const char *name, FILE *out)
{
	/* The sandbox's own network namespace (v->proc_net): its sockets,
	 * interfaces and routes, no host's.  A pathname AF_UNIX socket shows
	 * the name moat bound it by (docs/filesystem.md). */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/net/%s", pid, name);
	size_t n;
	(void)v;
	creds_proc_begin();
	char *s = slurp(path, &n);
	creds_proc_end();
	if (!s)
		return errno == ESRCH ? -ENOENT : -errno;
	fwrite(s, 1, n, out);
	free(s);
	return 0;
}

int procfs_open_pagemap(struct task *t, const struct procfs_dir *d)
{
	int r = may_read_private(t, d->pid);
	if (r < 0)
		return r;
	/* moat's loop holds no CAP_SYS_ADMIN: the kernel zeroes the frame
	 * numbers for this file, as for any unprivileged opener. */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/pagemap", d->tid ? d->tid : d->pid);
	creds_proc_begin();
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int e = errno;
	creds_proc_end();
	return fd < 0 ? (e == ESRCH ? -ENOENT : -e) : fd;
}

int procfs_gen_pid(struct vfs *v, struct task *t, const struct procfs_dir *d, const char *name,
		   FILE *out)
{
	pid_t id = d->tid ? d->tid : d->pid;
	if (strcmp(name, "stat") == 0)
		return gen_pid_stat(t, id, out);
	if (strcmp(name, "status") == 0)
		return gen_pid_status(v, t, id, out);
	if (strcmp(name, "maps") == 0 || strcmp(name, "smaps") == 0)
		return gen_pid_maps(v, id, name, out);
	if (strcmp(name, "mountinfo") == 0)
		return gen_mountinfo(v, out);
	if (strcmp(name, "cgroup") == 0) {
		/* The root of its own cgroup v2 tree: no host hierarchy. */
		fputs("0::/\n", out);
		return 0;
	}
	if (strcmp(name, "mounts") == 0) {
		size_t cap = VFS_MAX_MOUNTS * (PATH_MAX + 64);
		char *buf = malloc(cap);
		int n = buf ? vfs_mounts_text(v, buf, cap) : -ENOMEM;
		if (n > 0)
			fwrite(buf, 1, (size_t)n, out);
		free(buf);
		return n < 0 ? n : 0;
	}
	if (strcmp(name, "environ") == 0 || strcmp(name, "auxv") == 0) {
		int r = may_read_private(t, d->pid);
		if (r < 0)
			return r;
	} else if (strcmp(name, "cmdline") != 0 && strcmp(name, "comm") != 0 &&
		   strcmp(name, "statm") != 0 && strcmp(name, "limits") != 0) {
		return -ENOENT;
	}
	/* What the kernel keeps of the process itself: its arguments,
	 * environment, name, sizes and limits. */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", id, name);
	size_t n;
	creds_proc_begin();
	char *s = slurp(path, &n);
	creds_proc_end();
	if (!s)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	size_t cap = n + 1;
	if (strcmp(name, "auxv") != 0)
		n = devirtualize(v, s, n, cap);
	fwrite(s, 1, n, out);
	free(s);
	return 0;
}

int procfs_gen_fdinfo(pid_t pid, bool own, const char *name, FILE *out)
{
	/* Position, flags and the kernel's own counters: no path. */
	char host[64];
	snprintf(host, sizeof host, "/proc/%d/fdinfo/%s", pid, name);
	size_t n;
	creds_proc_begin();
	if (own)
		creds_proc_own_begin();
	char *s = slurp(host, &n);
	if (own)
		creds_proc_own_end();
	creds_proc_end();
	if (!s)
		return -ENOENT;
	fwrite(s, 1, n, out);
	free(s);
	return 0;
}
