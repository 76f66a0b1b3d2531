/* A library named as libunwind's (libunwind-x86_64.so.8), planted by
 * esc_walker_libpath: loaded by a process outside the sandbox, it copies
 * the secret ($ESC_FAKE_SECRET) to $ESC_FAKE_OUT, where the sandbox can
 * read it.  Built by `make probes` as build/tests/security/esc_walker_lib.so. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void planted(void)
{
	const char *src = getenv("ESC_FAKE_SECRET"), *dst = getenv("ESC_FAKE_OUT");
	if (!src || !dst)
		return;
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[256];
	ssize_t n = read(in, buf, sizeof buf);
	if (out >= 0 && n > 0 && write(out, buf, (size_t)n) != n) {
		/* nothing more to do: no proof */
	}
	if (out >= 0)
		close(out);
	close(in);
}
