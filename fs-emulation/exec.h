/* exec resolution in the virtual filesystem (rule 7). */
#ifndef MOAT_EXEC_H
#define MOAT_EXEC_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct vfs;
struct task;

#define EXEC_MAX_PREFIX 8

/* What an exec will run.  For a `#!` script moat does the kernel's part:
 * the interpreter (resolved virtually) is exec'd with argv
 * [prefix..., script-as-named, argv[1]...], so the interpreter opens the
 * script through the sandbox's own view. */
struct exec_plan {
	char host[PATH_MAX];  /* host path handed to the kernel */
	char vpath[PATH_MAX]; /* virtual path of the binary run */
	dev_t dev;
	ino_t ino;
	bool has_interp; /* ELF PT_INTERP, opened by the kernel */
	dev_t interp_dev;
	ino_t interp_ino;
	/* The binary, open in moat (read-only), or -1: the
	 * kernel execs this fd and walks no host path.  The caller of
	 * vfs_exec_resolve owns it on success; on failure it is -1. */
	int fd;
	int nprefix; /* 0 unless a script */
	char prefix[EXEC_MAX_PREFIX][PATH_MAX];
	bool outside;          /* the path named something outside the view */
	const char *deny_rule; /* set when the refusal is a policy decision */
	char denied_path[PATH_MAX];
	/* The caller's argv and envp (tracee addresses), set by the exec
	 * handler (sys_exec.c): the call the ptrace side makes of the plan is
	 * execve(host, [prefix..., argv[1]...] or argv, envp). */
	uint64_t argv, envp;
};

/* Resolve `path` (as the program named it) from virtual directory `base`.
 * 0 or -errno as execve would fail (ENOENT, EACCES, ENOEXEC, ELOOP...). */
int vfs_exec_resolve(struct vfs *v, struct task *t, const char *base, const char *path, int how,
		     struct exec_plan *plan);
/* vfs_exec_resolve's `how`: don't follow a final symlink; `path` is a view
 * path already (an fd's, for fexecve), not the sandbox's (which a chroot
 * roots). */
#define EXEC_NOFOLLOW 1
#define EXEC_VIEW_PATH 2

#endif
