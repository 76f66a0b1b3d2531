/* esc_setcap_xattr — give a file of ours file capabilities (or any other
 * privileged extended attribute) by having moat's supervisor set it.
 *
 * Attacks rule 5 (the sandbox has no capabilities) through the file rules of
 * docs/filesystem.md "Permissions": while it serves the sandbox the
 * supervisor keeps only the capabilities its own mechanics need (SYS_PTRACE,
 * KILL, SETUID, SETGID), and extended attributes set through fds are limited
 * to the `user.` namespace.  fsetxattr is performed by the supervisor on a
 * copy of our fd; a supervisor that still held CAP_SETFCAP and CAP_SYS_ADMIN
 * would write `security.capability` (file capabilities: a set-uid-root in
 * all but name, for anyone who runs the file without NO_NEW_PRIVS) and
 * `trusted.*` to a host file for us.
 *
 * For each directory (a --bind of a host directory, and /tmp) and each way
 * (fsetxattr on an fd, setxattr by path) we create a fresh file and set
 *   - security.capability: CAP_SETUID, CAP_SETGID, CAP_DAC_OVERRIDE,
 *     permitted and effective (VFS_CAP_REVISION_2);
 *   - trusted.moat_esc.
 * The effect is judged on the file, not on the return value: fgetxattr is a
 * kernel call (moat passes it through), so reading security.capability back
 * through our fd shows what the host file holds.  trusted.* cannot be read
 * back without CAP_SYS_ADMIN, so under moat a set that "succeeded" is only
 * noted here; the runner then lists the host files' xattrs (the files in
 * BINDDIR are left for it) and fails the run if any but user.* appears.
 *
 * Each file is a one-line script, and the kernel never honours file
 * capabilities on a script: even a broken moat leaves nothing usable.
 *
 * Natively the runner runs us as root, and every way works.  Under moat
 * (BINDDIR = /b, TMPDIR = /tmp) they must fail with EPERM (fd) or ENOTSUP
 * (path): the answers the kernel itself gives a process without those
 * capabilities, emulated rather than denied, so no audit record is expected.
 *
 * usage: esc_setcap_xattr BINDDIR TMPDIR   (both writable by us; BINDDIR's
 *        files stay behind for the runner, TMPDIR's are removed)
 */
#include "esc.h"
#include <linux/capability.h>
#include <sys/xattr.h>

static struct vfs_cap_data caps(void)
{
	struct vfs_cap_data d;
	memset(&d, 0, sizeof d);
	d.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
	d.data[0].permitted = (1u << CAP_SETUID) | (1u << CAP_SETGID) | (1u << CAP_DAC_OVERRIDE);
	return d;
}

/* One way: create DIR/NAME, set ATTR on it (by fd or by path), and look. */
static void try_one(const char *dir, const char *name, const char *attr, int by_path, int keep)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (fd < 0) {
		esc_usage("cannot create a file in a directory that should be writable");
	}
	if (write(fd, "#!/bin/true\n", 12) != 12)
		esc_usage("cannot write our own file");

	struct vfs_cap_data d = caps();
	const void *value = strcmp(attr, "security.capability") == 0 ? (const void *)&d : "1";
	size_t size = value == (const void *)&d ? XATTR_CAPS_SZ_2 : 1;
	char how[4300];
	snprintf(how, sizeof how, "%s(%s, %s)", by_path ? "setxattr" : "fsetxattr", path, attr);

	int r = by_path ? setxattr(path, attr, value, size, 0) : fsetxattr(fd, attr, value, size, 0);
	int e = errno;

	char back[64];
	ssize_t n = fgetxattr(fd, attr, back, sizeof back);
	int ge = errno;
	if (n == (ssize_t)size && memcmp(back, value, size) == 0)
		esc_won("%s: the host file now holds %s", how, attr);
	else if (n >= 0)
		esc_won("%s: the host file now holds %s (%zd bytes, not ours)", how, attr, n);
	else if (r == 0)
		esc_held("%s: returned 0, but fgetxattr says %s (the runner checks the host file)", how,
			 esc_errname(ge));
	else
		esc_held("%s: %s", how, esc_errname(e));
	close(fd);
	if (!keep)
		unlink(path);
}

int main(int argc, char **argv)
{
	if (argc != 3 || argv[1][0] != '/' || argv[2][0] != '/')
		esc_usage("esc_setcap_xattr BINDDIR TMPDIR");
	fprintf(stderr, "# uid %d gid %d\n", (int)getuid(), (int)getgid());
	static const struct {
		const char *name, *attr;
		int by_path;
	} ways[] = {
		{ "cap-fd", "security.capability", 0 },
		{ "cap-path", "security.capability", 1 },
		{ "trusted-fd", "trusted.moat_esc", 0 },
		{ "trusted-path", "trusted.moat_esc", 1 },
	};
	for (int d = 1; d <= 2; d++)
		for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++)
			try_one(argv[d], ways[i].name, ways[i].attr, ways[i].by_path, d == 1);
	return esc_finish();
}
