/* The sandbox's stdout and stderr, relayed or captured (output.h). */
#include "interposer/output.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interposer/limits.h"
#include "interposer/sandbox.h"
#include "interposer/watchdog.h"

int output_setup(struct output *o)
{
	o->rd[0] = o->rd[1] = o->wr[0] = o->wr[1] = -1;
	if (!o->on)
		return 0;
	for (int i = 0; i < 2; i++) {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0)
			return -errno;
		o->rd[i] = p[0];
		o->wr[i] = p[1];
		fcntl(p[0], F_SETFL, O_NONBLOCK);
	}
	return 0;
}

void output_parent(struct output *o)
{
	for (int i = 0; i < 2; i++)
		if (o->wr[i] >= 0) {
			close(o->wr[i]);
			o->wr[i] = -1;
		}
}

static void emit(struct sandbox *sb, int i, const char *data, size_t n)
{
	struct output *o = &sb->out;
	if (!o->capture) {
		/* To moat's own stdout/stderr, whole: a slow reader slows the
		 * relay, as a pipe would slow the program.  Waiting in steps,
		 * with the limits still ticking: a reader that never reads must
		 * not keep a wall-time limit from firing; once the sandbox is
		 * being stopped, what cannot be written is dropped. */
		while (n) {
			struct pollfd pf = { i + 1, POLLOUT, 0 };
			watchdog_idle(); /* a wait, like the loop's own poll */
			int ready = poll(&pf, 1, 100);
			watchdog_busy();
			if (ready == 0) {
				limits_tick(sb);
				if (sb->res.stopping)
					return;
				continue;
			}
			/* POLLOUT on a pipe promises room for PIPE_BUF bytes, not
			 * more: a larger write could wait for the reader. */
			ssize_t w = write(i + 1, data, n < PIPE_BUF ? n : PIPE_BUF);
			if (w < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (w <= 0)
				return; /* nobody reads moat's output: dropped */
			data += w;
			n -= (size_t)w;
		}
		return;
	}
	size_t room = OUTPUT_CAPTURE_MAX - o->len[i];
	if (n > room) {
		n = room;
		o->truncated[i] = true;
	}
	if (!n)
		return;
	char *b = realloc(o->buf[i], o->len[i] + n + 1);
	if (!b) {
		o->truncated[i] = true;
		return;
	}
	memcpy(b + o->len[i], data, n);
	o->len[i] += n;
	b[o->len[i]] = '\0';
	o->buf[i] = b;
}

/* One read of stream i: > 0 bytes read, 0 nothing now, -1 closed. */
static int read_some(struct sandbox *sb, int i)
{
	struct output *o = &sb->out;
	char buf[65536];
	if (o->rd[i] < 0)
		return -1;
	ssize_t n = read(o->rd[i], buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		close(o->rd[i]);
		o->rd[i] = -1;
		return -1;
	}
	if (o->cut)
		return 1; /* drained, not kept: the program is being stopped */
	size_t keep = (size_t)n;
	if (o->limit && o->total + keep > o->limit) {
		keep = (size_t)(o->limit - o->total);
		o->cut = true;
		o->truncated[i] = true;
	}
	o->total += keep;
	emit(sb, i, buf, keep);
	if (o->cut) {
		char marker[128];
		int m = snprintf(marker, sizeof marker,
				 "\n[moat: output limit of %llu bytes reached; the rest was cut]\n",
				 (unsigned long long)o->limit);
		emit(sb, i, marker, (size_t)m);
		char msg[128];
		snprintf(msg, sizeof msg, "output limit of %llu bytes (stdout and stderr) exceeded",
			 (unsigned long long)o->limit);
		limits_stop(sb, "OL", "output", msg, false);
	}
	return 1;
}

void output_read(struct sandbox *sb, int i)
{
	/* A bounded share of the loop: other work waits otherwise. */
	for (int rounds = 0; rounds < 16 && read_some(sb, i) > 0; rounds++)
		;
}

void output_finish(struct sandbox *sb)
{
	struct output *o = &sb->out;
	for (int i = 0; i < 2; i++) {
		/* Every sandbox process is gone: what the pipe holds is all
		 * there is; then it is closed. */
		while (read_some(sb, i) > 0)
			;
		if (o->rd[i] >= 0) {
			close(o->rd[i]);
			o->rd[i] = -1;
		}
	}
}
