/* esc_race_open — the time-of-check/time-of-use race on a path: one thread
 * opens the path in a shared buffer over and over, another flips that buffer
 * between an allowed file (/tmp/esc_race_ok.PID) and the secret, for ~1 s.
 *
 * Attacks rules 1 and 2: a supervisor that reads the path, decides, and then
 * lets the kernel (CONTINUE) read the path again opens whatever the buffer
 * holds by then.  moat copies the path once and opens it itself, so every
 * open sees either the allowed file or a denied path, never the secret.
 * Natively every open of the secret succeeds, which proves the loop runs.
 *
 * usage: ESC_TOKEN=... esc_race_open /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"
#include <pthread.h>
#include <time.h>

static char shared[4096];
static char ok_path[256], secret_path[4096];
static volatile int stop;

static void *flip(void *unused)
{
	size_t ok_len = strlen(ok_path) + 1, sec_len = strlen(secret_path) + 1;
	while (!stop) {
		memcpy(shared, secret_path, sec_len);
		__asm__ volatile("" ::: "memory");
		memcpy(shared, ok_path, ok_len);
		__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	snprintf(secret_path, sizeof secret_path, "%s", esc_secret_arg(argc, argv));
	snprintf(ok_path, sizeof ok_path, "/tmp/esc_race_ok.%d", (int)getpid());
	int fd = open(ok_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "ok\n", 3) != 3)
		esc_usage("cannot create the allowed file in /tmp");
	close(fd);
	memcpy(shared, ok_path, strlen(ok_path) + 1);

	pthread_t t;
	if (pthread_create(&t, NULL, flip, NULL) != 0)
		esc_usage("pthread_create failed");

	long opens = 0, ok = 0, failed = 0, wins = 0;
	double end = now() + 1.0;
	while (now() < end) {
		int f = open(shared, O_RDONLY | O_CLOEXEC);
		opens++;
		if (f < 0) {
			failed++;
			continue;
		}
		if (esc_fd_has_token(f))
			wins++;
		else
			ok++;
		close(f);
	}
	stop = 1;
	pthread_join(t, NULL);
	unlink(ok_path);

	fprintf(stderr, "# %ld opens: %ld the allowed file, %ld the secret, %ld failed\n", opens, ok, wins, failed);
	if (wins)
		esc_won("%ld of %ld racing opens read the token", wins, opens);
	else if (ok == 0)
		esc_held("no open succeeded at all (%ld tries) — the race never ran", opens);
	else
		esc_held("%ld racing opens: %ld the allowed file, %ld refused, none the secret", opens, ok, failed);
	return esc_finish();
}
