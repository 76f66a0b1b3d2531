/* esc_aio_pool — take the host's AIO pool: io_setup draws from fs.aio-max-nr.
 *
 * io_setup(2) runs in the kernel under moat, and the events it reserves
 * come from one pool for the whole host (fs.aio-max-nr, in use:
 * fs.aio-nr): a sandbox that takes it all makes every host program that
 * uses Linux AIO (databases, qemu, fio) fail with EAGAIN.  We reserve
 * contexts of 1,024 events until we hold WANT events (the runner passes a
 * quarter of aio-max-nr, and only when half of the pool is free: we never
 * exhaust it), say "# ready", and the runner (poke) writes the host's
 * fs.aio-nr into DIR/nr-during (DIR: the runner's directory, bound
 * read-only at /r), next to DIR/nr-before and DIR/max.  Then we free them.
 *
 * ESCAPED when the host's aio-nr rose by a quarter of aio-max-nr or more
 * while we held our contexts: the host says so.  The fixed moat refuses
 * io_setup (as it refuses io_uring) or caps what a sandbox may reserve
 * well below that.  Natively the pool is the host's: ESCAPED.
 *
 * usage: esc_aio_pool DIR WANT
 */
#include "esc.h"
#include <linux/aio_abi.h>
#include <sys/syscall.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc != 3 || atol(argv[2]) <= 0 || atol(argv[2]) > 1L << 20)
		esc_usage("esc_aio_pool DIR WANT");
	const char *dir = argv[1];
	long want = atol(argv[2]), before = esc_read_num(dir, "nr-before"), max = esc_read_num(dir, "max");
	if (before == -2)
		esc_unsupported("the host's AIO pool is more than half in use: no room for this test");
	if (before < 0 || max <= 0)
		esc_usage("DIR/nr-before or DIR/max missing");
	static aio_context_t ctx[1024];
	int n = 0, err = 0;
	long held = 0;
	while (held < want && n < 1024) {
		ctx[n] = 0;
		if (syscall(SYS_io_setup, 1024, &ctx[n]) < 0) {
			err = errno;
			break;
		}
		held += 1024;
		n++;
	}
	fprintf(stderr, "# %d contexts of 1024 events%s%s\n# ready\n", n, err ? ", then " : "",
		err ? esc_errname(err) : "");
	long during = -1;
	for (int i = 0; i < 100 && during < 0; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		during = esc_read_num(dir, "nr-during");
	}
	for (int i = 0; i < n; i++)
		syscall(SYS_io_destroy, ctx[i]);
	if (during < 0)
		esc_usage("the runner never wrote DIR/nr-during");
	long rise = during - before;
	if (rise >= max / 4)
		esc_won("the host's fs.aio-nr rose by %ld (%ld -> %ld of %ld) while the sandbox held %d AIO contexts",
			rise, before, during, max, n);
	else
		esc_held("%d AIO contexts (then %s); the host's fs.aio-nr rose by %ld of %ld", n,
			 err ? esc_errname(err) : "the test's bound", rise, max);
	return esc_finish();
}
