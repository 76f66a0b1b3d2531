/* esc_uid0_dac_layer — as the root inside, read a host user's files through
 * the sandbox's own writable layer of them.
 *
 * Attacks the root inside's DAC override (docs/filesystem.md
 * "Permissions", fs-emulation/dac.c): moat does again, with root's
 * CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, what the kernel refused in the
 * sandbox's own layers — a tmpfs mount, an overlay's upper layer — for a
 * node owned by host root or a sandbox id.  An overlay's upper layer also
 * holds copies of host files made when the sandbox changes them, and a
 * copy keeps its host owner.  The runner shows a host directory at /o
 * under a writable overlay (--overlay) and runs us as the root inside: f
 * is a 0600 file of uid 1000, sub a 0700 directory of uid 1000 holding a
 * world-readable file.  We open f for writing (an overlay copies it up
 * first, then opens the copy), rename it within the layer and read it
 * there, make a name in sub (which copies sub up) and read sub/f.  Natively
 * we are root with every capability: each read succeeds.  Under moat the
 * copies are still uid 1000's: no override applies, EACCES everywhere (an
 * emulated error: no audit record).
 *
 * usage: ESC_TOKEN=... esc_uid0_dac_layer DIR
 *        (DIR/f: uid 1000, 0600; DIR/sub: uid 1000, 0700; DIR/sub/f: 0644)
 */
#include "esc.h"
#include <limits.h>

static void try_rdwr(const char *how, const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		esc_held("%s: open %s: %s", how, path, esc_errname(errno));
		return;
	}
	int r = esc_fd_has_token(fd);
	close(fd);
	if (r == 1)
		esc_won("%s: read the token through %s", how, path);
	else
		esc_held("%s: %s opened but is not the secret", how, path);
}

int main(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] != '/')
		esc_usage("esc_uid0_dac_layer /ABS/DIR");
	esc_token();
	char f[PATH_MAX], g[PATH_MAX], sub_new[PATH_MAX], sub_f[PATH_MAX];
	snprintf(f, sizeof f, "%s/f", argv[1]);
	snprintf(g, sizeof g, "%s/g", argv[1]);
	snprintf(sub_new, sizeof sub_new, "%s/sub/new", argv[1]);
	snprintf(sub_f, sizeof sub_f, "%s/sub/f", argv[1]);
	try_rdwr("open(0600 file of uid 1000, O_RDWR: its copy)", f);
	if (rename(f, g) < 0)
		esc_held("rename(%s, %s): %s", f, g, esc_errname(errno));
	else
		esc_try_open("open(the copy, renamed within the layer)", g);
	int fd = open(sub_new, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		esc_held("create in the 0700 dir of uid 1000: %s", esc_errname(errno));
	else
		close(fd);
	esc_try_open("open(file below the 0700 dir of uid 1000, its copy)", sub_f);
	return esc_finish();
}
