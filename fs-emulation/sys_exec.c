/* execve, execveat: decided in the virtual filesystem (rule 7).
 *
 * These calls arrive at a ptrace stop, not as notifications (table: TRACE):
 * the dispatcher's dispatch_stop runs the handler, and the ptrace side
 * (interposer/trace.c) turns a V_EXEC verdict into the rewritten call —
 * the host file decided on, and for a script the interpreter's argv — or
 * an error into a skipped call. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "core/call.h"
#include "core/task.h"
#include "fs-emulation/exec.h"
#include "fs-emulation/fs.h"
#include "syscall-table/filter.h"
#include "syscall-table/handlers.h"

/* Base directory for a relative exec path, from AT_FDCWD or a dirfd; or
 * with `self` the file the fd itself names: fexecve. */
static int exec_base(struct call *c, int dirfd, bool self, char *base, size_t len)
{
	if (dirfd == AT_FDCWD) {
		snprintf(base, len, "%s", c->task->proc->fs->cwd);
		return 0;
	}
	struct stat st;
	int r = fs_task_fd_vpath(c->vfs, c->tid, dirfd, base, len, &st);
	if (r == 0 && !self && !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return r;
}

/* The notification of moat's own exec by fd (syscall-table/filter.h,
 * SC_EXEC_FD_COOKIE): the exec stop of this thread planned exactly this
 * call, so the file decided on goes to the fd number it named, close-on-
 * exec, and the call runs.  Anything else that looks like it is the
 * program's own and refused.  The image is still checked at the exec
 * event: a thread that swaps the fd in between gets its process killed. */
static struct verdict exec_by_fd(struct call *c)
{
	struct exec_check *e = &c->task->exec;
	if (c->nr != __NR_execveat || c->arg[5] != SC_EXEC_FD_COOKIE || !e->pending ||
	    !e->fd_held || c->arg[0] != (uint64_t)e->fdnum || c->arg[4] != AT_EMPTY_PATH)
		return v_deny(EPERM, "exec.not-planned");
	/* The empty name moat wrote (a sibling thread that rewrites it
	 * afterwards makes the kernel walk a path of its choosing, as it could
	 * at an exec by path: the exec event kills any image but this one). */
	int r = call_read_path(c, 1, 0);
	if (r < 0 || c->path[0][0] != '\0')
		return v_deny(EPERM, "exec.not-planned");
	r = notif_install(c->notify_fd, c->id, e->fd, e->fdnum, O_CLOEXEC);
	if (r < 0)
		return v_error(-r);
	/* Once: a failed exec cannot be replayed with the same fd (its copy
	 * in the caller stays there, close-on-exec; docs/filesystem.md). */
	exec_check_drop(e);
	return v_continue();
}

/* The shared body: the path in argument `argi`, argv and envp after it,
 * relative to `dirfd`, with execveat's `flags`.  The record of a refusal
 * names the path as it was resolved from — for fexecve the fd's file —
 * and the path the refusal rests on. */
static struct verdict exec_call(struct call *c, int dirfd, int argi, int flags)
{
	/* Only at a stop is there a register set to rewrite; the one
	 * notification is moat's own exec by fd. */
	if (!c->stopped)
		return exec_by_fd(c);
	if (!c->exec)
		return v_deny(EPERM, "table.unexpected-notification");
	static char base[PATH_MAX];
	snprintf(base, sizeof base, "/"); /* an absolute path needs none */
	char *path = c->path[0];
	bool view = false; /* path is an fd's view path, not the sandbox's */
	int r = call_read_path(c, argi, 0);
	if (r < 0)
		return v_error(-r);
	if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return v_error(EINVAL);
	if (path[0] == '\0') {
		if (!(flags & AT_EMPTY_PATH))
			return v_error(ENOENT);
		/* fexecve: the fd must be one the registry knows. */
		r = exec_base(c, dirfd, true, base, sizeof base);
		if (r < 0)
			return v_deny(-r, "exec.unknown-fd");
		snprintf(path, PATH_MAX, "%s", base);
		view = true;
	} else if (path[0] != '/') {
		r = exec_base(c, dirfd, false, base, sizeof base);
		if (r < 0)
			return v_error(-r);
	}
	struct exec_plan *plan = c->exec;
	int how = ((flags & AT_SYMLINK_NOFOLLOW) ? EXEC_NOFOLLOW : 0) | (view ? EXEC_VIEW_PATH : 0);
	r = vfs_exec_resolve(c->vfs, c->task, base, path, how, plan);
	if (r < 0) {
		if (!plan->deny_rule)
			return v_error(-r);
		snprintf(c->resolved[0], PATH_MAX, "%s", plan->denied_path);
		return v_deny(-r, plan->deny_rule);
	}
	plan->argv = c->arg[argi + 1];
	plan->envp = c->arg[argi + 2];
	return v_exec(plan);
}

struct verdict sys_execve(struct call *c)
{
	return exec_call(c, AT_FDCWD, 0, 0);
}

struct verdict sys_execveat(struct call *c)
{
	return exec_call(c, (int)c->arg[0], 1, (int)c->arg[4]);
}
