#include "audit/audit.h"

#include <errno.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/json.h"
#include "interposer/call.h"
#include "interposer/task.h"
#include "net-stub/net.h"
#include "syscall-table/decode.h"
#include "syscall-table/table.h"

struct audit {
	FILE *f;
	enum audit_level level;
};

struct audit *audit_open(const char *path, enum audit_level level)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	struct audit *a = calloc(1, sizeof *a);
	if (!a || !(a->f = fdopen(fd, "a"))) {
		int e = errno;
		free(a);
		close(fd);
		errno = e;
		return NULL;
	}
	a->level = level;
	return a;
}

void audit_close(struct audit *a)
{
	if (!a)
		return;
	fclose(a->f);
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
	fprintf(f, "{\"time\":\"%s.%06ldZ\",\"pid\":%d,\"tid\":%d", when, ts.tv_nsec / 1000,
		tgid, tid);
	char path[64], comm[64] = "";
	snprintf(path, sizeof path, "/proc/%d/comm", tid);
	FILE *cf = fopen(path, "re");
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

bool audit_wants(const struct audit *a, const struct verdict *v)
{
	return a && (v->kind == V_DENY || v->kind == V_KILL || v->record || a->level != AUDIT_DENIALS);
}

void audit_call(struct audit *a, const struct call *c, const struct verdict *v, int64_t result)
{
	bool denial = v->kind == V_DENY || v->kind == V_KILL;
	if (!denial && !v->record && a->level == AUDIT_DENIALS)
		return;
	FILE *f = a->f;
	pid_t tgid = c->task && c->task->proc ? c->task->proc->tgid : c->tid;
	head(f, c->tid, tgid);
	json_field(f, "exe", c->task && c->task->proc ? c->task->proc->exe : "");
	fputs(",\"syscall\":", f);
	json_str(f, c->ent && c->ent->name ? c->ent->name : "unknown");
	fprintf(f, ",\"nr\":%d,\"args\":[", c->nr);
	int slot = 0;
	for (int i = 0; i < 6; i++) {
		unsigned kind = c->ent ? c->ent->arg[i] : (i < 6 ? A_HEX : A_NONE);
		if (kind == A_NONE)
			break;
		if (i)
			fputc(',', f);
		char buf[PATH_MAX + 64];
		if ((kind == A_PATH) && slot < c->npath) {
			json_str(f, c->path[slot++]);
			continue;
		}
		sc_decode_arg(buf, sizeof buf, kind, c->arg[i]);
		json_str(f, buf);
	}
	fputc(']', f);
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
	net_fields(f, &c->net);
	stack_field(f, (char (*)[160])c->stack, c->nstack);
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
	fflush(f);
}

static void exec_record(struct audit *a, pid_t tid, pid_t tgid, const char *exe, const char *syscall,
			const char *path, const char *resolved, int err, const char *decision,
			const char *rule, char (*stack)[160], int nstack)
{
	if (!a)
		return;
	FILE *f = a->f;
	head(f, tid, tgid);
	json_field(f, "exe", exe ? exe : "");
	fputs(",\"syscall\":", f);
	json_str(f, syscall);
	json_field(f, "path", path ? path : "");
	if (resolved && resolved[0])
		json_field(f, "resolved", resolved);
	stack_field(f, stack, nstack);
	fprintf(f, ",\"result\":%d", -err);
	if (err) {
		const char *en = sc_errno_name(err);
		fputs(",\"errno\":", f);
		json_str(f, en ? en : "?");
	}
	fprintf(f, ",\"decision\":\"%s\",\"rule\":", decision);
	json_str(f, rule);
	fputs("}\n", f);
	fflush(f);
}

void audit_exec(struct audit *a, pid_t tid, pid_t tgid, const char *exe, const char *syscall,
		const char *path, const char *resolved, int err, const char *decision,
		const char *rule)
{
	exec_record(a, tid, tgid, exe, syscall, path, resolved, err, decision, rule, NULL, 0);
}

void audit_exec_stack(struct audit *a, pid_t tid, pid_t tgid, const char *exe, const char *syscall,
		      const char *path, const char *resolved, int err, const char *rule,
		      char (*stack)[160], int nstack)
{
	exec_record(a, tid, tgid, exe, syscall, path, resolved, err, "deny", rule, stack, nstack);
}

void audit_dns(struct audit *a, pid_t pid, pid_t tid, const char *exe, const struct call_net *cn,
	       const char *decision, const char *rule, char (*stack)[160], int nstack)
{
	FILE *f = a->f;
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
	fflush(f);
}

void audit_json_destinations(FILE *f, const struct net *n)
{
	fputc('[', f);
	for (int i = 0; i < n->nseen; i++) {
		const struct net_seen *s = &n->seen[i];
		fputs(i ? ",{\"destination\":" : "{\"destination\":", f);
		if (json_str(f, s->what)) {
			fputs(",\"destination-hex\":", f);
			json_hex(f, s->what, strlen(s->what));
		}
		fprintf(f, ",\"tried\":%u,\"allowed\":%u,\"denied\":%u}", s->tried, s->allowed,
			s->denied);
	}
	fputc(']', f);
}

void audit_net_summary(struct audit *a, const struct net *n)
{
	FILE *f = a->f;
	head(f, 0, 0);
	fputs(",\"exe\":\"\",\"syscall\":\"net-summary\",\"loopback\":", f);
	json_str(f, n->mode == NET_NETNS ? "netns" : n->mode == NET_USERNS ? "userns" : "none");
	fputs(",\"destinations\":", f);
	audit_json_destinations(f, n);
	if (n->dns_unrecorded)
		fprintf(f, ",\"unrecorded\":%u", n->dns_unrecorded);
	fprintf(f, ",\"result\":0,\"decision\":\"summary\"}\n");
	fflush(f);
}
