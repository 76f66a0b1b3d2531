/* esc_dirfd_swap — put a host directory on the number of a dirfd moat has
 * already resolved, and use it as the dirfd.
 *
 * Attacks what moat remembers about directories (fs-emulation/fs.c,
 * docs/security.md "Facts about directories"): where a dirfd's directory
 * is, kept so that resolving it again needs no readlink of
 * /proc/TID/fd/N.  A memory keyed by the fd number would resolve whatever
 * the number holds now to the place it once named; one filled while a
 * sibling thread swaps the number would pair one directory with another's
 * path.  The runner gives us, as stdin, the host directory holding the
 * secret (outside the view: it means nothing to moat).  We
 *   1. open "/" and, from it, "tmp": a granted dirfd; then use it, so that
 *      whatever moat keeps for it is kept;
 *   2. dup2 stdin onto its number, and openat(dirfd, "secret");
 *   3. race: a thread swaps the number between the /tmp directory and
 *      stdin while we openat(dirfd, "secret"), ROUNDS times;
 *   4. with the number held still on stdin, openat(dirfd, "secret") once
 *      more: something kept during the race would answer now.
 * Natively each open from the host directory reads the token (ESCAPED).
 * Under moat the host directory means nothing: EACCES, audited
 * (`fs.unknown-dirfd`), every time; from /tmp, "secret" is not there.
 *
 * usage: esc_dirfd_swap < DIR   (DIR holds the secret file "secret")
 */
#include "esc.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#define ROUNDS 20000

static atomic_int stop;
static int num, tmpdir;

static void *swapper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		dup2(0, num);
		dup2(tmpdir, num);
	}
	return NULL;
}

/* One open of "secret" from dirfd `num`: 1 when it read the token. */
static int try_secret(int *err)
{
	int r = esc_open_at_has_token(num, "secret");
	if (r < 0)
		*err = -r;
	return r == 1;
}

int main(void)
{
	esc_token();
	struct stat st;
	if (fstat(0, &st) < 0 || !S_ISDIR(st.st_mode))
		esc_usage("stdin must be the directory holding the secret");
	int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	tmpdir = root < 0 ? -1 : openat(root, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tmpdir < 0)
		esc_usage("cannot open /tmp");
	num = fcntl(tmpdir, F_DUPFD_CLOEXEC, 20);
	for (int i = 0; i < 8; i++)
		fstatat(num, "moat-esc-nothing-here", &st, AT_SYMLINK_NOFOLLOW);

	int err = 0;
	if (dup2(0, num) < 0)
		esc_usage("dup2 failed");
	if (try_secret(&err))
		esc_won("the host directory on a used dirfd's number: read the token");
	else
		esc_held("the host directory on a used dirfd's number: %s", esc_errname(err));

	atomic_store(&stop, 0);
	pthread_t t;
	if (pthread_create(&t, NULL, swapper, NULL) != 0)
		esc_usage("pthread_create failed");
	int won = 0, errs[2] = { 0, 0 };
	for (int i = 0; i < ROUNDS; i++) {
		err = 0;
		if (try_secret(&err))
			won++;
		else if (err == EACCES)
			errs[0]++;
		else
			errs[1]++;
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	if (won)
		esc_won("racing dup2: read the token %d times in %d", won, ROUNDS);
	else
		esc_held("racing dup2: %d EACCES, %d other errors in %d", errs[0], errs[1], ROUNDS);

	dup2(0, num);
	err = 0;
	if (try_secret(&err))
		esc_won("after the race, the host directory held still: read the token");
	else
		esc_held("after the race: %s", esc_errname(err));
	return esc_finish();
}
