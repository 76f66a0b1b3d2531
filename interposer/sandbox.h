/* One sandbox: what the supervisor holds for the whole run. */
#ifndef MOAT_SANDBOX_H
#define MOAT_SANDBOX_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/filter.h>

#include "core/creds.h"
#include "core/machine.h"
#include "interposer/cgroup.h"
#include "interposer/limits.h"
#include "interposer/output.h"
#include "syscall-table/table.h"

struct vfs;
struct audit;
struct net;

struct sandbox_opts {
	char **argv;                     /* the command */
	const char *chdir;               /* virtual starting directory */
	char **env;                      /* the sandbox's whole environment */
	const struct sock_fprog *filter; /* the seccomp program to install */
	sigset_t sigmask;                /* the program's signal mask: the caller's */
	bool sigmask_set;
	int lifeline; /* --lifeline: its hang-up ends the sandbox; -1: none */
};

struct sandbox {
	struct sandbox_opts opt;
	struct vfs *vfs;
	struct audit *audit;
	struct net *net; /* the network policy and worlds (net-stub) */
	int notify_fd;
	/* The filter has SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux 5.19):
	 * a received call ends only by its answer or its task's death. */
	bool recv_killable;
	pid_t init_pid;
	int init_status; /* wait status of the first process */
	bool init_done;
	int exec_err_fd;        /* read end: errno of a failed first exec */
	struct creds creds;     /* the sandbox's ids; whether moat switches */
	struct machine machine; /* its host name and moat's terminal */
	char id[17];            /* random id: abstract socket namespace */
	uint64_t supervised[SC_NCLASS];
	uint64_t denied[SC_NCLASS];
	struct limits lim;     /* what the run may use (cli) */
	struct cgroups cg;     /* the kernel's enforcement of them (cgroup.c) */
	struct run_result res; /* what it came to (interposer/limits.c) */
	struct output out;     /* stdout/stderr relayed or captured (output.c) */
	int sig_fd;            /* signalfd: SIGCHLD and the signals moat forwards */
	sigset_t sig_saved;    /* moat's signal mask before the launch */
};

/* Start the sandbox: fork, seize, filter; the first process is then on
 * its way to its exec, which stops in the loop.  Returns 0, or -1 with
 * `err` naming the step that failed, moat's or the first process's, and
 * why: "setgroups: Operation not permitted (hint)".  A failed launch
 * leaves no process, no directory and moat's signal mask as it was. */
int sandbox_launch(struct sandbox *sb, char *err, size_t errlen);
/* The event loop, until the first process and all it started are gone;
 * then moat's own signal mask again.  Returns moat's exit code: the first
 * process's, 126/127 for a failed first exec. */
int sandbox_loop(struct sandbox *sb);
/* sandbox_launch, then sandbox_loop.  Returns moat's exit code; a failed
 * launch is said on stderr ("moat: cannot start the sandbox: ...") and
 * is 125. */
int sandbox_run(struct sandbox *sb);

#endif
