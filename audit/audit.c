#include "audit/audit.h"

#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/json.h"
#include "core/call.h"
#include "core/hurry.h"
#include "core/task.h"
#include "syscall-table/decode.h"
#include "syscall-table/table.h"

struct audit {
	int fd;
	enum audit_level level;
	struct audit_caps caps;
	double tokens;           /* the rate limit's bucket */
	struct timespec last;    /* when it was last filled */
	uint64_t bytes, records; /* written in this run */
	uint64_t dropped;        /* records not written, in all */
	uint64_t unsaid;         /* dropped since the last audit-dropped record */
	struct timespec said;    /* when that record was written */
	bool full;               /* the size cap was reached */
	bool stuck;              /* a write blocked with an action due: given up */
};

struct audit *audit_open(int fd, enum audit_level level, const struct audit_caps *caps)
{
	struct audit *a = calloc(1, sizeof *a);
	if (!a) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	a->fd = fd;
	a->level = level;
	a->caps = *caps;
	a->tokens = caps->burst;
	clock_gettime(CLOCK_MONOTONIC, &a->last);
	return a;
}

void audit_stats(const struct audit *a, uint64_t *records, uint64_t *dropped, uint64_t *bytes)
{
	*records = a ? a->records : 0;
	*dropped = a ? a->dropped : 0;
	*bytes = a ? a->bytes : 0;
}

/* A record is built in memory, then written with one write(): it is either
 * all in the log or not at all, and its size is known before it goes. */
static FILE *rec_begin(char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	return open_memstream(buf, len);
}

/* A log that cannot be written loses lines, not the run.  A write that
 * blocks (a FIFO whose reader does not read) is interrupted by the
 * watchdog when the loop owes an action (a limit, a stop signal): the
 * log is then given up, said once on stderr, and the run ends as it
 * would have, by its own verdict and teardown. */
static bool write_all(struct audit *a, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(a->fd, p, n);
		if (w < 0 && errno == EINTR && hurry_now()) {
			a->stuck = true;
			fprintf(stderr, "moat: --audit-log: its reader does not read; the log ends "
					"here, the run goes on\n");
			return false;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return true; /* counted as written, as it always was */
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* End a record: written if it fits the size cap (closing lines, `last`,
 * always are: the net summary and what was dropped). */
static void rec_end(struct audit *a, FILE *m, char **bufp, size_t *len, bool last)
{
	int closed = fclose(m); /* sets *bufp and *len */
	char *buf = *bufp;
	if (closed != 0 || !buf) {
		free(buf);
		return;
	}
	if (a->stuck) {
		a->dropped++;
	} else if (!last && a->caps.max_bytes && a->bytes + *len > a->caps.max_bytes) {
		a->full = true;
		a->dropped++;
		a->unsaid++;
	} else if (write_all(a, buf, *len)) {
		a->bytes += *len;
		a->records++;
	} else {
		a->dropped++;
	}
	free(buf);
}

static void head(FILE *f, pid_t tid, pid_t tgid);

/* What was dropped since the last time it was said, as a record of its own
 * (docs/audit.md "Size and rate"). */
static void say_dropped(struct audit *a, bool last)
{
	if (!a->unsaid)
		return;
	/* One such record a second at most, and one at the end. */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!last && a->said.tv_sec && now.tv_sec - a->said.tv_sec < 1)
		return;
	a->said = now;
	char *buf;
	size_t len;
	FILE *f = rec_begin(&buf, &len);
	if (!f)
		return;
	uint64_t n = a->unsaid;
	head(f, 0, 0);
	fprintf(f,
		",\"exe\":\"\",\"syscall\":\"audit-dropped\",\"dropped\":%llu,\"result\":0,"
		"\"decision\":\"summary\",\"rule\":\"%s\"}\n",
		(unsigned long long)n, a->full ? "audit.size-cap" : "audit.rate-limit");
	a->unsaid = 0;
	rec_end(a, f, &buf, &len, last || a->full);
}

/* May one more record be written now?  The rate limit is a token bucket
 * (caps.burst records at once, caps.rate a second after that); past the
 * size cap nothing is.  A record refused is counted, and said later. */
static bool admit(struct audit *a)
{
	if (a->full) {
		a->dropped++;
		a->unsaid++;
		return false;
	}
	if (a->caps.rate > 0) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		double dt = (double)(now.tv_sec - a->last.tv_sec) +
			    (double)(now.tv_nsec - a->last.tv_nsec) / 1e9;
		a->last = now;
		a->tokens += dt * a->caps.rate;
		if (a->tokens > a->caps.burst)
			a->tokens = a->caps.burst;
		if (a->tokens < 1) {
			a->dropped++;
			a->unsaid++;
			return false;
		}
		a->tokens -= 1;
	}
	say_dropped(a, false);
	return true;
}

void audit_close(struct audit *a)
{
	if (!a)
		return;
	say_dropped(a, true);
	close(a->fd);
	free(a);
}

static void head(FILE *f, pid_t tid, pid_t tgid)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char when[40];
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "{\"time\":\"%s.%06ldZ\",\"pid\":%d,\"tid\":%d", when, ts.tv_nsec / 1000, tgid,
		tid);
	char path[64], comm[64] = "";
	snprintf(path, sizeof path, "/proc/%d/comm", tid);
	/* Only a task of the sandbox's: a tid no task has (gone, or never
	 * one) may name a host process by now. */
	FILE *cf = task_is(tgid, tid) ? fopen(path, "re") : NULL;
	if (cf) {
		if (fgets(comm, sizeof comm, cf))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(cf);
	}
	json_field(f, "comm", comm);
}

static const char *decision_of(const struct verdict *v)
{
	switch (v->kind) {
	case V_DENY: return "deny";
	case V_KILL: return "kill";
	case V_CONTINUE: return "allow";
	default: return "emulate";
	}
}

static void stack_field(FILE *f, char (*stack)[160], int n)
{
	if (n <= 0)
		return;
	fputs(",\"stack\":[", f);
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_str(f, stack[i]);
	}
	fputc(']', f);
}

/* The destination fields of a network decision. */
static void net_fields(FILE *f, const struct call_net *cn)
{
	if (!cn->family)
		return;
	fputs(",\"family\":", f);
	json_str(f, cn->family == AF_INET6 ? "AF_INET6" : "AF_INET");
	fputs(",\"address\":", f);
	json_str(f, cn->address);
	fprintf(f, ",\"port\":%d", cn->port);
	if (cn->host[0])
		json_field(f, "host", cn->host);
	if (cn->query[0]) {
		json_field(f, "query", cn->query);
		fputs(",\"qtype\":", f);
		json_str(f, cn->qtype);
	}
}

/* "nr" and the decoded "args" of a notified call. */
static void args_fields(FILE *f, const struct call *c)
{
	fprintf(f, ",\"nr\":%d,\"args\":[", c->nr);
	int slot = 0;
	for (int i = 0; i < 6; i++) {
		unsigned kind = c->ent ? c->ent->arg[i] : (i < 6 ? A_HEX : A_NONE);
		if (kind == A_NONE)
			break;
		if (i)
			fputc(',', f);
		char arg[PATH_MAX + 64];
		if ((kind == A_PATH) && slot < c->npath) {
			json_str(f, c->path[slot++]);
			continue;
		}
		sc_decode_arg(arg, sizeof arg, kind, c->arg[i]);
		json_str(f, arg);
	}
	fputc(']', f);
}

bool audit_admit(struct audit *a, const struct verdict *v)
{
	if (!a ||
	    !(v->kind == V_DENY || v->kind == V_KILL || v->record || a->level != AUDIT_DENIALS))
		return false;
	return admit(a);
}

void audit_call(struct audit *a, const struct call *c, const struct verdict *v, int64_t result)
{
	char *buf;
	size_t len;
	FILE *f = rec_begin(&buf, &len);
	if (!f)
		return;
	pid_t tgid = c->task && c->task->proc ? c->task->proc->tgid : c->tid;
	head(f, c->tid, tgid);
	json_field(f, "exe", c->task && c->task->proc ? c->task->proc->exe : "");
	fputs(",\"syscall\":", f);
	json_str(f, c->ent && c->ent->name ? c->ent->name : "unknown");
	/* An exec, decided at its ptrace stop, has its record in the shape
	 * docs/audit.md gives it: the path, no number and no arguments. */
	if (!c->stopped)
		args_fields(f, c);
	if (c->npath > 0) {
		json_field(f, "path", c->path[0]);
		if (c->resolved[0][0])
			json_field(f, "resolved", c->resolved[0]);
	}
	if (c->npath > 1) {
		json_field(f, "path2", c->path[1]);
		if (c->resolved[1][0])
			json_field(f, "resolved2", c->resolved[1]);
	}
	if (c->detail[0])
		json_field(f, "detail", c->detail);
	net_fields(f, &c->dest);
	stack_field(f, (char(*)[160])c->stack, c->nstack);
	fprintf(f, ",\"result\":%lld", (long long)result);
	if (result < 0) {
		const char *en = sc_errno_name((int)-result);
		fputs(",\"errno\":", f);
		json_str(f, en ? en : "?");
	}
	fprintf(f, ",\"decision\":\"%s\"", decision_of(v));
	if (v->rule) {
		fputs(",\"rule\":", f);
		json_str(f, v->rule);
	}
	fputs("}\n", f);
	rec_end(a, f, &buf, &len, false);
}

void audit_exec(struct audit *a, pid_t tid, pid_t tgid, const char *exe, const char *syscall,
		const char *path, const char *resolved, int err, const char *decision,
		const char *rule)
{
	char *buf;
	size_t len;
	FILE *f;
	if (!a || !admit(a) || !(f = rec_begin(&buf, &len)))
		return;
	head(f, tid, tgid);
	json_field(f, "exe", exe ? exe : "");
	fputs(",\"syscall\":", f);
	json_str(f, syscall);
	json_field(f, "path", path ? path : "");
	if (resolved && resolved[0])
		json_field(f, "resolved", resolved);
	fprintf(f, ",\"result\":%d", -err);
	if (err) {
		const char *en = sc_errno_name(err);
		fputs(",\"errno\":", f);
		json_str(f, en ? en : "?");
	}
	fprintf(f, ",\"decision\":\"%s\",\"rule\":", decision);
	json_str(f, rule);
	fputs("}\n", f);
	rec_end(a, f, &buf, &len, false);
}

void audit_dns(struct audit *a, pid_t pid, pid_t tid, const char *exe, const struct call_net *cn,
	       const char *decision, const char *rule, char (*stack)[160], int nstack)
{
	char *buf;
	size_t len;
	FILE *f;
	if (!admit(a) || !(f = rec_begin(&buf, &len)))
		return;
	head(f, tid, pid);
	json_field(f, "exe", exe ? exe : "");
	fputs(",\"syscall\":\"dns\"", f);
	net_fields(f, cn);
	stack_field(f, stack, nstack);
	bool refused = strcmp(decision, "deny") == 0;
	fprintf(f, ",\"result\":%d", refused ? -ECONNREFUSED : 0);
	if (refused)
		fputs(",\"errno\":\"ECONNREFUSED\"", f);
	fprintf(f, ",\"decision\":\"%s\",\"rule\":", decision);
	json_str(f, rule);
	fputs("}\n", f);
	rec_end(a, f, &buf, &len, false);
}

void audit_summary(struct audit *a, const char *name, void (*fields)(FILE *f, const void *ctx),
		   const void *ctx)
{
	char *buf;
	size_t len;
	FILE *f = rec_begin(&buf, &len);
	if (!f)
		return;
	say_dropped(a, true);
	head(f, 0, 0);
	fputs(",\"exe\":\"\",\"syscall\":", f);
	json_str(f, name);
	fputc(',', f);
	fields(f, ctx);
	fprintf(f, ",\"result\":0,\"decision\":\"summary\"}\n");
	rec_end(a, f, &buf, &len, true);
}
