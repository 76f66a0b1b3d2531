/* What the sandbox is told about the machine it runs on: its host name
 * (uname, /etc/hostname, /etc/hosts, /proc/sys/kernel/hostname) and the
 * terminal moat passed on (ttyname of /dev/pts, TIOCSCTTY).  Set once by
 * the sandbox's start-up, read by handlers and the view's generators. */
#ifndef MOAT_MACHINE_H
#define MOAT_MACHINE_H

#include <stdbool.h>

struct machine {
	char hostname[65]; /* --hostname; "" means "moat" (machine_hostname) */
	/* moat's own terminal, a pty the sandbox inherits on fds 0-2: its
	 * number under /dev/pts, or -1. */
	int tty_pts;
	/* fds 0-2 hold a terminal that is not moat's controlling terminal:
	 * it may be nobody's, and then a TIOCSCTTY could take it (sys_ioctl). */
	bool tty_unheld;
};

/* The host name `hostname` (NULL or "": "moat") and what moat's fds 0-2
 * say about its terminal. */
void machine_init(struct machine *m, const char *hostname);
/* The sandbox's host name: m->hostname, or "moat" when none was set
 * (m may be NULL). */
const char *machine_hostname(const struct machine *m);

#endif
