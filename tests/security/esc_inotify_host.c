/* esc_inotify_host — watch the host at work through inotify.
 *
 * A directory the sandbox sees read-only is the host's own (a --ro-bind, the
 * lower layer of /usr or of an --overlay): an inotify watch on it is a watch
 * on the host's inode, and reports what host processes do there — which
 * files they open, read, write, when.  We add a watch to each DIR (opens,
 * reads, writes, attribute changes), say "# ready", and the runner (poke)
 * opens, reads and touches DIR/NAME on the host, a name we never use
 * ourselves (it holds the run's token).  We read events for 3 s at most.
 *
 * Each DIR is also watched with dnotify (fcntl F_NOTIFY, a signal per
 * access, change or attribute change in it), which moat serves only on
 * the sandbox's own layers.
 *
 * ESCAPED for each DIR whose watch reported NAME (or whose dnotify
 * signalled): host activity, seen from inside.  The fixed moat keeps the sandbox's watches away from the host's
 * directories (refused, or a watch that sees only the sandbox's own
 * changes); either way nothing the host does there shows.  Natively the
 * watches are the host's: ESCAPED.
 *
 * usage: esc_inotify_host NAME DIR...
 */
#include "esc.h"
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <time.h>

/* dnotify: the signal's si_fd names the directory whose watch fired. */
static volatile sig_atomic_t dn_fired[64];

static void on_dnotify(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	if (si->si_fd >= 0 && si->si_fd < 64)
		dn_fired[si->si_fd] = 1;
}

/* A dnotify watch on `dir`: its fd, or -1 (held: said why). */
static int dnotify_watch(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fd >= 64) {
		esc_held("dnotify: open %s: %s", dir, fd < 0 ? esc_errname(errno) : "fd too high");
		return -1;
	}
	if (fcntl(fd, F_SETSIG, SIGRTMIN + 1) < 0 ||
	    fcntl(fd, F_NOTIFY, DN_ACCESS | DN_MODIFY | DN_ATTRIB | DN_MULTISHOT) < 0) {
		esc_held("dnotify on %s: %s", dir, esc_errname(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		esc_usage("esc_inotify_host NAME DIR...");
	const char *name = argv[1];
	int ndirs = argc - 2;
	if (ndirs > 8)
		esc_usage("at most 8 DIRs");
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (in < 0) {
		esc_held("inotify_init1: %s", esc_errname(errno));
		return esc_finish();
	}
	struct sigaction sa = { .sa_sigaction = on_dnotify, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigaction(SIGRTMIN + 1, &sa, NULL);
	int dn[8];
	for (int i = 0; i < ndirs; i++)
		dn[i] = dnotify_watch(argv[2 + i]);
	int wd[8], seen[8] = { 0 }, watching = 0;
	for (int i = 0; i < ndirs; i++) {
		wd[i] = inotify_add_watch(in, argv[2 + i], IN_OPEN | IN_ACCESS | IN_MODIFY | IN_ATTRIB | IN_CLOSE);
		if (wd[i] < 0)
			esc_held("inotify_add_watch %s: %s", argv[2 + i], esc_errname(errno));
		else
			watching++;
	}
	fprintf(stderr, "# watching %d of %d directories\n# ready\n", watching, ndirs);
	if (!watching)
		return esc_finish();
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int got = 0;
	unsigned masks[8] = { 0 };
	for (;;) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left = 3000 - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || got == watching)
			break;
		struct pollfd p = { in, POLLIN, 0 };
		if (poll(&p, 1, (int)left) != 1)
			continue;
		char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
		ssize_t n = read(in, buf, sizeof buf);
		for (char *q = buf; n > 0 && q < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)q;
			for (int i = 0; i < ndirs; i++)
				if (wd[i] >= 0 && e->wd == wd[i] && e->len && strcmp(e->name, name) == 0) {
					if (!seen[i])
						got++;
					seen[i] = 1;
					masks[i] |= e->mask;
				}
			q += sizeof *e + e->len;
		}
	}
	for (int i = 0; i < ndirs; i++) {
		if (dn[i] >= 0 && dn_fired[dn[i]])
			esc_won("dnotify on %s signalled the host at work there", argv[2 + i]);
		else if (dn[i] >= 0)
			esc_held("dnotify on %s: no signal in 3 s", argv[2 + i]);
		if (wd[i] < 0)
			continue;
		if (seen[i])
			esc_won("a watch on %s saw the host at work on %s (%s%s%s%s%s%s)", argv[2 + i], name,
				masks[i] & IN_OPEN ? "open " : "", masks[i] & IN_ACCESS ? "read " : "",
				masks[i] & IN_MODIFY ? "write " : "", masks[i] & IN_ATTRIB ? "attrib " : "",
				masks[i] & IN_CLOSE_WRITE ? "close-write " : "",
				masks[i] & IN_CLOSE_NOWRITE ? "close " : "");
		else
			esc_held("a watch on %s saw nothing of the host in 3 s", argv[2 + i]);
	}
	return esc_finish();
}
