/* flock and fcntl's record locks: the host's lock tables are not the
 * sandbox's (docs/security.md, class 4).
 *
 * A lock lives on an inode.  On a file of the sandbox's own (an upper
 * layer, /tmp, /workspace) or of a writable --bind (shared with the host by
 * the user's choice: a database there must lock against the host's users
 * of it) the kernel takes it as asked.  On a file the sandbox reads from
 * the host — a lower layer (/usr, /etc), a --ro-bind — a real lock would
 * block the host's programs that lock that file, show the sandbox the host
 * pids that hold locks there (F_GETLK's l_pid), and let two sandboxes
 * signal each other through it.  There moat answers itself: a read lock
 * and an unlock succeed and hold nothing (nothing in the sandbox can
 * write such a file, so a reader needs no protection from a writer of
 * the sandbox's), a write lock is EBADF (the fd is read-only, as the
 * kernel would say), F_GETLK sees no lock, flock succeeds.
 *
 * Which file an fd names is read from a copy of it when the call arrives.
 * A POSIX lock belongs to the calling process, so moat cannot take it on
 * the sandbox's behalf: for a file of the sandbox's own the call goes on to
 * the kernel (CONTINUE).  A thread that swaps the fd number (dup2) between
 * moat's look and the kernel's run can make that lock land on a read-only
 * host file: the one race left in this class, documented in
 * docs/security.md. */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-emulation/fs.h"
#include "syscall-table/handlers.h"

/* Is the caller's fd a file of the host's that the sandbox cannot change?
 * 1 yes, 0 no, -errno when the fd is not there. */
static int host_readonly(struct call *c, int fd, int *accmode)
{
	int copy = call_getfd(c, fd);
	if (copy < 0)
		return -EBADF;
	int fl = fcntl(copy, F_GETFL);
	*accmode = fl < 0 ? O_RDONLY : (fl & O_ACCMODE);
	int r = fs_fd_changeable(c->vfs, copy) < 0 ? 1 : 0;
	call_putfd(copy);
	return r;
}

/* Answered by moat, holding nothing: not a denial (nothing is refused), so
 * recorded only at --audit-level supervised, with its rule. */
static struct verdict private_lock(void)
{
	struct verdict v = v_value(0);
	v.rule = "fs.private-lock";
	return v;
}

/* Is it moat's to answer (a read-only host file: true)?  Otherwise *v is
 * the answer: the kernel's (CONTINUE), or EBADF. */
static bool answered_here(struct call *c, int *acc, struct verdict *v)
{
	int r = host_readonly(c, (int)c->arg[0], acc);
	*v = r < 0 ? v_error(-r) : v_continue();
	return r == 1;
}

struct verdict sys_flock(struct call *c)
{
	int op = (int)c->arg[1];
	int acc;
	struct verdict v;
	if (!answered_here(c, &acc, &v))
		return v;
	int kind = op & ~LOCK_NB;
	if (kind != LOCK_SH && kind != LOCK_EX && kind != LOCK_UN)
		return v_error(EINVAL);
	return private_lock();
}

struct verdict fs_fcntl_lock(struct call *c)
{
	int cmd = (int)c->arg[1];
	int acc;
	struct verdict v;
	if (!answered_here(c, &acc, &v))
		return v;
	struct flock fl;
	if (call_read(c, c->arg[2], &fl, sizeof fl) < 0)
		return v_error(EFAULT);
	bool ofd = cmd == F_OFD_GETLK || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
	if ((ofd && fl.l_pid != 0) ||
	    (fl.l_whence != SEEK_SET && fl.l_whence != SEEK_CUR && fl.l_whence != SEEK_END))
		return v_error(EINVAL);
	if (cmd == F_GETLK || cmd == F_OFD_GETLK) {
		if (fl.l_type != F_RDLCK && fl.l_type != F_WRLCK)
			return v_error(EINVAL);
		/* No lock of anyone's is seen on a host file. */
		fl.l_type = F_UNLCK;
		if (call_write(c, c->arg[2], &fl, sizeof fl) < 0)
			return v_error(EFAULT);
		return private_lock();
	}
	switch (fl.l_type) {
	case F_UNLCK: break;
	case F_RDLCK:
		if (acc == O_WRONLY)
			return v_error(EBADF);
		break;
	case F_WRLCK:
		if (acc == O_RDONLY)
			return v_error(EBADF);
		break;
	default: return v_error(EINVAL);
	}
	return private_lock();
}

/* The page cache of a host file is the host's: the sandbox may not drop
 * its pages (a slowdown of the host's programs, and half of a page-cache
 * side channel), nor ask which are there (RWF_NOWAIT: EAGAIN when a page
 * is not cached).  On its own files it may. */
struct verdict sys_fadvise64(struct call *c)
{
	int acc;
	struct verdict v;
	if (!answered_here(c, &acc, &v))
		return v;
	v = v_value(0); /* advice: free to ignore */
	v.rule = "fs.host-page-cache";
	return v;
}

struct verdict sys_rwf_nowait(struct call *c)
{
	int acc;
	struct verdict v;
	/* As a file system without nowait reads answers. */
	return answered_here(c, &acc, &v) ? v_deny(EOPNOTSUPP, "fs.host-page-cache") : v;
}
