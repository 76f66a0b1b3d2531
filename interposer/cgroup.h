/* The sandbox's cgroups: the kernel's own enforcement of the memory and
 * task limits, its accounting of CPU time, and one write that kills
 * everything (docs/limits.md, "Enforcement").
 *
 * moat makes a cgroup of its own under the one it runs in, in each
 * hierarchy that has what a limit needs and that it may write: cgroup v2
 * (memory.max with swap off, pids.max, memory.events, pids.events,
 * cpu.stat, cgroup.kill), or the v1 memory, pids and cpuacct hierarchies
 * a hybrid host keeps its controllers in.  The first sandbox process is
 * moved in before it runs anything of the program's; every process it
 * starts is born inside.  Whatever cannot be had falls back to moat's own
 * accounting (limits.c), and the report names, piece by piece, which was
 * in force.  The directories (moat-PID-RANDOM) go when moat exits, however
 * it exits short of SIGKILL: at its end, at exit(), or from the handler of
 * a signal that would end it; an empty one a minute old, which only a
 * moat killed with SIGKILL leaves, is removed by the next moat.
 *
 * Every file is reached from a directory fd whose filesystem is checked to
 * be cgroupfs, never by a path a writer of some parent could redirect. */
#ifndef MOAT_CGROUP_H
#define MOAT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct limits;

/* --cgroup */
enum cg_use { CG_AUTO, CG_OFF, CG_REQUIRED };

/* What a cgroup may do for the run; ver[] says by which hierarchy. */
enum cg_piece {
	CGP_MEMORY, /* the memory limit, and the OOM verdict */
	CGP_PIDS,   /* the task limit, and its verdict */
	CGP_CPU,    /* CPU time of every process, the exited ones included */
	CGP_KILL,   /* cgroup.kill: every process at once */
	CGP_N
};

#define CG_MAX_DIRS 4

struct cgroups {
	enum cg_use use;
	int ver[CGP_N];              /* 0: not in force, else 1 or 2 */
	int piece_dir[CGP_N];        /* the directory that holds it */
	char dir[CG_MAX_DIRS][4096]; /* the directories moat made (paths, for messages) */
	char name[CG_MAX_DIRS][64];  /* their names in their parents */
	int parent_fd[CG_MAX_DIRS];  /* the parents (removal by unlinkat) */
	int procs_fd[CG_MAX_DIRS];   /* their cgroup.procs */
	int lock_fd[CG_MAX_DIRS];    /* each, flock(LOCK_SH) while ours */
	int ndir;
	pid_t owner;    /* moat: a forked child never cleans up */
	uid_t self_uid; /* moat's own ids, for the signal handler */
	gid_t self_gid;
	uint64_t ceiling; /* the host's RAM or an enclosing limit, the smaller */
	int kill_fd;      /* cgroup.kill */
	int oom_fd;       /* memory.events (v2), memory.oom_control (v1) */
	int pids_fd;      /* pids.events */
	int cpu_fd;       /* cpu.stat (v2), cpuacct.usage (v1) */
	int cpustat_fd;   /* cpuacct.stat (v1) */
	int peak_fd;      /* memory.peak (v2), memory.max_usage_in_bytes (v1) */
	int usage_fd;     /* memory.current (v2), memory.usage_in_bytes (v1) */
};

/* Make the cgroups the limits need (and, for CPU accounting and the kill,
 * one in any case when moat may) and set the limits in them.  With
 * CG_REQUIRED, a limit no cgroup can hold is an error: -1 with `err` one
 * line naming it and the fix, and nothing left behind.  Otherwise 0; what
 * could not be had is simply not in force. */
int cgroup_setup(struct cgroups *cg, enum cg_use use, const struct limits *l, char *err,
		 size_t errlen);
/* Move `pid` (not yet running the program) into every cgroup.  A piece
 * whose cgroup would not take it is dropped (-1 with CG_REQUIRED). */
int cgroup_attach(struct cgroups *cg, pid_t pid, bool born_v2);
/* An fd of the v2 cgroup that holds a limit, for a clone straight into
 * it (CLONE_INTO_CGROUP: no migration, whose write costs ~0.2 ms here);
 * -1 when there is none.  cgroup_attach(..., true) then skips it. */
int cgroup_v2_fd(const struct cgroups *cg);
/* Kill every process in the cgroups (cgroup.kill; nothing without it). */
void cgroup_kill(struct cgroups *cg);
/* OOM kills in the sandbox's memory cgroup so far (by any OOM killer). */
uint64_t cgroup_oom_kills(struct cgroups *cg);
/* Was an OOM kill the sandbox's own limit's (1), an enclosing cgroup's or
 * the host's (0), or can the counters not tell (-1)? */
int cgroup_memory_limit_hit(struct cgroups *cg, uint64_t limit);
/* Forks or clones refused at the task limit so far. */
uint64_t cgroup_pids_refused(struct cgroups *cg);
/* CPU seconds of every process that ran in it (user and system apart when
 * the pointers are given); -1 without CPU accounting. */
double cgroup_cpu(struct cgroups *cg, double *user, double *sys);
/* The memory cgroup's peak charge in bytes (0: unknown). */
uint64_t cgroup_memory_peak(struct cgroups *cg);
/* The memory cgroup's charge now, bytes (0: unknown). */
uint64_t cgroup_memory_usage(struct cgroups *cg);
/* Any piece in force? */
bool cgroup_any(const struct cgroups *cg);
/* Remove the directories (killing what is left in them first). */
void cgroup_cleanup(struct cgroups *cg);
/* Kill and remove the run's cgroups from any thread, with async-signal-safe
 * calls only: for a moat about to end without its loop (the watchdog's
 * last resort). */
void cgroup_abandon(void);
/* cgroup.kill of the run's cgroups from any thread (async-signal-safe);
 * false without one. */
bool cgroup_kill_async(void);
/* The smallest memory limit of the cgroups moat runs in (bytes; 0: none). */
uint64_t cgroup_memory_ceiling(void);
/* A process's cgroup directory in the hierarchy holding controller `ctrl`
 * (v1), or in the v2 hierarchy (ctrl NULL): its path in `cgroup_file`
 * (/proc/PID/cgroup) under the mount in `mountinfo` that shows that part
 * of the hierarchy.  0, or -1 when no mount shows it. */
int cgroup_dir_in(const char *cgroup_file, const char *mountinfo, const char *ctrl, char *out,
		  size_t n);

#endif
