/* The audit log's records (audit/audit.c) against docs/audit.md.
 *
 * Records are written through the public functions to a memfd and read
 * back with a strict JSON reader (jsonl.h): one object a line, every
 * member one the field table of docs/audit.md lists, with its type, the
 * required ones present.  Names the sandbox chose (paths, comm, exe, a DNS
 * question) carry hostile bytes — invalid UTF-8, quotes, newlines,
 * terminal controls — that must stay inside their string, with the exact
 * bytes in KEY-hex.  The size cap and the rate limit drop records and say
 * so in a record of their own. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "core/call.h"
#include "core/task.h"
#include "net-stub/net.h"
#include "syscall-table/table.h"

#include "jsonl.h"

static struct audit *a;
static int logfd = -1; /* a second fd of the log: audit_close closes its own */

static void log_open(enum audit_level level, uint64_t max_bytes, double rate, double burst)
{
	int fd = memfd_create("audit", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	logfd = dup(fd);
	ck_assert_int_ge(logfd, 0);
	struct audit_caps caps = { .max_bytes = max_bytes, .rate = rate, .burst = burst };
	a = audit_open(fd, level, &caps);
	ck_assert_ptr_nonnull(a);
}

static void log_close(void)
{
	audit_close(a);
	a = NULL;
}

/* ---- the field table of docs/audit.md ---- */

struct docfield {
	char name[32];
	char type; /* 's', 'n', 'a' */
	bool required;
};
static struct docfield doc[64];
static int ndoc;

/* The rows between the audit-fields markers: "| name[, name...] | type |
 * yes/no | ...".  make unit runs the tests from the repository's root. */
static void doc_load(void)
{
	FILE *f = fopen("docs/audit.md", "re");
	ck_assert_msg(f, "docs/audit.md: %s (run from the repository's root)", strerror(errno));
	char line[4096];
	bool in = false;
	ndoc = 0;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, "<!-- audit-fields:begin -->"))
			in = true;
		else if (strstr(line, "<!-- audit-fields:end -->"))
			break;
		if (!in || line[0] != '|' || strncmp(line, "| field", 7) == 0 ||
		    strncmp(line, "|---", 4) == 0)
			continue;
		char names[512], type[32], req[16];
		ck_assert_int_eq(sscanf(line, "| %511[^|]| %31s | %15s |", names, type, req), 3);
		char *save = NULL;
		for (char *n = strtok_r(names, ", ", &save); n; n = strtok_r(NULL, ", ", &save)) {
			ck_assert_int_lt(ndoc, 64);
			struct docfield *d = &doc[ndoc++];
			snprintf(d->name, sizeof d->name, "%s", n);
			d->type = strcmp(type, "string") == 0    ? 's'
				  : strcmp(type, "integer") == 0 ? 'n'
								 : 'a';
			ck_assert_msg(strcmp(type, "array") == 0 || d->type != 'a', "type %s",
				      type);
			d->required = strcmp(req, "yes") == 0;
		}
	}
	fclose(f);
	ck_assert_msg(ndoc > 20, "the field table of docs/audit.md was not found");
}

/* Every member listed, of its type; every required member present. */
static void doc_check(const struct jrec *r)
{
	if (!ndoc)
		doc_load();
	for (int i = 0; i < r->n; i++) {
		const struct docfield *d = NULL;
		for (int k = 0; k < ndoc && !d; k++)
			if (strcmp(doc[k].name, r->f[i].key) == 0)
				d = &doc[k];
		ck_assert_msg(d, "member \"%s\" is not in docs/audit.md", r->f[i].key);
		ck_assert_msg(r->f[i].v.type == d->type && (d->type != 'n' || r->f[i].v.integral),
			      "member \"%s\" is not of its documented type", d->name);
	}
	for (int k = 0; k < ndoc; k++)
		if (doc[k].required)
			ck_assert_msg(jget(r, doc[k].name), "required member \"%s\" missing",
				      doc[k].name);
	/* time: 2026-12-02T14:20:12.123456Z */
	const char *t = jstr(r, "time");
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddddddZ";
	ck_assert_uint_eq(strlen(t), strlen(shape));
	for (size_t i = 0; shape[i]; i++)
		ck_assert_msg(shape[i] == 'd' ? (t[i] >= '0' && t[i] <= '9') : t[i] == shape[i],
			      "time %s", t);
}

static int read_log(struct jrec **recs)
{
	int n = jlog_read(logfd, recs);
	for (int i = 0; i < n; i++)
		doc_check(&(*recs)[i]);
	return n;
}

/* ---- a call to record ---- */

static struct proc proc;
static struct task task;
static struct call c;

/* A call of thread gettid() (its comm is readable) in process 4242. */
static void call_reset(int nr)
{
	memset(&proc, 0, sizeof proc);
	memset(&task, 0, sizeof task);
	memset(&c, 0, sizeof c);
	proc.tgid = 4242;
	proc.pidfd = -1;
	snprintf(proc.exe, sizeof proc.exe, "/usr/bin/cat");
	proc.refs = 1 << 20; /* static: never freed by the task table */
	task.tid = (pid_t)syscall(SYS_gettid);
	task.proc = &proc;
	task.linked = true;
	/* The table knows the caller (the audit reads a comm only then). */
	if (!task_find(task.tid))
		task_add(task.tid, &proc);
	c.tid = task.tid;
	c.task = &task;
	c.nr = nr;
	c.ent = sc_lookup(nr);
	c.notify_fd = -1;
}

static void put_path(int slot, const char *path, const char *resolved)
{
	snprintf(c.path[slot], sizeof c.path[slot], "%s", path);
	snprintf(c.resolved[slot], sizeof c.resolved[slot], "%s", resolved);
	c.npath = slot + 1;
}

static void record(struct verdict v, int64_t result)
{
	ck_assert(audit_admit(a, &v));
	audit_call(a, &c, &v, result);
}

static const char *item(const struct jrec *r, const char *key, int i)
{
	const struct jv *v = jget(r, key);
	ck_assert_msg(v && v->type == 'a' && i < v->nitems, "no %s[%d]", key, i);
	ck_assert_int_eq(v->items[i].type, 's');
	return v->items[i].s;
}

START_TEST(test_denial_record)
{
	ck_assert_int_eq(prctl(PR_SET_NAME, "auditee"), 0);
	log_open(AUDIT_DENIALS, 0, 0, 0);
	call_reset(__NR_openat);
	c.arg[0] = (uint64_t)(int64_t)AT_FDCWD;
	c.arg[1] = 0x7ffc0000;
	c.arg[2] = O_RDONLY;
	put_path(0, "/etc/shadow", "/etc/shadow");
	c.nstack = 2;
	snprintf(c.stack[0], sizeof c.stack[0], "open64+0x4b (libc.so.6+0x1147bb)");
	snprintf(c.stack[1], sizeof c.stack[1], "a.out+0x1155");
	record(v_deny(ENOENT, "fs.outside-view"), -ENOENT);

	struct jrec *r;
	ck_assert_int_eq(read_log(&r), 1);
	ck_assert_int_eq(jint(r, "pid"), 4242); /* the process, not the thread */
	ck_assert_int_eq(jint(r, "tid"), task.tid);
	ck_assert_str_eq(jstr(r, "comm"), "auditee");
	ck_assert_str_eq(jstr(r, "exe"), "/usr/bin/cat");
	ck_assert_str_eq(jstr(r, "syscall"), "openat");
	ck_assert_int_eq(jint(r, "nr"), __NR_openat);
	ck_assert_int_eq(jget(r, "args")->nitems, 4);
	ck_assert_str_eq(item(r, "args", 0), "AT_FDCWD");
	ck_assert_str_eq(item(r, "args", 1), "/etc/shadow"); /* the path, not the pointer */
	ck_assert_str_eq(item(r, "args", 2), "O_RDONLY");
	ck_assert_str_eq(jstr(r, "path"), "/etc/shadow");
	ck_assert_str_eq(jstr(r, "resolved"), "/etc/shadow");
	ck_assert_int_eq(jget(r, "stack")->nitems, 2);
	ck_assert_str_eq(item(r, "stack", 0), "open64+0x4b (libc.so.6+0x1147bb)");
	ck_assert_str_eq(item(r, "stack", 1), "a.out+0x1155");
	ck_assert_int_eq(jint(r, "result"), -ENOENT);
	ck_assert_str_eq(jstr(r, "errno"), "ENOENT");
	ck_assert_str_eq(jstr(r, "decision"), "deny");
	ck_assert_str_eq(jstr(r, "rule"), "fs.outside-view");
	ck_assert_ptr_null(jget(r, "path2"));
	ck_assert_ptr_null(jget(r, "detail"));
	jlog_free(r, 1);

	uint64_t recs, dropped, bytes;
	audit_stats(a, &recs, &dropped, &bytes);
	ck_assert_uint_eq(recs, 1);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_eq(bytes, (uint64_t)lseek(logfd, 0, SEEK_END));
	log_close();
}
END_TEST

START_TEST(test_decisions)
{
	log_open(AUDIT_SUPERVISED, 0, 0, 0);
	call_reset(__NR_getcwd);
	record(v_value(13), 13);
	record(v_error(ERANGE), -ERANGE);
	call_reset(__NR_clone);
	record(v_continue(), 0);
	call_reset(__NR_execve);
	record(v_kill("exec.unverified"), -EPERM);
	/* a number the table does not know: "unknown", six raw arguments */
	call_reset(999);
	ck_assert_ptr_null(c.ent);
	c.arg[0] = 0xdead;
	record(v_deny(ENOSYS, "table.unknown-syscall"), -ENOSYS);
	/* an errno without a name */
	call_reset(__NR_getcwd);
	record(v_error(4000), -4000);
	/* a detail and a network destination; two paths */
	call_reset(__NR_connect);
	snprintf(c.detail, sizeof c.detail, "93.184.216.34:443 allowed by --allow-net example.com");
	c.dest = (struct call_net){ .family = AF_INET6,
				    .address = "2001:db8::1",
				    .port = 443,
				    .host = "example.com" };
	record(v_recorded(v_value(0), "net.allow"), 0);
	call_reset(__NR_renameat2);
	put_path(0, "a", "/w/a");
	put_path(1, "b", "");
	record(v_value(0), 0);

	struct jrec *r;
	int n = read_log(&r);
	ck_assert_int_eq(n, 8);
	ck_assert_str_eq(jstr(&r[0], "decision"), "emulate");
	ck_assert_int_eq(jint(&r[0], "result"), 13);
	ck_assert_ptr_null(jget(&r[0], "errno"));
	ck_assert_ptr_null(jget(&r[0], "rule"));
	/* an emulated error is no denial */
	ck_assert_str_eq(jstr(&r[1], "decision"), "emulate");
	ck_assert_int_eq(jint(&r[1], "result"), -ERANGE);
	ck_assert_str_eq(jstr(&r[1], "errno"), "ERANGE");
	ck_assert_str_eq(jstr(&r[2], "decision"), "allow");
	ck_assert_str_eq(jstr(&r[3], "decision"), "kill");
	ck_assert_str_eq(jstr(&r[3], "rule"), "exec.unverified");
	ck_assert_str_eq(jstr(&r[3], "errno"), "EPERM");
	ck_assert_str_eq(jstr(&r[4], "syscall"), "unknown");
	ck_assert_int_eq(jint(&r[4], "nr"), 999);
	ck_assert_int_eq(jget(&r[4], "args")->nitems, 6);
	ck_assert_str_eq(item(&r[4], "args", 0), "0xdead");
	ck_assert_str_eq(jstr(&r[4], "errno"), "ENOSYS");
	ck_assert_str_eq(jstr(&r[4], "rule"), "table.unknown-syscall");
	ck_assert_str_eq(jstr(&r[5], "errno"), "?");
	ck_assert_str_eq(jstr(&r[6], "syscall"), "connect");
	ck_assert_str_eq(jstr(&r[6], "detail"),
			 "93.184.216.34:443 allowed by --allow-net example.com");
	ck_assert_str_eq(jstr(&r[6], "family"), "AF_INET6");
	ck_assert_str_eq(jstr(&r[6], "address"), "2001:db8::1");
	ck_assert_int_eq(jint(&r[6], "port"), 443);
	ck_assert_str_eq(jstr(&r[6], "host"), "example.com");
	ck_assert_str_eq(jstr(&r[6], "decision"), "emulate");
	ck_assert_str_eq(jstr(&r[6], "rule"), "net.allow");
	ck_assert_str_eq(jstr(&r[7], "path"), "a");
	ck_assert_str_eq(jstr(&r[7], "resolved"), "/w/a");
	ck_assert_str_eq(jstr(&r[7], "path2"), "b");
	ck_assert_ptr_null(jget(&r[7], "resolved2")); /* not resolved: absent, not "" */
	ck_assert_str_eq(item(&r[7], "args", 1), "a");
	ck_assert_str_eq(item(&r[7], "args", 3), "b");
	jlog_free(r, n);
	log_close();
}
END_TEST

START_TEST(test_admit_by_level)
{
	log_open(AUDIT_DENIALS, 0, 0, 0);
	ck_assert(!audit_admit(a, &(struct verdict){ .kind = V_VALUE }));
	ck_assert(!audit_admit(a, &(struct verdict){ .kind = V_ERROR, .value = ENOENT }));
	ck_assert(!audit_admit(a, &(struct verdict){ .kind = V_CONTINUE }));
	ck_assert(!audit_admit(a, &(struct verdict){ .kind = V_FD }));
	ck_assert(audit_admit(a, &(struct verdict){ .kind = V_DENY }));
	ck_assert(audit_admit(a, &(struct verdict){ .kind = V_KILL }));
	struct verdict rec = v_recorded(v_value(0), "net.allow");
	ck_assert(audit_admit(a, &rec));
	log_close();
	log_open(AUDIT_SUPERVISED, 0, 0, 0);
	ck_assert(audit_admit(a, &(struct verdict){ .kind = V_VALUE }));
	ck_assert(audit_admit(a, &(struct verdict){ .kind = V_CONTINUE }));
	log_close();
	/* no log: nothing admitted */
	ck_assert(!audit_admit(NULL, &(struct verdict){ .kind = V_DENY }));
	/* admitting writes nothing by itself */
	struct jrec *r;
	ck_assert_int_eq(read_log(&r), 0);
	free(r);
}
END_TEST

/* A field the sandbox chose: what it wrote, what a reader gets back (each
 * invalid byte one U+FFFD), and whether KEY-hex must follow. */
struct hostile {
	const char *key, *bytes, *shown;
};
#define FFFD "\xef\xbf\xbd"

static void check_hostile(const struct jrec *r, const struct hostile *h)
{
	const char *got = jstr(r, h->key);
	ck_assert_msg(got, "no %s", h->key);
	ck_assert_msg(strcmp(got, h->shown) == 0, "%s read back as \"%s\"", h->key, got);
	char hexkey[64];
	snprintf(hexkey, sizeof hexkey, "%s-hex", h->key);
	const char *hex = jstr(r, hexkey);
	if (strcmp(h->bytes, h->shown) == 0) {
		ck_assert_msg(!hex, "%s is valid UTF-8 and has a %s", h->key, hexkey);
		return;
	}
	ck_assert_msg(hex, "%s is lossy and has no %s", h->key, hexkey);
	size_t n = strlen(h->bytes);
	ck_assert_uint_eq(strlen(hex), 2 * n);
	for (size_t i = 0; i < n; i++) {
		unsigned b;
		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &b), 1);
		ck_assert_msg(b == (unsigned char)h->bytes[i], "%s byte %zu", hexkey, i);
	}
}

/* python3's json, when there is one: a second, independent strict reader
 * (NaN and the like refused too).  The system's first: a version
 * manager's shim costs a second. */
static void python_reads(void)
{
	const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
	char cmd[512];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", py);
	if (system(cmd) != 0)
		return;
	snprintf(cmd, sizeof cmd,
		 "%s -c 'import json,sys\n"
		 "def no(x): raise ValueError(x)\n"
		 "[json.loads(l, parse_constant=no) for l in sys.stdin]' </proc/self/fd/%d",
		 py, logfd);
	ck_assert_msg(system(cmd) == 0, "python3's json refused the log");
}

START_TEST(test_hostile_strings)
{
	/* comm as the sandbox sets it (prctl PR_SET_NAME): 15 bytes at most,
	 * and a newline would end /proc/TID/comm's line */
	static const char comm[] = "c\x9b\"\x1b\\\x7f";
	ck_assert_int_eq(prctl(PR_SET_NAME, comm), 0);
	static const struct hostile fields[] = {
		{ "comm", comm, "c" FFFD "\"\x1b\\\x7f" },
		{ "exe", "/w/\xff\xfe.bin", "/w/" FFFD FFFD ".bin" },
		/* quotes, backslash, newline, CSI (raw and as U+009B), RLO,
		 * LS, a cut sequence at the end */
		{ "path",
		  "/w/\"q\\\n\x1b[31m\x9b\xc2\x9b\xe2\x80\xae\xe2\x80\xa8\x01"
		  "end\xe2\x82",
		  "/w/\"q\\\n\x1b[31m" FFFD "\xc2\x9b\xe2\x80\xae\xe2\x80\xa8\x01"
		  "end" FFFD FFFD },
		{ "resolved", "/w/\"q\\\n", "/w/\"q\\\n" }, /* valid: exact, no -hex */
		{ "path2", "\xc0\xaf..\xed\xa0\x80", FFFD FFFD ".." FFFD FFFD FFFD },
		{ "resolved2", "/w/caf\xc3\xa9\t", "/w/caf\xc3\xa9\t" },
		{ "detail", "family=\x9b\r", "family=" FFFD "\r" },
	};
	log_open(AUDIT_DENIALS, 0, 0, 0);
	call_reset(__NR_renameat2);
	snprintf(proc.exe, sizeof proc.exe, "%s", fields[1].bytes);
	put_path(0, fields[2].bytes, fields[3].bytes);
	put_path(1, fields[4].bytes, fields[5].bytes);
	snprintf(c.detail, sizeof c.detail, "%s", fields[6].bytes);
	c.nstack = 1;
	snprintf(c.stack[0], sizeof c.stack[0], "\x9b\n+0x10");
	record(v_deny(EXDEV, "fs.outside-view"), -EXDEV);
	/* a DNS question and a pinned name */
	struct call_net cn = { .family = AF_INET,
			       .address = "127.0.0.53",
			       .port = 53,
			       .query = "a\"\n\x9b.example",
			       .qtype = "A",
			       .host = "h\xff" };
	audit_dns(a, 7, 8, "/usr/bin/\x9b", &cn, "deny", "net.dns", NULL, 0);

	struct jrec *r;
	int n = read_log(&r);
	ck_assert_int_eq(n, 2);
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		check_hostile(&r[0], &fields[i]);
	ck_assert_str_eq(item(&r[0], "args", 1), fields[2].shown);
	ck_assert_str_eq(item(&r[0], "args", 3), fields[4].shown);
	ck_assert_str_eq(item(&r[0], "stack", 0), FFFD "\n+0x10");
	check_hostile(&r[1], &(struct hostile){ "query", cn.query, "a\"\n" FFFD ".example" });
	check_hostile(&r[1], &(struct hostile){ "host", cn.host, "h" FFFD });
	check_hostile(&r[1], &(struct hostile){ "exe", "/usr/bin/\x9b", "/usr/bin/" FFFD });
	jlog_free(r, n);
	python_reads();
	log_close();
}
END_TEST

START_TEST(test_dns_records)
{
	log_open(AUDIT_DENIALS, 0, 0, 0);
	struct call_net cn = { .family = AF_INET,
			       .address = "127.0.0.53",
			       .port = 53,
			       .query = "pypi.org",
			       .qtype = "AAAA" };
	char stack[1][160] = { "getaddrinfo+0x1 (libc.so.6+0x10)" };
	audit_dns(a, 7, 8, "/usr/bin/python3", &cn, "deny", "net.dns", stack, 1);
	audit_dns(a, 0, 0, "", &cn, "emulate", "net.allow", NULL, 0);

	struct jrec *r;
	ck_assert_int_eq(read_log(&r), 2);
	ck_assert_str_eq(jstr(&r[0], "syscall"), "dns");
	ck_assert_int_eq(jint(&r[0], "pid"), 7);
	ck_assert_int_eq(jint(&r[0], "tid"), 8);
	ck_assert_str_eq(jstr(&r[0], "exe"), "/usr/bin/python3");
	ck_assert_str_eq(jstr(&r[0], "family"), "AF_INET");
	ck_assert_str_eq(jstr(&r[0], "address"), "127.0.0.53");
	ck_assert_int_eq(jint(&r[0], "port"), 53);
	ck_assert_str_eq(jstr(&r[0], "query"), "pypi.org");
	ck_assert_str_eq(jstr(&r[0], "qtype"), "AAAA");
	ck_assert_int_eq(jint(&r[0], "result"), -ECONNREFUSED);
	ck_assert_str_eq(jstr(&r[0], "errno"), "ECONNREFUSED");
	ck_assert_str_eq(jstr(&r[0], "decision"), "deny");
	ck_assert_str_eq(jstr(&r[0], "rule"), "net.dns");
	ck_assert_str_eq(item(&r[0], "stack", 0), stack[0]);
	ck_assert_ptr_null(jget(&r[0], "nr"));
	ck_assert_ptr_null(jget(&r[0], "args"));
	ck_assert_int_eq(jint(&r[1], "result"), 0);
	ck_assert_ptr_null(jget(&r[1], "errno"));
	ck_assert_str_eq(jstr(&r[1], "decision"), "emulate");
	ck_assert_str_eq(jstr(&r[1], "rule"), "net.allow");
	ck_assert_ptr_null(jget(&r[1], "stack"));
	jlog_free(r, 2);
	log_close();
}
END_TEST

START_TEST(test_exec_records)
{
	log_open(AUDIT_DENIALS, 0, 0, 0);
	audit_exec(a, 11, 10, "/bin/sh", "execve", "/tmp/x", "/tmp/x", EACCES, "deny",
		   "exec.unreadable");
	/* An exec denied at its ptrace stop goes through audit_call as any
	 * call does, in the exec shape: no number, no arguments. */
	call_reset(SYS_execveat);
	c.stopped = true;
	put_path(0, "/w/y", "");
	snprintf(c.stack[0], sizeof c.stack[0], "execve+0xb (libc.so.6+0xe4a1b)");
	snprintf(c.stack[1], sizeof c.stack[1], "sh+0x2870");
	c.nstack = 2;
	record(v_deny(ENOENT, "exec.unknown-fd"), -ENOENT);
	struct jrec *r;
	ck_assert_int_eq(read_log(&r), 2);
	ck_assert_str_eq(jstr(&r[0], "syscall"), "execve");
	ck_assert_int_eq(jint(&r[0], "pid"), 10);
	ck_assert_int_eq(jint(&r[0], "tid"), 11);
	ck_assert_str_eq(jstr(&r[0], "path"), "/tmp/x");
	ck_assert_str_eq(jstr(&r[0], "resolved"), "/tmp/x");
	ck_assert_int_eq(jint(&r[0], "result"), -EACCES);
	ck_assert_str_eq(jstr(&r[0], "errno"), "EACCES");
	ck_assert_str_eq(jstr(&r[0], "rule"), "exec.unreadable");
	ck_assert_ptr_null(jget(&r[0], "nr")); /* absent for exec records */
	ck_assert_str_eq(jstr(&r[1], "syscall"), "execveat");
	ck_assert_ptr_null(jget(&r[1], "nr"));
	ck_assert_ptr_null(jget(&r[1], "args"));
	ck_assert_str_eq(jstr(&r[1], "decision"), "deny");
	ck_assert_str_eq(jstr(&r[1], "rule"), "exec.unknown-fd");
	ck_assert_ptr_null(jget(&r[1], "resolved"));
	ck_assert_int_eq(jget(&r[1], "stack")->nitems, 2);
	ck_assert_str_eq(item(&r[1], "stack", 1), "sh+0x2870");
	jlog_free(r, 2);
	log_close();
}
END_TEST

START_TEST(test_net_summary)
{
	static struct net net; /* large: static */
	net.mode = NET_NETNS;
	net_seen(&net, "93.184.216.34:443 (example.com)", true);
	net_seen(&net, "dns ev\x9bil", false);
	net_seen(&net, "dns ev\x9bil", false);
	log_open(AUDIT_DENIALS, 0, 0, 0);
	audit_summary(a, "net-summary", net_summary_fields, &net);
	struct jrec *r;
	ck_assert_int_eq(read_log(&r), 1);
	ck_assert_str_eq(jstr(r, "syscall"), "net-summary");
	ck_assert_int_eq(jint(r, "pid"), 0);
	ck_assert_int_eq(jint(r, "tid"), 0);
	ck_assert_str_eq(jstr(r, "exe"), "");
	ck_assert_str_eq(jstr(r, "decision"), "summary");
	ck_assert_int_eq(jint(r, "result"), 0);
	ck_assert_str_eq(jstr(r, "loopback"), "netns");
	const struct jv *d = jget(r, "destinations");
	ck_assert_int_eq(d->nitems, 2);
	ck_assert_int_eq(d->items[0].type, 'o');
	const struct jrec *d0 = d->items[0].obj, *d1 = d->items[1].obj;
	ck_assert_str_eq(jstr(d0, "destination"), "93.184.216.34:443 (example.com)");
	ck_assert_int_eq(jint(d0, "tried"), 1);
	ck_assert_int_eq(jint(d0, "allowed"), 1);
	ck_assert_int_eq(jint(d0, "denied"), 0);
	check_hostile(d1, &(struct hostile){ "destination", "dns ev\x9bil", "dns ev" FFFD "il" });
	ck_assert_int_eq(jint(d1, "tried"), 2);
	ck_assert_int_eq(jint(d1, "denied"), 2);
	jlog_free(r, 1);
	log_close();
}
END_TEST

static void no_fields(FILE *f, const void *ctx)
{
	fputs("\"loopback\":\"none\",\"destinations\":[]", f);
}

/* A denial of a 3,000-byte path: all such records have one size. */
static void big_denial(void)
{
	call_reset(__NR_openat);
	memset(c.path[0], 'x', 3000);
	c.path[0][3000] = '\0';
	c.npath = 1;
	audit_call(a, &c,
		   &(struct verdict){ .kind = V_DENY, .value = ENOENT, .rule = "fs.outside-view" },
		   -ENOENT);
}

START_TEST(test_size_cap)
{
	/* room for three, and not for the closing lines after them */
	log_open(AUDIT_DENIALS, 0, 0, 0);
	big_denial();
	uint64_t recs, dropped, bytes;
	audit_stats(a, &recs, &dropped, &bytes);
	log_close();
	uint64_t cap = 3 * bytes + 50;
	log_open(AUDIT_DENIALS, cap, 0, 0);
	struct verdict v = v_deny(ENOENT, "fs.outside-view");
	int written = 0;
	for (int i = 0; i < 10; i++)
		if (audit_admit(a, &v)) {
			big_denial();
			written++;
		}
	/* Three fit; the fourth is cut by the cap (admitted, not written);
	 * past the cap nothing is admitted: no stack is read for it. */
	ck_assert_int_eq(written, 4);
	audit_stats(a, &recs, &dropped, &bytes);
	ck_assert_uint_eq(recs, 3);
	ck_assert_uint_eq(dropped, 7);
	ck_assert_uint_le(bytes, cap);
	/* the closing lines are written past the cap */
	audit_summary(a, "net-summary", no_fields, NULL);
	log_close();

	struct jrec *r;
	int n = read_log(&r);
	ck_assert_int_eq(n, 5);
	for (int i = 0; i < 3; i++)
		ck_assert_str_eq(jstr(&r[i], "syscall"), "openat");
	ck_assert_str_eq(jstr(&r[3], "syscall"), "audit-dropped");
	ck_assert_int_eq(jint(&r[3], "dropped"), 7);
	ck_assert_str_eq(jstr(&r[3], "decision"), "summary");
	ck_assert_str_eq(jstr(&r[3], "rule"), "audit.size-cap");
	ck_assert_int_eq(jint(&r[3], "pid"), 0);
	ck_assert_str_eq(jstr(&r[4], "syscall"), "net-summary");
	jlog_free(r, n);
	ck_assert_int_gt(lseek(logfd, 0, SEEK_END), (off_t)cap);
}
END_TEST

START_TEST(test_rate_limit)
{
	/* a burst of 2, then 1 a second: 2 of 10 at once */
	log_open(AUDIT_DENIALS, 0, 1, 2);
	call_reset(__NR_openat);
	struct verdict v = v_deny(ENOENT, "fs.outside-view");
	int admitted = 0;
	for (int i = 0; i < 10; i++)
		if (audit_admit(a, &v)) {
			audit_call(a, &c, &v, -ENOENT);
			admitted++;
		}
	ck_assert_int_eq(admitted, 2);
	log_close();
	struct jrec *r;
	int n = read_log(&r);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(jstr(&r[2], "syscall"), "audit-dropped");
	ck_assert_int_eq(jint(&r[2], "dropped"), 8);
	ck_assert_str_eq(jstr(&r[2], "rule"), "audit.rate-limit");
	jlog_free(r, n);
}
END_TEST

START_TEST(test_rate_refill_and_said_once_a_second)
{
	/* a burst of 1, 5 a second: a token every 200 ms (slow enough that
	 * a record written under ASan does not earn the next one) */
	log_open(AUDIT_DENIALS, 0, 5, 1);
	/* "once a second" is by the monotonic clock's whole seconds: all of
	 * this (~0.5 s) in one of them */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_nsec > 300000000)
		usleep((useconds_t)((1000000000 - now.tv_nsec) / 1000 + 1000));
	call_reset(__NR_openat);
	struct verdict v = v_deny(ENOENT, "fs.outside-view");
	ck_assert(audit_admit(a, &v));
	audit_call(a, &c, &v, -ENOENT);
	ck_assert(!audit_admit(a, &v));
	usleep(210000);
	/* refilled: the drop is said first (the first time, at once) */
	ck_assert(audit_admit(a, &v));
	audit_call(a, &c, &v, -ENOENT);
	ck_assert(!audit_admit(a, &v));
	ck_assert(!audit_admit(a, &v));
	usleep(210000);
	/* less than a second since it was said: not again, until the end */
	ck_assert(audit_admit(a, &v));
	audit_call(a, &c, &v, -ENOENT);
	log_close();
	struct jrec *r;
	int n = read_log(&r);
	ck_assert_int_eq(n, 5);
	static const char *const order[] = { "openat", "audit-dropped", "openat", "openat",
					     "audit-dropped" };
	for (int i = 0; i < n; i++)
		ck_assert_str_eq(jstr(&r[i], "syscall"), order[i]);
	ck_assert_int_eq(jint(&r[1], "dropped"), 1);
	ck_assert_int_eq(jint(&r[4], "dropped"), 2);
	jlog_free(r, n);
}
END_TEST

/* The reader the tests above rest on refuses what a strict reader does:
 * if it took anything, the hostile-bytes test would prove nothing. */
START_TEST(test_reader_is_strict)
{
	/* clang-format off */
	static const char *const bad[] = {
		"", "{", "{}x", "{} {}", "[]", "{\"a\":1,}", "{\"a\" 1}", "{'a':1}", "{\"a\":01}",
		"{\"a\":1.}", "{\"a\":-}", "{\"a\":NaN}", "{\"a\":tru}", "{\"a\":1,\"a\":2}",
		"{\"a\":\"x\ny\"}", "{\"a\":\"\x1b\"}", "{\"a\":\"\x9b\"}", "{\"a\":\"\xc0\xaf\"}",
		"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xc2\x9b\"}", "{\"a\":\"\xe2\x80\xae\"}",
		"{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}", "{\"a\":\"\\x41\"}", "{\"a\":\"\\u12\"}",
		"{\"a\":[1,]}", "{\"a\":\"unterminated}",
	};
	/* clang-format on */
	struct jrec r;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(jrec_parse(bad[i], strlen(bad[i]), &r), "took %s", bad[i]);
	static const char good[] =
		"{\"s\":\"\\u001b\\u2028\\ud83d\\ude00caf\xc3\xa9\\\"\",\"n\":-12,"
		"\"f\":1.5e3,\"a\":[\"x\",{\"k\":null},true],\"o\":{}}";
	const char *why = jrec_parse(good, strlen(good), &r);
	ck_assert_msg(!why, "%s", why);
	ck_assert_str_eq(jstr(&r, "s"), "\x1b\xe2\x80\xa8\xf0\x9f\x98\x80"
					"caf\xc3\xa9\"");
	ck_assert_int_eq(jint(&r, "n"), -12);
	ck_assert(!jget(&r, "f")->integral);
	ck_assert_int_eq(jget(&r, "a")->nitems, 3);
	ck_assert_int_eq(jget(&r, "a")->items[1].obj->f[0].v.type, 'z');
	jrec_free(&r);
}
END_TEST

static Suite *audit_suite(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("records");
	tcase_add_test(tc, test_denial_record);
	tcase_add_test(tc, test_decisions);
	tcase_add_test(tc, test_admit_by_level);
	tcase_add_test(tc, test_hostile_strings);
	tcase_add_test(tc, test_dns_records);
	tcase_add_test(tc, test_exec_records);
	tcase_add_test(tc, test_net_summary);
	suite_add_tcase(s, tc);
	TCase *rd = tcase_create("reader");
	tcase_add_test(rd, test_reader_is_strict);
	suite_add_tcase(s, rd);
	TCase *caps = tcase_create("caps");
	tcase_add_test(caps, test_size_cap);
	tcase_add_test(caps, test_rate_limit);
	tcase_add_test(caps, test_rate_refill_and_said_once_a_second);
	suite_add_tcase(s, caps);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(audit_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
