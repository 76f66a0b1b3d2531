/* uname(2) and sysinfo(2): the system, answered by the supervisor.
 *
 * In the kernel, uname would hand the sandbox the host's nodename (and
 * gethostname(), which glibc builds on it).  The kernel's sysname, release,
 * version and machine stay: they describe the kernel the program really
 * runs on, and /proc/version and /proc/sys/kernel/osrelease say the same. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

#include "core/machine.h"
#include "fs-emulation/vfs.h"
#include "syscall-table/handlers.h"

struct verdict sys_uname(struct call *c)
{
	struct utsname u;
	if (uname(&u) < 0)
		return v_error(errno);
	/* Whole fields cleared, not just overwritten: bytes of the host's
	 * name after our terminator would go out with the struct. */
	memset(u.nodename, 0, sizeof u.nodename);
	memset(u.domainname, 0, sizeof u.domainname);
	snprintf(u.nodename, sizeof u.nodename, "%s", machine_hostname(c->machine));
	snprintf(u.domainname, sizeof u.domainname, "(none)");
	return call_write(c, c->arg[0], &u, sizeof u) < 0 ? v_error(EFAULT) : v_value(0);
}

struct verdict sys_sysinfo(struct call *c)
{
	struct sysinfo si;
	int r = procfs_sysinfo(&si);
	if (r < 0)
		return v_error(-r);
	return call_write(c, c->arg[0], &si, sizeof si) < 0 ? v_error(EFAULT) : v_value(0);
}
