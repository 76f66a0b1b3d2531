/* The sandbox's host name and moat's terminal (machine.h). */
#include "core/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* fd's terminal, when it is a pty: its number under /dev/pts, or -1. */
static int pts_number(int fd)
{
	char link[64], host[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t l = readlink(link, host, sizeof host - 1);
	if (l <= 9 || !isatty(fd))
		return -1;
	host[l] = '\0';
	if (strncmp(host, "/dev/pts/", 9) != 0 ||
	    strspn(host + 9, "0123456789") != strlen(host + 9))
		return -1;
	return atoi(host + 9);
}

void machine_init(struct machine *m, const char *hostname)
{
	snprintf(m->hostname, sizeof m->hostname, "%s", hostname ? hostname : "");
	m->tty_pts = -1;
	m->tty_unheld = false;
	for (int fd = 0; fd < 3; fd++) {
		pid_t sid;
		if (isatty(fd) && ioctl(fd, TIOCGSID, &sid) < 0)
			m->tty_unheld = true;
		if (m->tty_pts < 0)
			m->tty_pts = pts_number(fd);
	}
}

const char *machine_hostname(const struct machine *m)
{
	return m && m->hostname[0] ? m->hostname : "moat";
}
