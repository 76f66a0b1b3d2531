/* The run report an agent or a CI system reads (docs/limits.md): status,
 * exit, times, memory, processes, calls by class, limits, network. */
#ifndef MOAT_REPORT_H
#define MOAT_REPORT_H

#include <stdio.h>

struct sandbox;

/* Print the report of a finished run as one JSON line.  exit_status: the
 * first process's wait status; moat_exit: moat's own exit code. */
void report_print(FILE *f, const struct sandbox *sb, int exit_status, int moat_exit,
		  const char *version);
/* --json: stdout and stderr as captured (UTF-8 kept, other bytes U+FFFD;
 * each capped, OUTPUT_CAPTURE_MAX) and the report, as one object. */
void report_json(FILE *f, const struct sandbox *sb, int exit_status, int moat_exit,
		 const char *version);
/* The same into `path` (created 0644, truncated), or stderr for "-".
 * 0 or -errno. */
int report_write(const char *path, const struct sandbox *sb, int exit_status, int moat_exit,
		 const char *version);

#endif
