/* Limits of the whole sandbox (limits.h). */
#include "interposer/limits.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/task.h"
#include "interposer/sandbox.h"

/* How often the sandbox's processes are sampled for moat's own memory
 * accounting (the fallback). */
#define SAMPLE_NS (20u * 1000 * 1000)
/* How often the cgroups' counters are read: the kernel enforces the
 * limits meanwhile; this only stops the rest of the sandbox. */
#define CG_CHECK_NS (100u * 1000 * 1000)
/* The CPU time is looked at when the limit could first be reached, but
 * not more often than this. */
#define CPU_MIN_NS (5u * 1000 * 1000)

uint64_t limits_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool limits_watched(const struct sandbox *sb)
{
	const struct limits *l = &sb->lim;
	/* A refused fork is seen only in the cgroup's pids.events. */
	return l->cpu_s > 0 || l->wall_s > 0 || l->mem_bytes > 0 ||
	       (l->pids && sb->cg.ver[CGP_PIDS]);
}

/* Does moat sample /proc for memory (no memory cgroup)? */
static bool memory_polled(const struct sandbox *sb)
{
	return sb->lim.mem_bytes && !sb->cg.ver[CGP_MEMORY];
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int limits_timeout_ms(const struct sandbox *sb)
{
	const struct run_result *r = &sb->res;
	const struct limits *l = &sb->lim;
	if (r->stopping)
		return 10; /* SIGKILL again until nothing is left */
	uint64_t next = UINT64_MAX;
	if (l->wall_s > 0)
		next = r->t0_ns + (uint64_t)(l->wall_s * 1e9);
	if (l->cpu_s > 0 || memory_polled(sb))
		next = min_u64(next, r->next_sample_ns);
	if ((l->mem_bytes && sb->cg.ver[CGP_MEMORY]) || (l->pids && sb->cg.ver[CGP_PIDS]))
		next = min_u64(next, r->last_cg_ns + CG_CHECK_NS);
	if (next == UINT64_MAX)
		return -1;
	uint64_t now = limits_now();
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

void limits_child_plan(const struct limits *l, struct limits_rl rl[LIMITS_CHILD_MAX])
{
	for (int i = 0; i < LIMITS_CHILD_MAX; i++)
		rl[i] = (struct limits_rl){ .res = RLIM_NLIMITS };
	if (l->cpu_s > 0) {
		/* One process alone can never pass the sandbox's limit: the
		 * kernel stops it a second after, should moat's sampling miss. */
		rlim_t s = (rlim_t)ceil(l->cpu_s) + 1;
		rl[0] = (struct limits_rl){ RLIMIT_CPU, false, s, s + 1 };
	}
	if (l->fsize_bytes)
		rl[1] = (struct limits_rl){ RLIMIT_FSIZE, false, l->fsize_bytes, l->fsize_bytes };
	if (l->nofile)
		rl[2] = (struct limits_rl){ RLIMIT_NOFILE, false, l->nofile, l->nofile };
	else if (l->nofile_caller) /* moat raised its own soft limit: the caller's */
		rl[2] = (struct limits_rl){ RLIMIT_NOFILE, true, l->nofile_caller, 0 };
}

static int signal_one(struct proc *p, void *arg)
{
	syscall(SYS_pidfd_send_signal, p->pidfd, *(int *)arg, NULL, 0);
	return 0;
}

static void signal_all(struct sandbox *sb, int sig)
{
	if (sig == SIGKILL)
		cgroup_kill(&sb->cg);
	proc_foreach(signal_one, &sig);
	if (sig == SIGKILL)
		task_kill_unlinked();
}

static int count_one(struct proc *p, void *arg)
{
	(void)p;
	(*(unsigned *)arg)++;
	return 0;
}

void limits_proc_born(struct sandbox *sb, bool thread)
{
	struct run_result *r = &sb->res;
	if (!thread)
		r->procs_started++;
	if (r->stopping && !r->kill_at_ns) {
		signal_all(sb, SIGKILL); /* born while the sandbox is being killed */
		return;
	}
	unsigned n = 0;
	proc_foreach(count_one, &n);
	if (n > r->procs_max)
		r->procs_max = n;
	/* Tasks, as the kernel's pids controller counts them; with the
	 * cgroup in force the kernel refuses the fork before it is seen. */
	unsigned tasks = task_count();
	if (sb->lim.pids && tasks > sb->lim.pids) {
		char msg[128];
		snprintf(msg, sizeof msg, "more than %u tasks (processes and threads) at once",
			 sb->lim.pids);
		/* A fork bomb gets no grace: every moment makes more. */
		limits_stop(sb, "PL", "processes", msg, true);
	}
}

void limits_stop(struct sandbox *sb, const char *status, const char *limit, const char *msg,
		 bool now)
{
	struct run_result *r = &sb->res;
	if (!r->stopping) {
		snprintf(r->status, sizeof r->status, "%s", status);
		r->limit = limit;
		snprintf(r->message, sizeof r->message, "%s", msg);
		r->killed = true;
		r->stopping = true;
		r->kill_at_ns = limits_now() + (uint64_t)(sb->lim.grace_s * 1e9);
	}
	if (now || sb->lim.grace_s <= 0) {
		r->kill_at_ns = 0;
		signal_all(sb, SIGKILL);
	} else {
		signal_all(sb, SIGTERM);
	}
}

/* The kernel enforced the memory limit: it killed a process at it. */
static const char *oom_message(struct sandbox *sb)
{
	static char msg[220];
	unsigned long long lim = (unsigned long long)sb->lim.mem_bytes;
	int own = cgroup_memory_limit_hit(&sb->cg, sb->lim.mem_bytes);
	if (own > 0)
		snprintf(msg, sizeof msg,
			 "memory limit of %llu bytes exceeded (the kernel's OOM killer stopped a "
			 "process at it)",
			 lim);
	else if (own == 0) /* a process of ours was the victim of another limit */
		snprintf(msg, sizeof msg,
			 "out of memory below the sandbox's limit of %llu bytes: the host or a "
			 "cgroup moat runs in ran out (the kernel's OOM killer stopped a process)",
			 lim);
	else
		snprintf(
			msg, sizeof msg,
			"out of memory at the sandbox's limit of %llu bytes or an enclosing one (the "
			"kernel's OOM killer stopped a process)",
			lim);
	return msg;
}

/* The kernel enforced the task limit: it refused a fork. */
static const char *refused_message(struct sandbox *sb)
{
	static char msg[128];
	snprintf(msg, sizeof msg,
		 "more than %u tasks (processes and threads) at once: a fork was refused",
		 sb->lim.pids);
	return msg;
}

struct sample {
	double cpu_s;
	uint64_t rss_kb;
};

/* CPU (its own and its reaped children's) and resident memory of one
 * process, from /proc/PID/stat. */
static int sample_one(struct proc *p, void *arg)
{
	struct sample *s = arg;
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", p->tgid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *rp = strrchr(buf, ')'); /* comm may hold anything */
	unsigned long long ut, st, cut, cst, rss;
	if (!rp || sscanf(rp + 2,
			  "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu "
			  "%*d %*d %*d %*d %*u %*u %llu",
			  &ut, &st, &cut, &cst, &rss) != 5)
		return 0;
	static long tick, page_kb;
	if (!tick) {
		tick = sysconf(_SC_CLK_TCK);
		page_kb = sysconf(_SC_PAGESIZE) / 1024;
	}
	s->cpu_s += (double)(ut + st + cut + cst) / (double)tick;
	s->rss_kb += rss * (unsigned long long)page_kb;
	return 0;
}

/* A process's proportional set size (kB), from /proc/PID/smaps_rollup;
 * its resident size where that cannot be read (a process that made itself
 * non-dumpable hides it from a moat without root, not its stat). */
static int pss_one(struct proc *p, void *arg)
{
	char path[64], line[256];
	unsigned long long kb = 0;
	bool found = false;
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", p->tgid);
	FILE *f = fopen(path, "re");
	if (f) {
		while (!found && fgets(line, sizeof line, f))
			found = sscanf(line, "Pss: %llu kB", &kb) == 1;
		fclose(f);
	}
	if (!found) {
		struct sample s = { 0, 0 };
		sample_one(p, &s);
		kb = s.rss_kb;
	}
	*(uint64_t *)arg += kb;
	return 0;
}

/* CPU of the processes moat itself reaped (the first one, orphans), with
 * what they reaped. */
static double reaped_cpu(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

void limits_tick(struct sandbox *sb)
{
	struct run_result *r = &sb->res;
	const struct limits *l = &sb->lim;
	uint64_t now = limits_now();
	if (r->stopping) {
		/* Past the grace: SIGKILL, again at every tick, until nothing of
		 * the sandbox is left (a child born meanwhile included). */
		if (!r->kill_at_ns || now >= r->kill_at_ns) {
			r->kill_at_ns = 0;
			signal_all(sb, SIGKILL);
		}
		return;
	}
	if (l->wall_s > 0 && now >= r->t0_ns + (uint64_t)(l->wall_s * 1e9)) {
		char msg[128];
		snprintf(msg, sizeof msg, "wall time limit of %g s exceeded", l->wall_s);
		limits_stop(sb, "TW", "wall-time", msg, false);
		return;
	}
	struct cgroups *cg = &sb->cg;
	bool cg_due = now >= r->last_cg_ns + CG_CHECK_NS;
	if (cg_due)
		r->last_cg_ns = now;
	if (cg_due && l->pids && cgroup_pids_refused(cg)) {
		limits_stop(sb, "PL", "processes", refused_message(sb), true);
		return;
	}
	if (cg_due && l->mem_bytes && cgroup_oom_kills(cg)) {
		limits_stop(sb, "ML", "memory", oom_message(sb), true);
		return;
	}
	if (!(l->cpu_s > 0 || memory_polled(sb)) || now < r->next_sample_ns)
		return;
	/* The cgroup's CPU counts every process that ran in it, exited
	 * ones whose parent never waited for them included; /proc is read
	 * only for what the cgroups do not give. */
	double cg_cpu = cgroup_cpu(cg, NULL, NULL);
	struct sample s = { 0, 0 };
	if (cg_cpu < 0 || memory_polled(sb)) {
		proc_foreach(sample_one, &s);
		r->rss_kb = s.rss_kb;
		if (s.rss_kb > r->max_rss_kb)
			r->max_rss_kb = s.rss_kb;
	}
	r->cpu_s = cg_cpu >= 0 ? cg_cpu : s.cpu_s + reaped_cpu();
	/* Next: in 20 ms for memory; for CPU time when the limit could first
	 * be reached, every CPU of the host busy (it takes the sandbox at
	 * least that long), so a long limit costs a few looks. */
	uint64_t next = memory_polled(sb) ? SAMPLE_NS : UINT64_MAX;
	if (l->cpu_s > r->cpu_s) {
		static long ncpu;
		if (!ncpu)
			ncpu = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN)
								 : 1;
		uint64_t d = (uint64_t)((l->cpu_s - r->cpu_s) / (double)ncpu * 1e9);
		next = min_u64(next, d > CPU_MIN_NS ? d : CPU_MIN_NS);
	}
	r->next_sample_ns = now + (next == UINT64_MAX ? SAMPLE_NS : next);
	if (l->cpu_s > 0 && r->cpu_s >= l->cpu_s) {
		char msg[128];
		snprintf(msg, sizeof msg, "CPU time limit of %g s exceeded", l->cpu_s);
		limits_stop(sb, "TO", "time", msg, false);
	} else if (memory_polled(sb) && s.rss_kb * 1024 > l->mem_bytes &&
		   now >= r->pss_earliest_ns &&
		   (s.rss_kb > r->pss_rss_kb + r->pss_rss_kb / 16 || now >= r->pss_next_ns)) {
		/* Resident pages count once per process that maps them: forked
		 * workers sharing a parent's data would pass the limit on
		 * paper.  The verdict is on proportional shares (PSS), which
		 * the kernel sums by walking every mapping: read only past the
		 * limit, and again only when the resident sum has grown by a
		 * sixteenth (memory in use grows with it) or after 5 s, and
		 * never sooner than 20 times what the last look took (the loop
		 * serves no call meanwhile: at most 5 % of its time). */
		uint64_t pss = 0;
		proc_foreach(pss_one, &pss);
		uint64_t took = limits_now() - now;
		r->pss_earliest_ns = now + took + 20 * took;
		if (pss * 1024 > l->mem_bytes) {
			char msg[160];
			snprintf(msg, sizeof msg,
				 "memory limit of %llu bytes exceeded (%llu in use)",
				 (unsigned long long)l->mem_bytes, (unsigned long long)pss * 1024);
			/* Memory grows during a grace period: none. */
			limits_stop(sb, "ML", "memory", msg, true);
		} else {
			r->pss_rss_kb = s.rss_kb;
			r->pss_next_ns = now + 250 * SAMPLE_NS;
		}
	}
}

/* moat's own peak resident size: VmHWM of its memory, not getrusage's
 * ru_maxrss, which keeps the peak of whatever process exec'd moat. */
static uint64_t own_peak_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return 0;
	char line[128];
	unsigned long long kb = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

void limits_finish(struct sandbox *sb, int exit_status, bool moat_failed)
{
	struct run_result *r = &sb->res;
	r->t1_ns = limits_now();
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
		r->cpu_user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
		r->cpu_sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		if ((uint64_t)ru.ru_maxrss > r->max_rss_kb)
			r->max_rss_kb = (uint64_t)ru.ru_maxrss;
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		r->moat_cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	}
	r->moat_rss_kb = own_peak_rss_kb();
	struct cgroups *cg = &sb->cg;
	double user, sys;
	if (cgroup_cpu(cg, &user, &sys) >= 0) {
		r->cpu_user = user;
		r->cpu_sys = sys;
	}
	r->mem_peak = cgroup_memory_peak(cg);
	/* A limit the kernel enforced between the last tick and the end. */
	if (!r->stopping && !moat_failed && sb->lim.mem_bytes && cgroup_oom_kills(cg)) {
		snprintf(r->status, sizeof r->status, "ML");
		r->limit = "memory";
		snprintf(r->message, sizeof r->message, "%s", oom_message(sb));
		return;
	}
	if (!r->stopping && !moat_failed && sb->lim.pids && cgroup_pids_refused(cg)) {
		snprintf(r->status, sizeof r->status, "PL");
		r->limit = "processes";
		snprintf(r->message, sizeof r->message, "%s", refused_message(sb));
		return;
	}
	if (r->stopping)
		return; /* the limit's verdict stands */
	if (moat_failed) {
		snprintf(r->status, sizeof r->status, "XX");
		snprintf(r->message, sizeof r->message, "moat failed");
	} else if (WIFEXITED(exit_status)) {
		snprintf(r->status, sizeof r->status, "%s", WEXITSTATUS(exit_status) ? "RE" : "OK");
		if (WEXITSTATUS(exit_status))
			snprintf(r->message, sizeof r->message, "exited with %d",
				 WEXITSTATUS(exit_status));
	} else if (WIFSIGNALED(exit_status)) {
		snprintf(r->status, sizeof r->status, "SG");
		snprintf(r->message, sizeof r->message, "killed by signal %d (%s)",
			 WTERMSIG(exit_status), strsignal(WTERMSIG(exit_status)));
	}
}
