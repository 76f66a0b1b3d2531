/* esc_abs_path — open the secret by its absolute host path.
 *
 * Attacks the default view (docs/filesystem.md: nothing of the
 * host outside /usr /bin /sbin /lib /lib64 /etc) and rule 1: the path is
 * walked by the supervisor in the virtual namespace, where /var/tmp does not
 * exist, so the open must fail (ENOENT, audited as fs.outside-view).
 *
 * usage: ESC_TOKEN=... esc_abs_path /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);

	esc_try_open("open(abs)", secret);
	return esc_finish();
}
