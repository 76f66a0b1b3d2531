/* esc_etc_host — host data in the /etc the sandbox sees.
 *
 * The default view shows the host's /etc minus a list of secrets
 * (esc_etc_secrets).  What the list does not name is the host's: the
 * backups of its account files (/etc/passwd-, /etc/group-: every account
 * of the host, while /etc/passwd is moat's synthetic one), its identity
 * (/etc/machine-id, which D-Bus, systemd and telemetry use as the
 * machine's stable name; /etc/mailname), its layout (/etc/fstab), its
 * users' subordinate ids (/etc/subuid, /etc/subgid) and its
 * system-wide environment (/etc/environment).  The runner stages each
 * FILE holding the run's token through an overlay on /etc in the attempt's
 * mount namespace (etc_host_fixture), so what we find is the host's file
 * by construction.
 *
 * ESCAPED for each FILE that holds the token.  The fixed moat's /etc is an
 * allowlist: these are absent (ENOENT) or moat's own (machine-id: one of
 * the sandbox's); either way not the token.  Natively: the host's, ESCAPED.
 *
 * usage: esc_etc_host FILE...
 */
#include "esc.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		esc_usage("esc_etc_host FILE...");
	for (int i = 1; i < argc; i++)
		esc_try_open("the host's /etc", argv[i]);
	return esc_finish();
}
