/* esc_sockaddr_swap — connect with a sockaddr that a second thread keeps
 * rewriting, between an allowed destination (127.0.0.1:ALLOWED, opened
 * with --allow-net) and a denied one (127.0.0.1:DENIED, a host server that
 * hands out the token).
 *
 * Attacks rule 1 and rule 2 in the network stub (docs/architecture.md: "allowed connects
 * are performed by the supervisor on the sandbox's socket"): a supervisor
 * that reads the address, finds it allowed, and then lets the kernel
 * connect (CONTINUE) — or reads it twice — connects wherever the address
 * points by then.  For 2 s: connect, and read what the server sends.
 * Natively nothing stands between us and either server (ESCAPED: the token
 * was read).  Under moat only copies of the address are decided and used:
 * the allowed port reaches the host's allowed server, the denied one the
 * sandbox's private loopback, where nothing listens (ECONNREFUSED,
 * recorded as net.private-loopback).  If the allowed server is never
 * reached the attempt proves nothing and says USAGE.
 *
 * usage: ESC_TOKEN=... esc_sockaddr_swap ALLOWED DENIED
 */
#include "esc.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>

static struct sockaddr_in target = {.sin_family = AF_INET};
static uint16_t ports[2];
static atomic_int stop;

static void *flipper(void *unused)
{
	(void)unused;
	volatile uint16_t *p = &target.sin_port;
	while (!atomic_load(&stop)) {
		*p = ports[0];
		*p = ports[1];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || atoi(argv[1]) <= 0 || atoi(argv[2]) <= 0)
		esc_usage("esc_sockaddr_swap ALLOWED DENIED");
	esc_token();
	ports[0] = htons((uint16_t)atoi(argv[1]));
	ports[1] = htons((uint16_t)atoi(argv[2]));
	target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	target.sin_port = ports[0];
	pthread_t t;
	if (pthread_create(&t, NULL, flipper, NULL) != 0)
		esc_usage("pthread_create failed");
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int allowed = 0, refused = 0, other = 0, won = 0;
	do {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0)
			break;
		if (connect(s, (struct sockaddr *)&target, sizeof target) == 0) {
			char buf[256];
			ssize_t n = esc_read_all(s, buf, sizeof buf);
			if (n > 0 && esc_is_token(buf, (size_t)n))
				won++;
			else
				allowed++;
		} else if (errno == ECONNREFUSED) {
			refused++;
		} else {
			other++;
		}
		close(s);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!won && (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < 2000);
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	if (won)
		esc_won("a connect reached the denied server and read the token "
			"(%d connects reached the allowed one before)", allowed);
	else if (!allowed)
		esc_usage("the allowed server was never reached: nothing was shown");
	else
		esc_held("%d connects reached the allowed server, %d were refused, %d failed otherwise; "
			 "none reached the denied one", allowed, refused, other);
	return esc_finish();
}
