/* esc_nested_ro — write a file of a read-only mount nested inside a
 * writable one, by moving the directory above the mount point.
 *
 * Attacks the read-only mount rule (docs/filesystem.md "Permissions":
 * read-only mounts answer EROFS to writes) and the placement of mounts by
 * virtual path: "directories above a mount point cannot be renamed or
 * removed (EBUSY)".  The runner shows one host directory P twice:
 *     --bind P /p  and  --ro-bind P/sub/ro /p/sub/ro
 * so P/sub/ro/file.txt is read-only at /p/sub/ro/file.txt.  moat places the
 * read-only mount at the virtual path /p/sub/ro; if /p/sub could be renamed
 * (in the writable mount, by the host rename it performs), the same host
 * file would show up at /p/moved/ro/file.txt under no read-only mount, and
 * be writable.  The ways, each followed by an undo:
 *   1. open(TOP/sub/ro/file.txt, O_WRONLY) and write (the plain write);
 *   2. rename(TOP/sub, TOP/moved), write TOP/moved/ro/file.txt;
 *   3. rename(TOP/sub/ro, TOP/sub/ro-moved) — the mount point itself —
 *      write TOP/sub/ro-moved/file.txt;
 *   4. mkdir TOP/other, renameat2(TOP/sub, TOP/other, RENAME_EXCHANGE),
 *      write TOP/other/ro/file.txt.
 * Each way is judged by its effect on the host file, seen through an
 * O_RDONLY fd opened at the start with the kernel's fstat and pread
 * (content, mtime).  The runner also compares the host file and the
 * listing of P before and after the moat run.
 *
 * Natively there are no mounts at all: the runner runs us as the owner of P
 * (setpriv) on P itself, so every way is a plain host operation that writes
 * the file — which is what a moat that let the rename through would allow.
 * Under moat (TOP = /p) they must fail with EROFS (1), EBUSY (2, 4) or
 * EXDEV (3: the mount point is in the read-only mount, its new name in the
 * writable one): the errors a kernel gives for a read-only file system, a
 * busy mount point and a cross-mount rename, emulated rather than denied,
 * so no audit record is expected.
 *
 * usage: esc_nested_ro TOP   (TOP/sub/ro/file.txt: ours, 0644, "orig")
 */
#include "esc.h"
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

static const char *top;
static int fd; /* O_RDONLY on the file: our window on the host inode */

struct snap {
	char data[64];
	ssize_t len;
	struct stat st;
};

static void take(struct snap *s)
{
	memset(s, 0, sizeof *s);
	if (syscall(SYS_fstat, fd, &s->st) < 0)
		esc_usage("fstat of our own fd failed");
	s->len = pread(fd, s->data, sizeof s->data - 1, 0);
	for (ssize_t i = 0; i < s->len; i++)
		if (s->data[i] < 0x20 || s->data[i] > 0x7e)
			s->data[i] = '.';
}

static int changed(const struct snap *a, const struct snap *b)
{
	return a->len != b->len || memcmp(a->data, b->data, sizeof a->data) ||
	       a->st.st_mtim.tv_sec != b->st.st_mtim.tv_sec || a->st.st_mtim.tv_nsec != b->st.st_mtim.tv_nsec;
}

static char *at(const char *rel)
{
	static char bufs[4][4096];
	static int i;
	char *p = bufs[i++ % 4];
	snprintf(p, 4096, "%s/%s", top, rel);
	return p;
}

/* Open path for writing and overwrite the file with mark.  0 or -errno. */
static int write_through(const char *path, const char *mark)
{
	int w = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (w < 0)
		return -errno;
	int r = write(w, mark, strlen(mark)) < 0 ? -errno : 0;
	close(w);
	return r;
}

/* Move `from` to `to` (or exchange them), write through `via`, move back.
 * Returns the first error: of the move (as is), or of the write. */
static int move_and_write(const char *from, const char *to, unsigned flags, const char *via,
			  const char *mark, char *note, size_t cap)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, flags) < 0)
		return -errno;
	int r = write_through(via, mark);
	int back = renameat2(AT_FDCWD, to, AT_FDCWD, from, flags) < 0 ? errno : 0;
	snprintf(note, cap, " (moved; writing through %s: %s; moving back: %s)", via,
		 r ? esc_errname(-r) : "ok", back ? esc_errname(back) : "ok");
	return r;
}

int main(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] != '/')
		esc_usage("esc_nested_ro TOP");
	top = argv[1];
	fprintf(stderr, "# uid %d gid %d\n", (int)getuid(), (int)getgid());
	fd = open(at("sub/ro/file.txt"), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		esc_usage("cannot open TOP/sub/ro/file.txt for reading");

	for (int w = 1; w <= 4; w++) {
		char how[256], note[512] = "";
		struct snap before, after;
		int r;
		/* mtime comes from a coarse clock: let it tick */
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
		take(&before);
		switch (w) {
		case 1:
			snprintf(how, sizeof how, "open(%s, O_WRONLY) and write", at("sub/ro/file.txt"));
			r = write_through(at("sub/ro/file.txt"), "w1\n");
			break;
		case 2:
			snprintf(how, sizeof how, "rename(%s, %s)", at("sub"), at("moved"));
			r = move_and_write(at("sub"), at("moved"), 0, at("moved/ro/file.txt"), "w2\n", note,
					   sizeof note);
			break;
		case 3:
			snprintf(how, sizeof how, "rename(%s, %s)", at("sub/ro"), at("sub/ro-moved"));
			r = move_and_write(at("sub/ro"), at("sub/ro-moved"), 0, at("sub/ro-moved/file.txt"),
					   "w3\n", note, sizeof note);
			break;
		default:
			snprintf(how, sizeof how, "renameat2(%s, %s, RENAME_EXCHANGE)", at("sub"), at("other"));
			if (mkdir(at("other"), 0755) < 0) {
				r = -errno;
				snprintf(how, sizeof how, "mkdir(%s) for RENAME_EXCHANGE", at("other"));
				break;
			}
			r = move_and_write(at("sub"), at("other"), RENAME_EXCHANGE, at("other/ro/file.txt"),
					   "w4\n", note, sizeof note);
			rmdir(at("other"));
			break;
		}
		take(&after);
		if (changed(&before, &after))
			esc_won("%s: the host file changed: \"%s\" -> \"%s\"%s", how, before.data, after.data, note);
		else if (r < 0)
			esc_held("%s: %s%s", how, esc_errname(-r), note);
		else
			esc_held("%s: returned 0 but the host file is unchanged%s", how, note);
	}
	close(fd);
	return esc_finish();
}
