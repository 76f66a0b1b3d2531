/* esc_mount_ro — make a read-only bind writable with mount(2).
 *
 * Attacks the sandbox's mount table (docs/filesystem.md "mount inside"):
 * the root inside may mount a tmpfs, bind a directory of the view and
 * remount: moat serves these itself, and a --ro-bind host directory is
 * read-only only because moat says so.  We bind DIR (read-only) at MNT,
 * remount that bind writable, remount DIR itself writable, and bind
 * PARENT — a writable bind whose subdirectory DIR is the read-only one —
 * at MNT, which would show DIR's host directory without the read-only
 * mount on it; after each, we try to write DIR's file through the new
 * place.  Natively (root, in the runner's own mount namespace)
 * DIR is writable and every way writes.  Under moat each must stay
 * read-only (EPERM from the remount, EROFS from the write); the host file
 * stays as it was (the runner compares).
 *
 * usage: esc_mount_ro DIR PARENT MNT
 *        (DIR = PARENT/d, DIR/f: "orig"; MNT: an empty directory)
 */
#include "esc.h"
#include <limits.h>
#include <sys/mount.h>

static void try_write(const char *how, const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/f", dir);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		esc_held("%s: open %s for writing: %s", how, path, esc_errname(errno));
		return;
	}
	ssize_t n = write(fd, "moat-esc", 8);
	close(fd);
	if (n == 8)
		esc_won("%s: wrote %s", how, path);
	else
		esc_held("%s: write %s: %s", how, path, esc_errname(errno));
}

int main(int argc, char **argv)
{
	if (argc != 4 || argv[1][0] != '/' || argv[2][0] != '/' || argv[3][0] != '/')
		esc_usage("esc_mount_ro /ABS/PARENT/d /ABS/PARENT /ABS/MNT");
	const char *dir = argv[1], *parent = argv[2], *mnt = argv[3];
	if (mount(dir, mnt, NULL, MS_BIND, NULL) < 0) {
		esc_held("bind %s at %s: %s", dir, mnt, esc_errname(errno));
	} else {
		try_write("the bind as made", mnt);
		if (mount(NULL, mnt, NULL, MS_REMOUNT | MS_BIND, NULL) < 0)
			esc_held("remount the bind writable: %s", esc_errname(errno));
		else
			try_write("the bind remounted writable", mnt);
		umount2(mnt, 0);
	}
	if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND, NULL) < 0)
		esc_held("remount %s writable: %s", dir, esc_errname(errno));
	else
		try_write("the read-only mount remounted writable", dir);
	if (mount(parent, mnt, NULL, MS_BIND, NULL) < 0) {
		esc_held("bind %s (over the read-only one) at %s: %s", parent, mnt, esc_errname(errno));
	} else {
		char below[PATH_MAX];
		snprintf(below, sizeof below, "%s/d", mnt);
		try_write("the writable parent bound elsewhere", below);
		umount2(mnt, 0);
	}
	return esc_finish();
}
