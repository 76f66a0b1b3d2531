/* esc_ctty — does the sandbox still hold a controlling terminal, or share a
 * session with the process that started it?
 *
 * Attacks rule 5 (a new session, no controlling terminal).  A controlling
 * terminal gives the sandbox /dev/tty, TIOCSTI on its own terminal, job
 * control signals to the user's foreground group, and SIGHUP games; sharing
 * the caller's session lets it reach them.  Natively the runner gives it one
 * with `script`.  Under moat: open("/dev/tty") must fail (ENXIO, or ENOENT),
 * TIOCGSID on fd 0 must fail, getsid(0) must differ from the parent's
 * session, and TIOCSCTTY (taking fd 0 as controlling terminal) must fail.
 *
 * usage: esc_ctty
 */
#include "esc.h"
#include <sys/ioctl.h>

int main(void)
{
	/* A /dev/tty that opens is only a controlling terminal if the kernel
	 * says it is ours (a synthetic /dev could hand out some other tty). */
	int t = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (t >= 0) {
		pid_t tsid = 0;
		if (ioctl(t, TIOCGSID, &tsid) == 0)
			esc_won("open(/dev/tty) gave our controlling terminal (session %d)", (int)tsid);
		else
			esc_held("open(/dev/tty) worked but TIOCGSID on it: %s", esc_errname(errno));
		close(t);
	} else {
		esc_held("open(/dev/tty): %s", esc_errname(errno));
	}

	pid_t sid = 0;
	if (ioctl(0, TIOCGSID, &sid) == 0)
		esc_won("fd 0 is the controlling terminal of session %d", (int)sid);
	else
		esc_held("ioctl(0, TIOCGSID): %s", esc_errname(errno));

	pid_t mine = getsid(0), parent = getsid(getppid());
	if (parent < 0)
		esc_held("getsid(parent): %s", esc_errname(errno));
	else if (mine == parent)
		esc_won("same session %d as our parent %d", (int)mine, (int)getppid());
	else
		esc_held("own session %d, parent's is %d", (int)mine, (int)parent);

	/* A session leader without a terminal may try to take one. */
	if (getsid(0) == getpid()) {
		if (ioctl(0, TIOCSCTTY, 0) == 0)
			esc_won("ioctl(0, TIOCSCTTY) made fd 0 our controlling terminal");
		else
			esc_held("ioctl(0, TIOCSCTTY): %s", esc_errname(errno));
	}
	return esc_finish();
}
