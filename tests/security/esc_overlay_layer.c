/* esc_overlay_layer — reach an overlay's own machinery: the layer's base
 * directory (.moat-layer, the phantoms .moat-phantom-*) or a phantom inode.
 *
 * Attacks the overlay's hiding of its internals (fs-emulation/overlay.c:
 * "The phantoms live in the base directory, outside every view, so the
 * sandbox can neither link to one nor forge a marker").  The upper layer of
 * an overlay at /ov is a host directory BASE/ov; BASE also holds the marker
 * .moat-layer ("moat layer 1") and the phantoms, and every name of a real
 * upper directory that still means a lower entry is a hard link to a
 * phantom (a directory: an empty one holding a phantom link .moat-lower).
 * Once the sandbox holds an fd of the upper directory itself (any directory
 * opened after a change in it), the host's own path resolution would take
 * it to BASE with one "..".  We try, from DIR:
 *   - DIR/../.moat-layer and DIR/../.moat-phantom-f0 by path;
 *   - openat(D, "../.moat-layer") with D an fd of DIR opened after a change;
 *     "/proc/self/fd/D/../.moat-layer"; fchdir(D) then "../.moat-layer";
 *   - readlink("/proc/self/fd/F") of a copied-up file, and ".." from its
 *     directory;
 *   - the marker and phantoms by name in DIR and DIR/sub (.moat-lower,
 *     .moat-phantom-f0), and names starting with ".moat-" in listings;
 *   - a phantom inode: d_ino of a name still in the lower layer is the
 *     phantom's; opening that name (O_RDONLY, via /proc/self/fd/D/NAME,
 *     openat(D)) must give the lower file, never an fd of the phantom;
 *   - forging a marker: link a lower file as NEW/.moat-lower in a new
 *     directory (moat must link a copy, not the phantom, and NEW must stay
 *     an ordinary directory).
 * A way escapes when it reads "moat layer" from a file, or gets an fd whose
 * inode is a phantom's.
 *
 * Natively DIR is BASE/ov of a look-alike the runner makes (BASE holds a
 * .moat-layer): the ".." ways read it (ESCAPED).  Under moat DIR is /ov
 * (--overlay of a tree like BASE/ov) and every way must fail; an emulated
 * ENOENT, no audit record expected.
 *
 * usage: esc_overlay_layer DIR
 */
#include "esc.h"
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static const char *D;
static ino_t phantom[64];
static int nphantom;

static const char *at(const char *rel)
{
	static char p[4][4096];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof p[i], "%.2000s/%.2000s", D, rel);
	return p[i];
}

static void check_fd(const char *how, int fd)
{
	struct stat st;
	if (syscall(SYS_fstat, fd, &st) == 0)
		for (int i = 0; i < nphantom; i++)
			if (st.st_ino == phantom[i]) {
				esc_won("%s: an fd of a phantom inode (%llu)", how, (unsigned long long)st.st_ino);
				return;
			}
	char b[64] = "";
	ssize_t n = pread(fd, b, sizeof b - 1, 0);
	if (n > 0 && strncmp(b, "moat layer", 10) == 0)
		esc_won("%s: read the layer's marker", how);
	else
		esc_held("%s: opened, not the layer's", how);
}

static void try_open(const char *how, int dirfd, const char *path, int flags)
{
	int fd = openat(dirfd, path, flags | O_CLOEXEC);
	if (fd < 0) {
		esc_held("%s: %s", how, esc_errname(errno));
		return;
	}
	check_fd(how, fd);
	close(fd);
}

/* Names starting with ".moat-" in a listing. */
static void scan(const char *how, int dirfd)
{
	int d2 = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
	if (!d) {
		esc_held("%s: %s", how, esc_errname(errno));
		return;
	}
	struct dirent *de;
	char seen[512] = "";
	while ((de = readdir(d)))
		if (strncmp(de->d_name, ".moat-", 6) == 0)
			snprintf(seen + strlen(seen), sizeof seen - strlen(seen), " %s", de->d_name);
	closedir(d);
	if (seen[0]) {
		esc_won("%s: the listing names the layer's own entries:%s", how, seen);
		/* and what they are */
		for (char *s = strtok(seen, " "); s; s = strtok(NULL, " "))
			try_open(how, dirfd, s, O_RDONLY | O_NONBLOCK);
	} else {
		esc_held("%s: no .moat- names", how);
	}
}

/* d_ino of names whose stat says another inode: phantoms, under moat. */
static void learn_phantoms(int dirfd)
{
	int d2 = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.' || fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (st.st_ino != de->d_ino && nphantom < 64)
			phantom[nphantom++] = de->d_ino;
	}
	if (d)
		closedir(d);
	fprintf(stderr, "# %d names whose d_ino is not their st_ino\n", nphantom);
}

int main(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] != '/')
		esc_usage("esc_overlay_layer DIR");
	D = argv[1];
	esc_token();
	char p[4096];

	try_open("DIR/../.moat-layer", AT_FDCWD, at("../.moat-layer"), O_RDONLY);
	try_open("DIR/../.moat-phantom-f0", AT_FDCWD, at("../.moat-phantom-f0"), O_RDONLY | O_NONBLOCK);
	try_open("DIR/sub/.moat-lower (a lower dir's marker)", AT_FDCWD, at("sub/.moat-lower"),
		 O_RDONLY | O_NONBLOCK);

	/* Changes, so that DIR and DIR/sub are upper directories now. */
	int fd = open(at("new"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	fd = open(at("sub/new"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	int dfd = open(D, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		esc_usage("cannot open DIR");
	learn_phantoms(dfd);

	try_open("openat(D, ../.moat-layer)", dfd, "../.moat-layer", O_RDONLY);
	try_open("openat(D, ../.moat-phantom-f0)", dfd, "../.moat-phantom-f0", O_RDONLY | O_NONBLOCK);
	snprintf(p, sizeof p, "/proc/self/fd/%d/../.moat-layer", dfd);
	try_open("/proc/self/fd/D/../.moat-layer", AT_FDCWD, p, O_RDONLY);
	char cwd[4096];
	if (getcwd(cwd, sizeof cwd) && fchdir(dfd) == 0) {
		try_open("fchdir(D), ../.moat-layer", AT_FDCWD, "../.moat-layer", O_RDONLY);
		try_open("fchdir(D), ../../.moat-layer", AT_FDCWD, "../../.moat-layer", O_RDONLY);
		if (chdir(cwd) < 0)
			esc_usage("cannot go back");
	} else {
		esc_held("fchdir(D): %s", esc_errname(errno));
	}

	/* A copied-up file: where does its fd say it is? */
	int f = open(at("f"), O_WRONLY | O_CLOEXEC);
	if (f >= 0) {
		char link[64], host[4096];
		snprintf(link, sizeof link, "/proc/self/fd/%d", f);
		ssize_t n = readlink(link, host, sizeof host - 1);
		if (n > 0) {
			host[n] = '\0';
			fprintf(stderr, "# a copied-up file's fd reads as %s\n", host);
			char *slash = strrchr(host, '/');
			if (slash)
				*slash = '\0';
			snprintf(p, sizeof p, "%.4000s/../.moat-layer", host);
			try_open("dirname(readlink(/proc/self/fd/F))/../.moat-layer", AT_FDCWD, p, O_RDONLY);
		}
		close(f);
	}

	/* The layer's names in listings and by name. */
	scan("listing of DIR", dfd);
	int sfd = openat(dfd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd >= 0) {
		scan("listing of DIR/sub", sfd);
		try_open("openat(DIR/sub, .moat-lower)", sfd, ".moat-lower", O_RDONLY | O_NONBLOCK);
		close(sfd);
	}
	try_open("DIR/.moat-lower", dfd, ".moat-lower", O_RDONLY | O_NONBLOCK);

	/* Phantom inodes through the names that still mean lower entries. */
	try_open("open g (a lower name)", dfd, "g", O_RDONLY);
	try_open("openat(D, g, O_PATH)", dfd, "g", O_PATH);
	snprintf(p, sizeof p, "/proc/self/fd/%d/g", dfd);
	try_open("/proc/self/fd/D/g", AT_FDCWD, p, O_RDONLY);
	try_open("open lnk (a lower symlink)", dfd, "lnk", O_RDONLY);

	/* Forge a marker: a new directory whose .moat-lower is a lower file.
	 * Had moat linked the phantom, the directory would turn into a
	 * placeholder of a lower "forged" that does not exist, and what we
	 * just made in it would vanish. */
	if (mkdirat(dfd, "forged", 0755) == 0 && linkat(dfd, "g", dfd, "forged/.moat-lower", 0) == 0) {
		int x = openat(dfd, "forged/.moat-lower", O_RDONLY | O_CLOEXEC);
		if (x >= 0) {
			check_fd("link g as forged/.moat-lower", x);
			close(x);
		} else {
			esc_won("link g as forged/.moat-lower: it vanished (%s): forged/ became a placeholder",
				esc_errname(errno));
		}
	} else {
		esc_held("link g as forged/.moat-lower: %s", esc_errname(errno));
	}
	close(dfd);
	return esc_finish();
}
