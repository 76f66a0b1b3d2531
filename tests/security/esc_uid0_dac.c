/* esc_uid0_dac — as uid 0 inside the sandbox, read host files that only
 * root's capabilities could read: a file of uid 1000 with mode 0600, and a
 * world-readable file below a directory of uid 1000 with mode 0700.
 *
 * Attacks rule 5 (no capabilities, even for a sandbox run as uid 0) and the
 * permission model (docs/filesystem.md "Permissions": "permissions follow the sandbox's credentials":
 * the supervisor, root, acts with the sandbox's fsuid; for fsuid 0 the
 * kernel keeps CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, so moat must drop
 * them itself while it acts for the sandbox).  The runner binds the
 * directory read-only at /d and runs us with `--uid 0 --gid 0`.  Natively we
 * are root with every capability: both reads succeed.  Under moat both must
 * answer EACCES — host DAC, an emulated error rather than a policy denial,
 * so moat writes no audit record for it (docs/audit.md).
 *
 * usage: ESC_TOKEN=... esc_uid0_dac DIR/f DIR/sub/f
 *        (f: uid 1000, 0600; sub: uid 1000, 0700; sub/f: 0644)
 */
#include "esc.h"

int main(int argc, char **argv)
{
	if (argc != 3 || argv[1][0] != '/' || argv[2][0] != '/')
		esc_usage("esc_uid0_dac /ABS/f /ABS/sub/f");
	esc_token();
	fprintf(stderr, "# uid %d euid %d\n", (int)getuid(), (int)geteuid());
	esc_try_open("open(0600 file of uid 1000)", argv[1]);
	esc_try_open("open(file below a 0700 dir of uid 1000)", argv[2]);
	return esc_finish();
}
