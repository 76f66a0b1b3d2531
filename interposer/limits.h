/* Limits of the whole sandbox, and the verdict of a run (docs/limits.md).
 *
 * Enforcement: the kernel's, through the sandbox's cgroups where moat may
 * make them (cgroup.h: memory, tasks, CPU accounting, the kill); moat's
 * own otherwise: it sees every fork and clone (ptrace) and samples every
 * sandbox process's CPU time and resident memory from /proc while it
 * runs.  rlimits in the first process back up what a process could do
 * alone (RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE).  The report names what
 * was in force. */
#ifndef MOAT_LIMITS_H
#define MOAT_LIMITS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct limits {
	double cpu_s;           /* --time-limit: CPU seconds, all processes; 0: none */
	double wall_s;          /* --wall-time-limit */
	double grace_s;         /* --kill-grace: SIGTERM to SIGKILL */
	uint64_t mem_bytes;     /* --memory-limit: resident memory, all together */
	unsigned pids;          /* --pids-limit: tasks (processes, threads) alive at once */
	uint64_t fsize_bytes;   /* --file-size-limit (RLIMIT_FSIZE) */
	unsigned nofile;        /* --open-files-limit (RLIMIT_NOFILE) */
	uint64_t nofile_caller; /* the caller's soft RLIMIT_NOFILE, when moat raised its own */
	bool mem_default;       /* mem_bytes is the default: held by a cgroup or not at all */
	uint64_t output_bytes;  /* --output-limit: stdout and stderr together */
};

/* What the run came to.  status: OK (exit 0), RE (another exit code), SG
 * (a signal the program got, not from moat), TO (CPU time), TW (wall
 * time), ML (memory), PL (processes), XX (moat's own failure). */
struct run_result {
	char status[3];
	const char *limit; /* the limit that stopped it: "time", "wall-time"... */
	char message[256];
	bool killed;   /* moat stopped the sandbox */
	bool stopping; /* SIGTERM sent, SIGKILL due at kill_at */
	uint64_t kill_at_ns;
	uint64_t t0_ns, t1_ns;   /* first exec .. last process gone (monotonic) */
	struct timespec t0_real; /* the same start, CLOCK_REALTIME (file ctimes) */
	double cpu_s;            /* sampled while running, for the TO verdict */
	double cpu_user, cpu_sys;
	double moat_cpu;      /* the supervisor's own CPU seconds (its threads too) */
	uint64_t moat_rss_kb; /* the supervisor's own peak resident size */
	uint64_t rss_kb, max_rss_kb;
	uint64_t mem_peak; /* the memory cgroup's peak charge, bytes (0: none) */
	unsigned procs_started, procs_max;
	uint64_t next_sample_ns;  /* the next look at CPU time and memory */
	uint64_t last_cg_ns;      /* the last read of the cgroups' counters */
	uint64_t pss_next_ns;     /* the next look at PSS past the memory limit */
	uint64_t pss_rss_kb;      /* the resident sum at the last look at PSS */
	uint64_t pss_earliest_ns; /* no look at PSS before (its cost bounded) */
};

struct sandbox;

/* CLOCK_MONOTONIC in ns. */
uint64_t limits_now(void);
/* Any limit the loop must watch (it then wakes every few ms)? */
bool limits_watched(const struct sandbox *sb);
/* The rlimits that back the limits up, for the first process to set
 * before its exec with raw system calls (it runs on moat's memory and
 * touches nothing of glibc's).  An entry with res RLIM_NLIMITS is unused;
 * keep_max: only the soft limit, to cur, under the hard one it has. */
#define LIMITS_CHILD_MAX 3
struct limits_rl {
	int res;
	bool keep_max;
	unsigned long long cur, max;
};
void limits_child_plan(const struct limits *l, struct limits_rl rl[LIMITS_CHILD_MAX]);
/* A task was born (fork or clone seen; `thread`: a thread of a process
 * moat knows): count, and stop the sandbox past the task limit. */
void limits_proc_born(struct sandbox *sb, bool thread);
/* How long the loop may sleep before limits_tick must run (ms; -1: no
 * limit needs a timer). */
int limits_timeout_ms(const struct sandbox *sb);
/* Decide: called by the loop at each wake-up (cheap unless a look at the
 * processes is due). */
void limits_tick(struct sandbox *sb);
/* Stop the whole sandbox for `status` (SIGTERM, grace, SIGKILL; SIGKILL at
 * once with grace 0).  The first verdict stands. */
void limits_stop(struct sandbox *sb, const char *status, const char *limit, const char *msg,
		 bool now);
/* After the loop: CPU times and the status from the first process's end. */
void limits_finish(struct sandbox *sb, int exit_status, bool moat_failed);

#endif
