/* esc_lock_host — file locks shared with the host.
 *
 * A file the sandbox sees read-only (a --ro-bind, the lower layer of /usr or
 * /etc) is the host's inode, and locks live on the inode: a lock the
 * sandbox takes there blocks the host's programs (a package manager's lock,
 * /etc/.pwd.lock of useradd and passwd, a database's lock file), and a lock
 * a host process holds shows through F_GETLK, with its host pid.  With the
 * files on read-only fds we take:
 *
 *   DIR/flock.f    flock(LOCK_EX)
 *   DIR/posix.f    fcntl(F_SETLK, F_RDLCK)
 *   DIR/ofd.f      fcntl(F_OFD_SETLK, F_RDLCK)
 *   USR/flock.f    flock(LOCK_EX)  (USR: below /usr, the lower layer)
 *
 * say "# ready", and the runner (poke) tries, as a host process, an
 * exclusive lock of the same kind on each without waiting, and writes
 * "locked" or "free" into NAME.result beside it; we read those.  And
 *
 *   DIR/held.f     F_GETLK: a host process of the runner's (HOLDER) holds
 *                  a write lock there; do we see it, and its pid?
 *
 * ESCAPED for each lock the host found held by us, and when F_GETLK shows
 * the host's lock with the host pid HOLDER.  The fixed moat keeps locks on
 * read-only host files private to the sandbox: the host finds them free,
 * and the sandbox sees no host lock.  Natively the locks are the host's:
 * ESCAPED.
 *
 * usage: esc_lock_host DIR USR HOLDER
 */
#include "esc.h"
#include <sys/file.h>
#include <time.h>

static int open_ro(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		esc_held("open %s: %s", p, esc_errname(errno));
	return fd;
}

/* NAME.result in dir: 1 locked, 0 free, -1 not (yet) there */
static int result(const char *dir, const char *name)
{
	char f[300], buf[16];
	snprintf(f, sizeof f, "%s.result", name);
	if (esc_read_small(dir, f, buf, sizeof buf) < 0)
		return -1;
	return strncmp(buf, "locked", 6) == 0 ? 1 : strncmp(buf, "free", 4) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc != 4 || atoi(argv[3]) <= 0)
		esc_usage("esc_lock_host DIR USR HOLDER");
	const char *dir = argv[1], *usr = argv[2];
	int holder = atoi(argv[3]);
	struct {
		const char *dir, *name, *how;
		int taken;
	} l[4] = { { dir, "flock", "flock(LOCK_EX)", 0 },
		   { dir, "posix", "F_SETLK F_RDLCK", 0 },
		   { dir, "ofd", "F_OFD_SETLK F_RDLCK", 0 },
		   { usr, "flock", "flock(LOCK_EX)", 0 } };
	for (int i = 0; i < 4; i++) {
		char f[64];
		snprintf(f, sizeof f, "%s.f", l[i].name);
		int fd = open_ro(l[i].dir, f);
		if (fd < 0)
			continue;
		int r;
		if (strcmp(l[i].name, "flock") == 0) {
			r = flock(fd, LOCK_EX | LOCK_NB);
		} else {
			struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
			r = fcntl(fd, strcmp(l[i].name, "ofd") == 0 ? F_OFD_SETLK : F_SETLK, &fl);
		}
		if (r < 0)
			esc_held("%s on %s/%s: %s", l[i].how, l[i].dir, f, esc_errname(errno));
		else
			l[i].taken = 1;
	}
	int hf = open_ro(dir, "held.f");
	if (hf >= 0) {
		struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
		if (fcntl(hf, F_GETLK, &fl) < 0)
			esc_held("F_GETLK on %s/held.f: %s", dir, esc_errname(errno));
		else if (fl.l_type != F_UNLCK && fl.l_pid == holder)
			esc_won("F_GETLK on %s/held.f shows the host's write lock and its holder's host pid %d", dir,
				holder);
		else if (fl.l_type != F_UNLCK)
			esc_won("F_GETLK on %s/held.f shows the host's write lock (pid %d)", dir, (int)fl.l_pid);
		else
			esc_held("F_GETLK on %s/held.f shows no lock", dir);
	}
	fprintf(stderr, "# locks taken\n# ready\n");
	int pending = 0;
	for (int i = 0; i < 4; i++)
		pending += l[i].taken;
	for (int t = 0; t < 60 && pending; t++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		pending = 0;
		for (int i = 0; i < 4; i++)
			if (l[i].taken && result(l[i].dir, l[i].name) < 0)
				pending++;
	}
	for (int i = 0; i < 4; i++) {
		if (!l[i].taken)
			continue;
		int r = result(l[i].dir, l[i].name);
		if (r == 1)
			esc_won("a host process found %s/%s.f locked by the sandbox's %s", l[i].dir, l[i].name,
				l[i].how);
		else if (r == 0)
			esc_held("%s on %s/%s.f: the host found it free", l[i].how, l[i].dir, l[i].name);
		else
			esc_usage("the runner never said whether the host found the locks held");
	}
	return esc_finish();
}
