#ifndef MOAT_TRACE_H
#define MOAT_TRACE_H

#include <sys/types.h>

struct sandbox;

/* Handle one wait status of a tracee: lifecycle events, exec decisions and
 * verification, signal delivery, group-stops, exits. */
void trace_status(struct sandbox *sb, pid_t pid, int status);

#endif
