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
struct net;

enum audit_level { AUDIT_DENIALS, AUDIT_SUPERVISED };

struct audit;

/* Open `path` for appending (created 0600).  NULL + errno. */
struct audit *audit_open(const char *path, enum audit_level level);
void audit_close(struct audit *a);
/* Would audit_call write a record for this verdict? */
bool audit_wants(const struct audit *a, const struct verdict *v);
/* Record a supervised call and its verdict (denials always). */
void audit_call(struct audit *a, const struct call *c, const struct verdict *v, int64_t result);
/* Record a decision taken at a ptrace stop (exec), outside any call. */
void audit_exec(struct audit *a, pid_t tid, pid_t tgid, const char *exe, const char *syscall,
		const char *path, const char *resolved, int err, const char *decision,
		const char *rule);
/* The same with the caller's stack (nstack frames of stack[], see
 * audit/stack.h). */
void audit_exec_stack(struct audit *a, pid_t tid, pid_t tgid, const char *exe, const char *syscall,
		      const char *path, const char *resolved, int err, const char *rule,
		      char (*stack)[160], int nstack);

/* Record a DNS question the stub resolver answered (net-stub/dns.c):
 * syscall "dns", the question in query/qtype, the asking process when
 * known (pid 0 otherwise). */
void audit_dns(struct audit *a, pid_t pid, pid_t tid, const char *exe, const struct call_net *cn,
	       const char *decision, const char *rule, char (*stack)[160], int nstack);
/* The network summary's destinations as a JSON array: for the run report
 * too. */
void audit_json_destinations(FILE *f, const struct net *n);
/* The run's network summary: one record, syscall "net-summary", written at
 * the end: the loopback in force and every destination tried. */
void audit_net_summary(struct audit *a, const struct net *n);

#endif
