/* esc_tiocsti — push characters into the terminal's input queue with
 * ioctl(fd, TIOCSTI): whoever reads that terminal next (the user's shell,
 * after the sandbox exits) runs them as typed commands.
 *
 * Attacks rule 5 (a new session, no controlling terminal: TIOCSTI is dead)
 * and rule 8 (ioctl is an allowlist of request numbers).  Natively the runner
 * gives us a pty as controlling terminal with `script`; only a harmless
 * character is pushed.  A kernel with legacy TIOCSTI disabled
 * (dev.tty.legacy_tiocsti=0) refuses it with EIO natively: exit 77.
 *
 * usage: esc_tiocsti
 */
#include "esc.h"
#include <sys/ioctl.h>

static int legacy_tiocsti_off(void)
{
	char c = 0;
	int fd = open("/proc/sys/dev/tty/legacy_tiocsti", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int n = (int)read(fd, &c, 1);
	close(fd);
	return n == 1 && c == '0';
}

static void push(const char *what, int fd)
{
	char c = ' ';
	if (ioctl(fd, TIOCSTI, &c) == 0)
		esc_won("ioctl(%s, TIOCSTI) pushed a character", what);
	else
		esc_held("ioctl(%s, TIOCSTI): %s", what, esc_errname(errno));
}

int main(void)
{
	/* Try every standard fd whether or not isatty() says so: a sandbox that
	 * hides TCGETS must still refuse TIOCSTI. */
	for (int fd = 0; fd <= 2; fd++) {
		char what[16];
		snprintf(what, sizeof what, "fd %d", fd);
		push(what, fd);
	}
	int t = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t < 0) {
		esc_held("open(/dev/tty): %s", esc_errname(errno));
	} else {
		push("/dev/tty", t);
		close(t);
	}
	if (!esc_log()->won[0] && legacy_tiocsti_off())
		esc_unsupported("dev.tty.legacy_tiocsti is 0: this kernel refuses TIOCSTI to everyone");
	return esc_finish();
}
