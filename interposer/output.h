/* The sandbox's stdout and stderr, when moat must see them: an output limit
 * (--output-limit: the two together; the rest is cut with a marker and the
 * sandbox stopped, verdict OL) or --json (captured for the single JSON
 * object).  Otherwise fds 1 and 2 are moat's own, passed through untouched.
 * Relayed, the sandbox's fds 1 and 2 are pipes (isatty() is false). */
#ifndef MOAT_OUTPUT_H
#define MOAT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OUTPUT_CAPTURE_MAX (1u << 20) /* --json keeps at most this of each stream */

struct output {
	bool on;
	int rd[2];      /* read ends (stdout, stderr), -1 when closed */
	int wr[2];      /* write ends, for the first process (closed after fork) */
	bool capture;   /* --json */
	uint64_t limit; /* bytes of both together; 0: none */
	uint64_t total;
	bool cut;     /* the limit was reached */
	char *buf[2]; /* captured (capture) */
	size_t len[2];
	bool truncated[2]; /* capture cap or output limit */
};

struct sandbox;

/* Make the pipes when needed.  0 or -errno. */
int output_setup(struct output *o);
/* In the parent after fork: the write ends are the child's. */
void output_parent(struct output *o);
/* Data on stream `i` (0 stdout, 1 stderr): relay or keep it, count it,
 * cut past the limit (and stop the sandbox, OL). */
void output_read(struct sandbox *sb, int i);
/* The run is over: what is left in the pipes. */
void output_finish(struct sandbox *sb);

#endif
