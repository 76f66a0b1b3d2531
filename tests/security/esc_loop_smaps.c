/* esc_loop_smaps — keep moat's loop busy generating /proc files.
 *
 * A moat-side attempt (run.sh: side=moat).  moat generates each synthetic
 * /proc file when it is opened, on its event loop.  /proc/self/smaps costs
 * the kernel a walk of every mapping and moat a pass over ~700 bytes per
 * mapping; the mappings are the sandbox's to make (up to vm.max_map_count,
 * 65,530: ~45 MiB of smaps, most of a second to make).  THREADS threads
 * open and close /proc/self/smaps as fast as moat answers: each open holds
 * the loop that long, and the next is already waiting.  Meanwhile our main
 * thread stats /tmp once a second and notes how long the answer took
 * ("# stat answered in ..." on stderr; not judged).
 *
 * Under moat we never end by ourselves: moat has --wall-time-limit 2 and
 * the runner requires it gone within 3 s (a moat that looks at its
 * deadline only between two generations overshoots by up to one per
 * waiting caller; measured 4.0 s for the old moat with 16 threads).  The
 * fixed moat ends the run on time however long a generation is: it bounds
 * the work of one (or does it off the loop) and checks the deadline
 * between any two.
 *
 * Natively (--native) the same threads run for half a second (the
 * kernel's smaps costs nothing to open): UNSUPPORTED.
 *
 * usage: esc_loop_smaps [--native] THREADS
 */
#include "esc.h"
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

static volatile int stop, go;

static void *spin(void *arg)
{
	(void)arg;
	while (!go)
		usleep(1000);
	while (!stop) {
		int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int i = 1, native = 0;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc != i + 1 || atoi(argv[i]) < 1 || atoi(argv[i]) > 64)
		esc_usage("esc_loop_smaps [--native] THREADS (1..64)");
	int threads = atoi(argv[i]);
	/* The threads first: their stacks are mappings too. */
	pthread_t t[64];
	for (int k = 0; k < threads; k++)
		if (pthread_create(&t[k], NULL, spin, NULL) != 0)
			esc_usage("pthread_create failed");
	long pg = sysconf(_SC_PAGESIZE), pages = 130000;
	char *m = mmap(NULL, (size_t)pages * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		esc_usage("mmap failed");
	long maps = 1;
	for (long p = 1; p < pages; p += 2) {
		if (mprotect(m + p * pg, pg, PROT_NONE) < 0)
			break; /* vm.max_map_count reached */
		maps += 2;
	}
	/* Room for what the rest of the run maps. */
	munmap(m, (size_t)200 * pg);
	char line[256];
	snprintf(line, sizeof line, "# %ld mappings; %d threads open /proc/self/smaps\n", maps, threads);
	if (write(2, line, strlen(line)) < 0)
		return 3;
	go = 1;
	double end = now() + 0.5;
	for (;;) {
		double t0 = now();
		struct stat st;
		stat("/tmp", &st);
		snprintf(line, sizeof line, "# stat answered in %.3f s\n", now() - t0);
		if (write(2, line, strlen(line)) < 0)
			return 3;
		if (native && now() > end)
			break;
		struct timespec ts = { native ? 0 : 1, native ? 100000000 : 0 };
		nanosleep(&ts, NULL);
	}
	stop = 1;
	for (int k = 0; k < threads; k++)
		pthread_join(t[k], NULL);
	esc_unsupported("moat-side: natively there is no loop to keep busy (%ld mappings, %d threads)", maps,
			threads);
}
