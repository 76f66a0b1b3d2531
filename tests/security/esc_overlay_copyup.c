/* esc_overlay_copyup — make an overlay copy up a file we may not read into
 * a copy we may read.
 *
 * Attacks the overlay's copy-up (fs-emulation/overlay.c): when the sandbox
 * changes a lower-layer entry, moat copies it into the upper layer itself,
 * with its own (root's) powers when it has them, and keeps "contents, mode
 * without set-id bits, owner".  If the copy is less protected than the
 * original, or the copy is made before the change is known to be allowed,
 * a file the sandbox cannot read becomes one it can.  The runner shows a
 * directory of ours at DIR (--overlay) holding, each with the token, one
 * set of these per way below (.W: every way starts from entries that no
 * earlier way copied up):
 *   acl.W     another uid's, our group, 0640, with a POSIX ACL that denies
 *             our uid (user:US:---): the mode alone would let us read it;
 *   priv.W    another uid's, 0600;
 *   d_acl.W/  another uid's, our group, 0750, ACL user:US:---, holding
 *             tok.txt (0644) and a file named name-TOKEN;
 *   d_priv.W/ another uid's, 0700, holding tok.txt and name-TOKEN;
 *   mine.txt  ours, to exchange places with.
 * For each of them we try to read it plainly, then after asking for a change
 * that copies it up whether or not the change is allowed: chmod, chown,
 * utimensat (NULL and explicit), truncate, open O_WRONLY, setxattr(user.*),
 * rename, link, RENAME_EXCHANGE with mine.txt, and for the directories
 * rmdir and creating inside.  A way escapes when the token is read, or
 * (directories) a listing names name-TOKEN.
 *
 * Natively the runner runs us as root: the plain reads work (ESCAPED), as
 * for uid0_dac.  Under moat (uid 65534, or uid 0 without capabilities in
 * the uid-0 pass) every way must be held by host permissions: emulated
 * errors, no audit record expected.  The runner also checks that the host
 * directory did not change (ovl_cp_state).
 *
 * usage: esc_overlay_copyup DIR
 */
#include "esc.h"
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

static const char *D;

static const char *at(const char *rel)
{
	static char p[4][4096];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof p[i], "%.2000s/%.2000s", D, rel);
	return p[i];
}

/* 1: the token came out of `rel` (a file's contents, or for a directory
 * its tok.txt or a name in its listing); else -errno of the last try. */
static int leak(const char *rel, int isdir)
{
	if (!isdir) {
		int r = esc_open_at_has_token(AT_FDCWD, at(rel));
		return r == 1 ? 1 : r == 0 ? -EPERM : r;
	}
	char p[4096];
	snprintf(p, sizeof p, "%s/tok.txt", rel);
	int r = esc_open_at_has_token(AT_FDCWD, at(p));
	if (r == 1)
		return 1;
	DIR *d = opendir(at(rel));
	if (!d)
		return -errno;
	char want[256];
	snprintf(want, sizeof want, "name-%s", esc_token());
	struct dirent *de;
	int found = 0;
	while ((de = readdir(d)))
		found |= strcmp(de->d_name, want) == 0;
	closedir(d);
	return found ? 1 : r < 0 ? r : -EPERM;
}

static int rc(long r)
{
	return r < 0 ? -errno : 0;
}

/* Ask for a change of `rel` (way w); where it names the entry elsewhere,
 * *look says where to read it afterwards.  1 when w is past the last way. */
static int ask(int w, const char *rel, int isdir, const char **how, char *look, size_t cap)
{
	static char moved[256];
	struct timespec ts[2] = { { 1234567890, 0 }, { 1234567890, 0 } };
	snprintf(look, cap, "%s", rel);
	switch (w) {
	case 0: *how = "plain read"; return 0;
	case 1: *how = "chmod 0755"; return rc(chmod(at(rel), 0755));
	case 2: *how = "chown to us"; return rc(chown(at(rel), getuid(), getgid()));
	case 3: *how = "utimensat NULL"; return rc(utimensat(AT_FDCWD, at(rel), NULL, 0));
	case 4: *how = "utimensat 2009"; return rc(utimensat(AT_FDCWD, at(rel), ts, 0));
	case 5: *how = "truncate"; return isdir ? -EISDIR : rc(truncate(at(rel), 33));
	case 6: {
		*how = "open O_WRONLY";
		int fd = open(at(rel), (isdir ? O_RDONLY | O_DIRECTORY : O_WRONLY) | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? -errno : 0;
	}
	case 7: *how = "setxattr user.moat_esc"; return rc(setxattr(at(rel), "user.moat_esc", "1", 1, 0));
	case 8:
		*how = "rename";
		snprintf(moved, sizeof moved, "%s.moved", rel);
		if (rename(at(rel), at(moved)) < 0)
			return -errno;
		snprintf(look, cap, "%s", moved);
		return 0;
	case 9:
		*how = "link";
		snprintf(moved, sizeof moved, "%s.lnk", rel);
		if (link(at(rel), at(moved)) < 0)
			return -errno;
		snprintf(look, cap, "%s", moved);
		return 0;
	case 10:
		*how = "RENAME_EXCHANGE with mine.txt";
		if (syscall(SYS_renameat2, AT_FDCWD, at(rel), AT_FDCWD, at("mine.txt"), RENAME_EXCHANGE) < 0)
			return -errno;
		snprintf(look, cap, "mine.txt");
		return 0;
	case 11: *how = "rmdir"; return rc(rmdir(at(rel)));
	case 12: {
		*how = "create inside";
		char p[512];
		snprintf(p, sizeof p, "%s/new.txt", rel);
		int fd = open(at(p), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? -errno : 0;
	}
	}
	return 1;
}

/* Put a renamed or exchanged entry back, so the next way starts alike. */
static void undo(int w, const char *rel, const char *look)
{
	if (w == 8 || w == 9) {
		if (w == 8)
			rename(at(look), at(rel));
		else
			unlink(at(look));
	} else if (w == 10) {
		syscall(SYS_renameat2, AT_FDCWD, at(rel), AT_FDCWD, at("mine.txt"), RENAME_EXCHANGE);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] != '/')
		esc_usage("esc_overlay_copyup DIR");
	D = argv[1];
	esc_token();
	fprintf(stderr, "# uid %d gid %d\n", (int)getuid(), (int)getgid());
	static const struct {
		const char *rel;
		int isdir;
	} targets[] = { { "acl", 0 }, { "priv", 0 }, { "d_acl", 1 }, { "d_priv", 1 } };
	for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
		char heldlist[1024] = "";
		for (int w = 0;; w++) {
			const char *how = "";
			char rel[64], look[256];
			snprintf(rel, sizeof rel, "%s.%d", targets[t].rel, w);
			int r = ask(w, rel, targets[t].isdir, &how, look, sizeof look);
			if (r == 1)
				break;
			int l = leak(look, targets[t].isdir);
			if (l == 1) {
				esc_won("%s: %s (%s), then %s gave the token", rel, how, r ? esc_errname(-r) : "0",
					look);
			} else {
				size_t n = strlen(heldlist);
				snprintf(heldlist + n, sizeof heldlist - n, "%s%s=%s/%s", n ? ", " : "", how,
					 r ? esc_errname(-r) : "0", esc_errname(-l));
			}
			if (r == 0)
				undo(w, rel, look);
		}
		if (heldlist[0])
			esc_held("%s.W: [way=answer/read] %s", targets[t].rel, heldlist);
	}
	return esc_finish();
}
