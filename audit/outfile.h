/* moat's own output files on the host: the run report and the audit log.
 *
 * moat may be root, and such a file may sit where the sandbox can write (a
 * report beside the outputs in a --bind directory) or where an earlier
 * run's sandbox could (a link left in a directory bound then).  So
 * (docs/security.md, class 1): the file is opened before the sandbox
 * starts, through no symbolic link at all (RESOLVE_NO_SYMLINKS for its
 * directory, O_NOFOLLOW for itself), never waited on
 * (O_NONBLOCK: a FIFO without a reader is refused, not waited for), and
 * only a regular file with no other name, a FIFO with a reader, a terminal
 * or another character device, or a socket is taken.  /dev/stdout,
 * /dev/stderr, /dev/fd/N and /proc/self/fd/N name moat's own fds (as a
 * shell's redirections read them), "-" is stderr.  A regular file written
 * once at the end (the report) is written through the fd opened at the
 * start if its name still holds that file, else as a new file renamed over
 * the name: never through whatever the sandbox left there. */
#ifndef MOAT_OUTFILE_H
#define MOAT_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct outfile {
	const char *path; /* as given, for messages */
	int fd;           /* -1: not open */
	int dirfd;        /* regular files: the directory it was opened in */
	char name[NAME_MAX + 1];
	dev_t dev;
	ino_t ino;
	bool regular;
	bool created; /* made by outfile_open: removed if moat fails before the run */
};

/* Open `path` for output (append: O_APPEND, for the audit log; mode for
 * a new file).  0, or -1 with a line for people in err (what is wrong and
 * what to do). */
int outfile_open(struct outfile *o, const char *path, bool append, mode_t mode, char *err,
		 size_t errlen);
/* Is the file (a regular one) inside directory `dir_fd`, or below it?  Its
 * directory and every parent are compared by (st_dev, st_ino). */
bool outfile_below(const struct outfile *o, int dir_fd);
/* Replace the content of a file opened with outfile_open (not append) by
 * what `write_fn` prints.  0 or -errno. */
int outfile_rewrite(struct outfile *o, void (*write_fn)(FILE *f, void *arg), void *arg);
/* Close it; `discard`: remove a file outfile_open created (moat failed
 * before the run, nothing half-made is left). */
void outfile_close(struct outfile *o, bool discard);

#endif
