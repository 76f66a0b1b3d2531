/* probe_setown — fcntl F_SETOWN and F_SETOWN_EX on a pipe: to itself, to a
 * child, to its process group, to nobody; what F_GETOWN(_EX) then says, and
 * SIGIO delivered to the owner when the pipe becomes readable (O_ASYNC). */
#include "probe.h"
#include <signal.h>
#include <sys/wait.h>

static volatile sig_atomic_t sigios;

static void on_sigio(int sig)
{
	(void)sig;
	sigios++;
}

static void getown(const char *step, int fd, pid_t self, pid_t child)
{
	int o = fcntl(fd, F_GETOWN);
	const char *who = o == self ? "self" : o == child ? "child" : o == -getpgrp() ? "group" : o == 0 ? "none" : "other";
	printf("%s: %s\n", step, who);
}

int main(void)
{
	probe_init();
	int p[2];
	if (pipe(p) < 0)
		return 2;
	pid_t self = getpid();
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	ok("F_SETOWN self", fcntl(p[0], F_SETOWN, self));
	getown("F_GETOWN", p[0], self, child);
	ok("F_SETOWN child", fcntl(p[0], F_SETOWN, child));
	getown("F_GETOWN", p[0], self, child);
	ok("F_SETOWN group", fcntl(p[0], F_SETOWN, -getpgrp()));
	getown("F_GETOWN", p[0], self, child);
	ok("F_SETOWN 0", fcntl(p[0], F_SETOWN, 0));
	getown("F_GETOWN", p[0], self, child);
	struct f_owner_ex ex = { F_OWNER_TID, gettid() };
	ok("F_SETOWN_EX tid", fcntl(p[0], F_SETOWN_EX, &ex));
	memset(&ex, 0, sizeof ex);
	ok("F_GETOWN_EX", fcntl(p[0], F_GETOWN_EX, &ex));
	printf("owner: type %d %s\n", ex.type, ex.pid == gettid() ? "self" : "other");
	/* SIGIO to the owner when data arrives */
	signal(SIGIO, on_sigio);
	ok("F_SETOWN self again", fcntl(p[0], F_SETOWN, self));
	ok("O_ASYNC", fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_ASYNC));
	ok("write", write(p[1], "x", 1));
	for (int i = 0; i < 100 && !sigios; i++)
		usleep(10000);
	printf("SIGIO: %s\n", sigios ? "delivered" : "none");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}
