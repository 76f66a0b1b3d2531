/* esc_setid_file — leave a set-uid or set-gid file on the host.
 *
 * Attacks moat's rule that no set-id bit ever lands on a host file: a file
 * the sandbox writes lives in the scratch directory or a --bind, and a host
 * user who found a set-uid copy could run it as its owner (root, when the
 * sandbox runs as uid 0).  We create a file in DIR and ask for the bits
 * every way there is: open(O_CREAT, 06755), chmod, fchmod, fchmodat, mknod.
 * Natively they stick (ESCAPED).  Under moat stat must never show them;
 * the bits are dropped silently (an emulated answer: no audit record).
 *
 * usage: esc_setid_file DIR
 */
#include "esc.h"
#include <sys/stat.h>
#include <sys/syscall.h>

static void check(const char *how, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		esc_held("%s: stat: %s", how, esc_errname(errno));
	else if (st.st_mode & (S_ISUID | S_ISGID))
		esc_won("%s left mode %04o on %s", how, st.st_mode & 07777, path);
	else
		esc_held("%s: mode %04o", how, st.st_mode & 07777);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		esc_usage("esc_setid_file DIR");
	char p[4][512];
	for (int i = 0; i < 4; i++)
		snprintf(p[i], sizeof p[i], "%s/esc-setid-%d-%d", argv[1], (int)getpid(), i);
	int fd = open(p[0], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 06755);
	if (fd >= 0) {
		check("open(O_CREAT, 06755)", p[0]);
		if (fchmod(fd, 06755) == 0)
			check("fchmod 06755", p[0]);
		close(fd);
	}
	fd = open(p[1], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0755);
	if (fd >= 0)
		close(fd);
	if (chmod(p[1], 04755) == 0)
		check("chmod 04755", p[1]);
	if (fchmodat(AT_FDCWD, p[1], 02755, 0) == 0)
		check("fchmodat 02755", p[1]);
	if (mknod(p[2], S_IFREG | 06755, 0) == 0)
		check("mknod 06755", p[2]);
	for (int i = 0; i < 4; i++)
		unlink(p[i]);
	return esc_finish();
}
