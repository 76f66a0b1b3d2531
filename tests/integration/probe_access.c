/* probe_access — access, faccessat, faccessat2 (the caller is not root). */
#include "probe.h"

#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif

static long acc(const char *p, int m) { return syscall(SYS_access, p, m); }
static long fa(int d, const char *p, int m) { return syscall(SYS_faccessat, d, p, m); }
static long fa2(int d, const char *p, int m, int fl) { return syscall(SYS_faccessat2, d, p, m, fl); }

int main(void)
{
	probe_init();

	ok("mkfile f", mkfile("f", "data"));
	ok("mkfile f0", mkfile("f0", "data"));
	ok("chmod f0 0", chmod("f0", 0));
	ok("mkfile fx", mkfile("fx", "#!/bin/sh\n"));
	ok("chmod fx 0755", chmod("fx", 0755));
	ok("mkfile fw", mkfile("fw", ""));
	ok("chmod fw 0200", chmod("fw", 0200));
	ok("mkdir d", mkdir("d", 0755));
	ok("mkfile d/inner", mkfile("d/inner", "x"));
	ok("mkdir dn", mkdir("dn", 0755));
	ok("mkfile dn/inner", mkfile("dn/inner", "x"));
	ok("chmod dn 0600", chmod("dn", 0600));
	ok("symlink f0 l0", symlink("f0", "l0"));
	ok("symlink nowhere dang", symlink("nowhere", "dang"));

	/* access */
	ok("access f F_OK", acc("f", F_OK));
	ok("access f R_OK", acc("f", R_OK));
	ok("access f W_OK", acc("f", W_OK));
	ok("access f X_OK", acc("f", X_OK));
	ok("access f R_OK|W_OK", acc("f", R_OK | W_OK));
	ok("access f R_OK|X_OK", acc("f", R_OK | X_OK));
	ok("access f0 F_OK", acc("f0", F_OK));
	ok("access f0 R_OK", acc("f0", R_OK));
	ok("access f0 W_OK", acc("f0", W_OK));
	ok("access fx X_OK", acc("fx", X_OK));
	ok("access fw W_OK", acc("fw", W_OK));
	ok("access fw R_OK", acc("fw", R_OK));
	ok("access d X_OK", acc("d", X_OK));
	ok("access d W_OK", acc("d", W_OK));
	ok("access d/inner R_OK", acc("d/inner", R_OK));
	ok("access dn R_OK", acc("dn", R_OK));
	ok("access dn X_OK", acc("dn", X_OK));
	ok("access dn/inner F_OK", acc("dn/inner", F_OK));
	ok("access l0 R_OK (follows)", acc("l0", R_OK));
	ok("access dang F_OK", acc("dang", F_OK));
	ok("access missing F_OK", acc("missing", F_OK));
	ok("access f/x F_OK", acc("f/x", F_OK));
	ok("access \"\" F_OK", acc("", F_OK));
	ok("access f mode 8", acc("f", 8));

	/* faccessat */
	int dfd = okfd("open d O_DIRECTORY", open("d", O_RDONLY | O_DIRECTORY));
	int ffd = okfd("open f O_RDONLY", open("f", O_RDONLY));
	ok("faccessat (dfd) inner R_OK", fa(dfd, "inner", R_OK));
	ok("faccessat (dfd) ../f0 R_OK", fa(dfd, "../f0", R_OK));
	ok("faccessat (dfd) missing", fa(dfd, "missing", F_OK));
	ok("faccessat AT_FDCWD d/inner W_OK", fa(AT_FDCWD, "d/inner", W_OK));
	ok("faccessat (ffd) x", fa(ffd, "x", F_OK));
	ok("faccessat closed fd", fa(999, "x", F_OK));

	/* faccessat2 */
	ok("faccessat2 dang F_OK", fa2(AT_FDCWD, "dang", F_OK, 0));
	ok("faccessat2 dang F_OK NOFOLLOW", fa2(AT_FDCWD, "dang", F_OK, AT_SYMLINK_NOFOLLOW));
	ok("faccessat2 l0 R_OK NOFOLLOW", fa2(AT_FDCWD, "l0", R_OK, AT_SYMLINK_NOFOLLOW));
	ok("faccessat2 f R_OK EACCESS", fa2(AT_FDCWD, "f", R_OK, AT_EACCESS));
	ok("faccessat2 f0 R_OK EACCESS", fa2(AT_FDCWD, "f0", R_OK, AT_EACCESS));
	ok("faccessat2 (dfd) inner W_OK", fa2(dfd, "inner", W_OK, 0));
	ok("faccessat2 ffd \"\" R_OK EMPTY_PATH", fa2(ffd, "", R_OK, AT_EMPTY_PATH));
	ok("faccessat2 ffd \"\" X_OK EMPTY_PATH", fa2(ffd, "", X_OK, AT_EMPTY_PATH));
	ok("faccessat2 dfd \"\" W_OK EMPTY_PATH", fa2(dfd, "", W_OK, AT_EMPTY_PATH));
	ok("faccessat2 ffd \"\" no EMPTY_PATH", fa2(ffd, "", R_OK, 0));
	ok("faccessat2 bad flag", fa2(AT_FDCWD, "f", F_OK, 0x40000000));
	ok("faccessat2 bad mode", fa2(AT_FDCWD, "f", 0x10, 0));

	ok("chmod dn 0755", chmod("dn", 0755));
	close(dfd);
	close(ffd);
	return probe_done();
}
