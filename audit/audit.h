/* The audit log: one JSON object per line (docs/audit.md).
 *
 * audit/ records; it never decides.  The dispatcher calls audit_call for
 * every supervised call; what is written depends on the level. */
#ifndef MOAT_AUDIT_H
#define MOAT_AUDIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct call;
struct call_net;
struct verdict;

enum audit_level { AUDIT_DENIALS, AUDIT_SUPERVISED };

struct audit;

/* How much of the log one run may write (docs/audit.md "Size and rate"):
 * a sandbox in a denial loop must not fill the host's disk. */
struct audit_caps {
	uint64_t max_bytes; /* the run's records together; 0: no cap */
	double rate;        /* records a second, after a burst; 0: no limit */
	double burst;
};
#define AUDIT_MAX_BYTES_DEFAULT (64ULL << 20)
#define AUDIT_RATE_DEFAULT 100.0
#define AUDIT_BURST_PER_RATE 10.0 /* burst = 10 s of the rate */

/* The log on `fd` (opened for appending by outfile_open; owned from now
 * on, closed by audit_close, which says what was dropped).  NULL + errno. */
struct audit *audit_open(int fd, enum audit_level level, const struct audit_caps *caps);
void audit_close(struct audit *a);
/* Records written, dropped (past the cap or the rate) and bytes written. */
void audit_stats(const struct audit *a, uint64_t *records, uint64_t *dropped, uint64_t *bytes);
/* Is a record of this verdict to be written now?  Takes its place under
 * the rate limit: call audit_call for it exactly when this says true (and
 * only then spend time on a stack for it). */
bool audit_admit(struct audit *a, const struct verdict *v);
/* Write the record of a supervised call admitted by audit_admit. */
void audit_call(struct audit *a, const struct call *c, const struct verdict *v, int64_t result);
/* Record a decision taken outside any call: the check of a new image at
 * PTRACE_EVENT_EXEC, a kill by the filter itself.  (An exec refused at
 * its stop is a call: audit_call writes it.) */
void audit_exec(struct audit *a, pid_t tid, pid_t tgid, const char *exe, const char *syscall,
		const char *path, const char *resolved, int err, const char *decision,
		const char *rule);

/* Record a DNS question the stub resolver answered (net-stub/dns.c):
 * syscall "dns", the question in query/qtype, the asking process when
 * known (pid 0 otherwise). */
void audit_dns(struct audit *a, pid_t pid, pid_t tid, const char *exe, const struct call_net *cn,
	       const char *decision, const char *rule, char (*stack)[160], int nstack);
/* A summary record written at the end of the run: syscall `name`,
 * decision "summary", and the fields `fields` writes (`"key":value,...`,
 * no leading or trailing comma; net-stub's net_summary_fields). */
void audit_summary(struct audit *a, const char *name, void (*fields)(FILE *f, const void *ctx),
		   const void *ctx);

#endif
