/* The run report an agent or a CI system reads (docs/limits.md): status,
 * exit, times, memory, processes, calls by class, limits, network. */
#ifndef MOAT_REPORT_H
#define MOAT_REPORT_H

#include <stdio.h>
#include <time.h>

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>

struct sandbox;
struct vfs;

/* A file the run created or changed, for the report's `files`. */
struct report_file {
	char path[PATH_MAX];
	uint64_t size;
	char xxh128[33]; /* hex; "" when not hashed (unreadable, or > 1 GiB) */
};
struct report_files {
	struct report_file *f;
	size_t n;
	unsigned omitted; /* files not listed: past REPORT_FILES_MAX, or a path too long */
	unsigned deep;    /* directories not walked: too deep (VFS_CHANGES_DEPTH) */
};
#define REPORT_FILES_MAX 1000

/* Collect the run's files from the view (before its teardown) into
 * report_files, which the report prints. */
extern struct report_files report_files;
void report_collect_files(struct report_files *out, const struct vfs *v, struct timespec since);

/* Print the report of a finished run as one JSON line.  exit_status: the
 * first process's wait status; moat_exit: moat's own exit code. */
void report_print(FILE *f, const struct sandbox *sb, int exit_status, int moat_exit,
		  const char *version);
/* --json: stdout and stderr as captured (UTF-8 kept, other bytes U+FFFD;
 * each capped, OUTPUT_CAPTURE_MAX) and the report, as one object. */
void report_json(FILE *f, const struct sandbox *sb, int exit_status, int moat_exit,
		 const char *version);
/* report_print's arguments, for a writer that takes a callback
 * (outfile_rewrite: the --report file). */
struct report_args {
	const struct sandbox *sb;
	int exit_status, moat_exit;
	const char *version;
};
void report_print_to(FILE *f, void *report_args);

#endif
