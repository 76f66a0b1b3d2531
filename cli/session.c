/* `moat session`: requests in, replies and events out, one JSON object a
 * line on stdin and stdout (docs/sessions.md).
 *
 * Each session is a `moat run` of its own, a child of this process, whose
 * program is the driver (drivers/): its stdin takes cells, its stdout
 * gives the driver's messages, its stderr is moat run's own (the run
 * report is its last line: `--report -`).  One poll loop serves the
 * client and every session; nothing here blocks but the writes to the
 * client, whose reader is the client itself.
 *
 * The driver's messages come from inside the sandbox: they are parsed by
 * jansson, at most max_msg bytes a line, and only the fields expected, of
 * the types expected, are passed on.  Anything else ends the cell with a
 * protocol error and restarts the interpreter (the channel can no longer
 * be trusted to mean what it says); never more than that session. */
#include "cli/session.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const char driver_python[], driver_bash[]; /* build/gen/drivers.c */

#define MAX_SESSIONS 64
#define ERR_TAIL 8192        /* the end of a moat run's stderr kept */
#define CLOSE_WAIT_MS 2000   /* a closed driver's time to leave */
#define KILL_WAIT_MS 5000    /* moat run's time to end its sandbox */
#define MAX_TRACEBACK 1000   /* lines */
#define MAX_MIME_KEY 128
#define MAX_FILEOPS 16      /* file requests in flight, a session */
#define FILEOP_WAIT_MS 60000 /* a driver that does not answer one in time: restarted */
#define START_WAIT_MS 60000  /* an interpreter not ready in time: given up */
#define MAX_FAILED_STARTS 3  /* in a row: the session is closed */
#define MAX_FILES 1000      /* entries of a listing or files_changed */
#define MAX_SNAPSHOTS 64
#define MAX_CLIENTS 64
#define MAX_DENIALS 20        /* records kept a cell (all are counted) */
#define AUDIT_LINE_MAX 65536  /* a record longer is skipped */
#define REPORT_MAX (1u << 20) /* a run report, at most (1,000 files listed) */
#define CLIENT_OUT_MAX (64u << 20) /* a client that reads nothing is let go */

/* A line being read from a pipe. */
struct linebuf {
	char *buf;
	size_t len, cap;
	unsigned dropped; /* whole lines past the limit, dropped */
};

enum sess_state {
	S_STARTING, /* the interpreter is not ready yet */
	S_READY,    /* waiting for a cell */
	S_BUSY,     /* a cell runs */
	S_CLOSING,  /* its driver was told to leave */
};

struct sess {
	char name[16];
	bool bash;   /* its language: bash, not python */
	char **argv; /* moat run's, for every start */
	pid_t pid;
	int pidfd, in_fd, out_fd, err_fd, audit_fd;
	int life_fd;    /* moat run's --lifeline: closed, the sandbox ends */
	int report_fd;  /* moat run's --report, read whole at its end */
	char *report;   /* what it wrote */
	size_t report_len;
	struct linebuf out, audit;
	json_t *denials; /* the running cell's, as the audit log has them */
	int ndenials;
	char err_tail[ERR_TAIL];
	size_t err_len;
	char *pend; /* to the driver, not written yet */
	size_t pend_len;
	enum sess_state st;
	uint64_t started, kill_at;
	json_t *create_id; /* a create waiting for ready; NULL: none */
	bool creating;
	json_t *queued; /* an exec waiting for the interpreter (a restart) */
	bool queued_interrupted;
	/* the running cell */
	json_t *exec_id;
	int n, count;
	int next_rid;       /* its file requests' ids */
	int failed_starts;  /* in a row: died before ready */
	bool was_ready;     /* this interpreter said ready */
	uint64_t t0, deadline, grace_at;
	bool interrupted, timed_out, killed, hard_killed;
	json_t *outputs;
	size_t outputs_bytes; /* of outputs' strings */
	int outputs_cut;      /* displays left out of the reply */
	json_t *close_id;
	bool closing;
	const char *close_reason; /* set when the session closed itself */
	struct fileop {
		int rid; /* 0: a free slot */
		char action[8];
		json_t *id;
		enum { FOR_CLIENT, FOR_SNAPSHOT, FOR_RESTORE } purpose;
		uint64_t due; /* its answer's deadline */
	} files[MAX_FILEOPS];
	json_t *restore; /* the snapshot a new session starts from, until put */
	uint64_t last_active;      /* the end of its last cell, or its start */
};

static struct {
	char exe[PATH_MAX];
	double grace_s, idle_s;
	size_t max_msg;
	int max_sessions;
	struct sess *s[MAX_SESSIONS];
	unsigned next_name, next_snap;
	int next_rid;
	json_t *snaps; /* name -> {data (base64 tar), size, sha256} */
	size_t snap_bytes, snap_max;
	bool stdin_open;
	struct linebuf in;
	session_out_fn out; /* NULL: JSON lines with ids */
	json_t *outq;       /* [id, obj] pairs for `out`, this round's */
	session_in_fn in_line;
	/* --listen: clients on a Unix socket instead of stdin */
	const char *listen_path;
	int listen_fd;
	struct client {
		int fd; /* -1: a free slot */
		unsigned gen;
		struct linebuf in;
		char *out;
		size_t out_len;
	} cl[MAX_CLIENTS];
	unsigned next_gen;
	int cur_client; /* whose line is being served; -1: none */
	bool draining;  /* stdin ended: sessions close as they go idle */
	bool out_gone;  /* stdout's reader is gone */
	bool skipping;  /* the rest of an over-long request is being skipped */
} ss;

static volatile sig_atomic_t stop_signal;

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* `obj` (taken) as one line of ASCII JSON: a stream's text is the
 * sandbox's, and a client may show it on a terminal; escaped, no byte of
 * it is a control sequence.  Malloc'd, with its newline; NULL if none. */
static char *json_line(json_t *obj, size_t *len)
{
	char *text = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(obj);
	if (!text)
		return NULL;
	*len = strlen(text) + 1;
	text[*len - 1] = '\n'; /* over the terminating NUL: kept by length */
	return text;
}

/* One JSON line on stdout; `obj` is taken. */
void session_write(json_t *obj)
{
	size_t n;
	char *text = json_line(obj, &n);
	for (size_t off = 0; text && off < n;) {
		ssize_t w = write(1, text + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* the client is gone: stdin's end closes the rest */
		off += (size_t)w;
	}
	free(text);
}

static void client_drop(int c);

/* A line for client `c` (`obj` taken): queued, written as it reads. */
static void client_write(int c, json_t *obj)
{
	size_t n;
	char *text = json_line(obj, &n);
	struct client *k = &ss.cl[c];
	if (!text || k->fd < 0) {
		free(text);
		return;
	}
	if (k->out_len + n > CLIENT_OUT_MAX) {
		free(text);
		client_drop(c); /* it reads nothing: it is let go */
		return;
	}
	char *b = realloc(k->out, k->out_len + n);
	if (b) {
		memcpy(b + k->out_len, text, n);
		k->out = b;
		k->out_len += n;
	}
	free(text);
}

/* A reply or event about request `id`: to the front end (`moat mcp`); to
 * the client that asked (--listen: the id is [client, generation, its
 * id]) or to every client (no id); or as a line on stdout. */
static void emit(json_t *id, json_t *obj)
{
	if (ss.out) {
		/* handed over after this round: the front end's requests then
		 * find every session in a settled state */
		json_array_append_new(ss.outq, json_pack("[O, o]", id ? id : json_null(), obj));
		return;
	}
	if (ss.listen_path) {
		if (!id) {
			for (int c = 0; c < MAX_CLIENTS; c++)
				if (ss.cl[c].fd >= 0)
					client_write(c, json_incref(obj));
			json_decref(obj);
			return;
		}
		json_int_t c = json_integer_value(json_array_get(id, 0));
		json_int_t gen = json_integer_value(json_array_get(id, 1));
		json_t *theirs = json_array_get(id, 2);
		if (c < 0 || c >= MAX_CLIENTS || ss.cl[c].fd < 0 || ss.cl[c].gen != (unsigned)gen) {
			json_decref(obj); /* its client left */
			return;
		}
		if (!json_is_null(theirs))
			json_object_set(obj, "id", theirs);
		client_write((int)c, obj);
		return;
	}
	if (id)
		json_object_set(obj, "id", id);
	session_write(obj);
}

static void reply_error(json_t *id, const char *fmt, const char *arg)
{
	char msg[512];
	snprintf(msg, sizeof msg, fmt, arg);
	emit(id, json_pack("{s:b, s:s}", "ok", 0, "error", msg));
}

/* ---- lines ---- */

/* Read what `fd` has into `lb`.  Calls `line` for each whole line (its
 * text NUL-terminated, without the newline); a whole line longer than
 * `max` is counted in lb->dropped instead.  -1: end of file or error;
 * -2: an unfinished line already longer than `max`; -3: nothing to read
 * now; 0 otherwise. */
static int read_lines(int fd, struct linebuf *lb, size_t max, session_in_fn line, void *ctx)
{
	char chunk[65536];
	ssize_t r = read(fd, chunk, sizeof chunk);
	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? -3 : -1;
	if (r == 0)
		return -1;
	if (lb->len + (size_t)r + 1 > lb->cap) {
		size_t cap = lb->cap ? lb->cap : 65536;
		while (cap < lb->len + (size_t)r + 1)
			cap *= 2;
		char *b = realloc(lb->buf, cap);
		if (!b)
			return -2;
		lb->buf = b;
		lb->cap = cap;
	}
	memcpy(lb->buf + lb->len, chunk, (size_t)r);
	lb->len += (size_t)r;
	size_t start = 0;
	for (;;) {
		char *nl = memchr(lb->buf + start, '\n', lb->len - start);
		if (!nl)
			break;
		size_t len = (size_t)(nl - (lb->buf + start));
		*nl = '\0';
		if (len > max)
			lb->dropped++; /* whole, and too long: not served */
		else
			line(ctx, lb->buf + start, len);
		start += len + 1;
		if (!lb->buf) /* the callback reset it */
			return 0;
	}
	memmove(lb->buf, lb->buf + start, lb->len - start);
	lb->len -= start;
	return lb->len > max ? -2 : 0;
}

static void linebuf_free(struct linebuf *lb)
{
	free(lb->buf);
	*lb = (struct linebuf){ 0 };
}

/* ---- sessions ---- */

static void sess_close(struct sess *s, json_t *id);
static void cell_start(struct sess *s, json_t *req);
static void restore_done(struct sess *s, json_t *r);
static void audit_drain(struct sess *s);
static void sess_interrupt(struct sess *s);

static struct sess *sess_find(const char *name)
{
	for (int i = 0; i < MAX_SESSIONS; i++)
		if (ss.s[i] && !strcmp(ss.s[i]->name, name))
			return ss.s[i];
	return NULL;
}

/* Is `s` still one of ours?  By address: it may have been freed. */
static bool sess_alive(const struct sess *s)
{
	for (int i = 0; i < MAX_SESSIONS; i++)
		if (ss.s[i] == s)
			return true;
	return false;
}

static int sess_count(void)
{
	int n = 0;
	for (int i = 0; i < MAX_SESSIONS; i++)
		n += ss.s[i] != NULL;
	return n;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Queue `obj` (taken) for the driver's stdin. */
static void to_driver(struct sess *s, json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	if (!text || s->in_fd < 0) {
		free(text);
		return;
	}
	size_t n = strlen(text);
	char *p = realloc(s->pend, s->pend_len + n + 1);
	if (p) {
		memcpy(p + s->pend_len, text, n);
		p[s->pend_len + n] = '\n';
		s->pend = p;
		s->pend_len += n + 1;
	}
	free(text);
}

static void flush_driver(struct sess *s)
{
	while (s->pend_len && s->in_fd >= 0) {
		ssize_t w = write(s->in_fd, s->pend, s->pend_len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) { /* the driver is gone: its death says the rest */
			s->pend_len = 0;
			return;
		}
		memmove(s->pend, s->pend + w, s->pend_len - (size_t)w);
		s->pend_len -= (size_t)w;
	}
}

/* Start the session's moat run: 0, or -errno. */
static int sess_spawn(struct sess *s)
{
	int in[2], out[2], err[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(out, O_CLOEXEC) < 0) {
		int e = errno;
		close(in[0]);
		close(in[1]);
		return -e;
	}
	int au[2] = { -1, -1 }, life[2] = { -1, -1 }, rep[2] = { -1, -1 };
	if (pipe2(err, O_CLOEXEC) < 0 || pipe2(au, O_CLOEXEC) < 0 || pipe2(life, O_CLOEXEC) < 0 ||
	    pipe2(rep, O_CLOEXEC) < 0) {
		int e = errno;
		int all[] = { in[0], in[1], out[0], out[1], err[0], err[1], au[0], au[1],
			      life[0], life[1], rep[0], rep[1] };
		for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
			if (all[i] >= 0 && (i < 4 || all[i] != in[0]))
				close(all[i]);
		return -e;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		/* Its own process group: a Ctrl-C at the client's terminal is
		 * not the cells'.  Our death is its death, and its sandbox's. */
		setpgid(0, 0);
		/* Our death is the sandbox's through --lifeline (fd 4): a
		 * parent-death signal would not do, the kernel clears it when
		 * moat run takes the sandbox's fsuid. */
		if (getppid() != parent)
			_exit(125);
		signal(SIGPIPE, SIG_DFL);
		/* fd 3: the audit log moat run writes (--audit-log /dev/fd/3);
		 * 4: its lifeline (--lifeline 4), our end kept by us alone;
		 * 5: its report (--report /dev/fd/5) */
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0 ||
		    dup2(au[1], 3) < 0 || dup2(life[0], 4) < 0 || dup2(rep[1], 5) < 0)
			_exit(125);
		execv(ss.exe, s->argv);
		_exit(125);
	}
	int e = errno;
	close(in[0]);
	close(out[1]);
	close(err[1]);
	close(au[1]);
	close(life[0]);
	close(rep[1]);
	if (pid < 0) {
		close(in[1]);
		close(out[0]);
		close(err[0]);
		close(au[0]);
		close(life[1]);
		close(rep[0]);
		return -e;
	}
	s->life_fd = life[1];
	s->report_fd = rep[0];
	fcntl(s->report_fd, F_SETFL, O_NONBLOCK);
	free(s->report);
	s->report = NULL;
	s->report_len = 0;
	s->audit_fd = au[0];
	fcntl(s->audit_fd, F_SETFL, O_NONBLOCK);
	linebuf_free(&s->audit);
	s->pid = pid;
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	s->in_fd = in[1];
	s->out_fd = out[0];
	s->err_fd = err[0];
	fcntl(s->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(s->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(s->err_fd, F_SETFL, O_NONBLOCK);
	s->st = S_STARTING;
	s->was_ready = false;
	s->started = now_ms();
	s->err_len = 0;
	s->n = 0;
	s->count = 0;
	s->killed = s->hard_killed = false;
	linebuf_free(&s->out);
	return 0;
}

static void cell_clear(struct sess *s)
{
	json_decref(s->exec_id);
	json_decref(s->outputs);
	json_decref(s->denials);
	s->exec_id = s->outputs = s->denials = NULL;
	s->deadline = s->grace_at = 0;
	s->interrupted = s->timed_out = false;
}

/* The reply to the running cell; `extra` (taken) holds result/error. */
static void cell_reply(struct sess *s, const char *status, json_t *extra, const char *verdict,
		       bool restarted)
{
	json_t *r = json_pack("{s:b, s:s, s:i, s:I, s:s, s:b}", "ok", 1, "status", status,
			      "execution_count", s->count, "duration_ms",
			      (json_int_t)(now_ms() - s->t0), "verdict", verdict, "restarted",
			      restarted);
	json_object_set_new(r, "result", json_null());
	json_object_set_new(r, "error", json_null());
	json_object_set_new(r, "files_changed", json_array());
	if (extra)
		json_object_update(r, extra);
	json_decref(extra);
	json_object_set_new(r, "outputs", s->outputs ? json_incref(s->outputs) : json_array());
	json_object_set_new(r, "denials", s->denials ? json_incref(s->denials) : json_array());
	json_object_set_new(r, "denials_count", json_integer(s->ndenials));
	if (s->outputs_cut)
		json_object_set_new(r, "outputs_omitted", json_integer(s->outputs_cut));
	emit(s->exec_id, r);
	cell_clear(s);
	s->last_active = now_ms();
}

static void cell_start(struct sess *s, json_t *req)
{
	json_t *id = json_object_get(req, "id");
	json_t *timeout = json_object_get(req, "timeout");
	s->exec_id = id ? json_incref(id) : NULL;
	s->outputs = json_array();
	s->denials = json_array();
	s->ndenials = 0;
	s->outputs_bytes = 0;
	s->outputs_cut = 0;
	s->n++;
	s->count++;
	s->t0 = now_ms();
	s->interrupted = s->timed_out = false;
	s->grace_at = 0;
	double t = json_is_number(timeout) ? json_number_value(timeout) : 0;
	if (t > 1e7) /* past 115 days: none */
		t = 0;
	s->deadline = t > 0 ? s->t0 + (uint64_t)(t * 1000) : 0;
	s->st = S_BUSY;
	to_driver(s, json_pack("{s:s, s:i, s:O}", "op", "exec", "n", s->n, "code",
			       json_object_get(req, "code")));
	if (s->queued_interrupted) { /* the driver stops it before it begins */
		s->queued_interrupted = false;
		sess_interrupt(s);
	}
}

static void sess_interrupt(struct sess *s)
{
	if (s->st != S_BUSY) {
		if (s->queued) /* not started yet: interrupted as it starts */
			s->queued_interrupted = true;
		return;
	}
	if (!s->interrupted) {
		s->interrupted = true;
		s->grace_at = now_ms() + (uint64_t)(ss.grace_s * 1000);
	}
	to_driver(s, json_pack("{s:s, s:i}", "op", "interrupt", "n", s->n));
	flush_driver(s);
}

static void signal_run(struct sess *s, int sig)
{
	if (s->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, s->pidfd, sig, NULL, 0);
	else if (s->pid > 0)
		kill(s->pid, sig);
}

/* End the sandbox: its lifeline closed, moat run kills every process of
 * it, as at a user's second signal, then takes down its cgroups and layers
 * and writes its report.  Should moat run itself not end in KILL_WAIT_MS,
 * SIGKILL (its sandbox dies with it, EXITKILL; its scratch stays for a
 * later sweep). */
static void sess_kill(struct sess *s)
{
	close_fd(&s->life_fd);
	s->killed = true;
	s->kill_at = now_ms() + KILL_WAIT_MS;
}

/* The running cell ends with a protocol error, and the interpreter goes. */
static void protocol_error(struct sess *s, const char *why)
{
	if (s->st == S_BUSY) {
		json_t *tb = json_pack("[s]", why);
		cell_reply(s, "error",
			   json_pack("{s:{s:s, s:s, s:o}}", "error", "ename", "MoatProtocolError",
				     "evalue", why, "traceback", tb),
			   "OK", true);
	}
	/* The next cell waits for the fresh interpreter (sess_died). */
	s->st = S_STARTING;
	if (!s->killed)
		sess_kill(s);
}

/* A JSON object whose members are all strings, keys short: a MIME bundle. */
static bool mime_bundle(const json_t *v)
{
	if (!json_is_object(v))
		return false;
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)v, k, x) {
		if (strlen(k) > MAX_MIME_KEY || !json_is_string(x))
			return false;
	}
	return true;
}

/* {ename, evalue, traceback[]} of strings, or null. */
static bool error_object(const json_t *v)
{
	if (json_is_null(v))
		return true;
	if (!json_is_object(v) || json_object_size(v) != 3)
		return false;
	const json_t *tb = json_object_get(v, "traceback");
	if (!json_is_string(json_object_get(v, "ename")) ||
	    !json_is_string(json_object_get(v, "evalue")) || !json_is_array(tb) ||
	    json_array_size(tb) > MAX_TRACEBACK)
		return false;
	size_t i;
	json_t *x;
	json_array_foreach(tb, i, x) {
		if (!json_is_string(x))
			return false;
	}
	return true;
}

/* files_changed: [{path, size, sha256?}], each field of its type. */
static bool files_list(const json_t *v)
{
	size_t i;
	json_t *x;
	if (!json_is_array(v) || json_array_size(v) > MAX_FILES)
		return false;
	json_array_foreach(v, i, x) {
		json_t *h = json_object_get(x, "sha256");
		size_t keys = 2 + (h != NULL);
		if (!json_is_object(x) || json_object_size(x) != keys ||
		    !json_is_string(json_object_get(x, "path")) ||
		    !json_is_integer(json_object_get(x, "size")) ||
		    (h && (!json_is_string(h) || json_string_length(h) != 64)))
			return false;
	}
	return true;
}

/* A listing's entries: [{name, type, size, mtime}]. */
static bool entries_list(const json_t *v)
{
	size_t i;
	json_t *x;
	if (!json_is_array(v) || json_array_size(v) > MAX_FILES)
		return false;
	json_array_foreach(v, i, x) {
		if (!json_is_object(x) || json_object_size(x) != 4 ||
		    !json_is_string(json_object_get(x, "name")) ||
		    !json_is_string(json_object_get(x, "type")) ||
		    !json_is_integer(json_object_get(x, "size")) ||
		    !json_is_number(json_object_get(x, "mtime")))
			return false;
	}
	return true;
}

static struct fileop *fileop_find(struct sess *s, json_int_t rid)
{
	for (int i = 0; i < MAX_FILEOPS; i++)
		if (s->files[i].rid && s->files[i].rid == rid)
			return &s->files[i];
	return NULL;
}

static void fileop_end(struct fileop *f)
{
	json_decref(f->id);
	*f = (struct fileop){ 0 };
}

/* A free file request slot of the session's, or NULL. */
static struct fileop *fileop_new(struct sess *s, const char *action, json_t *id, int purpose)
{
	for (int i = 0; i < MAX_FILEOPS; i++)
		if (!s->files[i].rid) {
			struct fileop *f = &s->files[i];
			f->rid = ++s->next_rid;
			snprintf(f->action, sizeof f->action, "%s", action);
			f->id = id ? json_incref(id) : NULL;
			f->purpose = purpose;
			f->due = now_ms() + FILEOP_WAIT_MS;
			return f;
		}
	return NULL;
}

/* A directory's tar, kept as a snapshot: the reply. */
static json_t *argv_json(char **argv)
{
	json_t *a = json_array();
	for (char **p = argv; p && *p; p++)
		json_array_append_new(a, json_string(*p));
	return a;
}

static json_t *snapshot_keep(const struct sess *s, json_t *m, const char *fmt)
{
	json_t *data = json_object_get(m, "data");
	size_t len = json_string_length(data);
	if (strcmp(fmt, "tar"))
		return json_pack("{s:b, s:s}", "ok", 0, "error", "a snapshot is of a directory");
	const char *d = json_string_value(data);
	if (len % 4 || strspn(d, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") !=
			       len)
		return json_pack("{s:b, s:s}", "ok", 0, "error", "the driver's tar is not base64");
	if (json_object_size(ss.snaps) >= MAX_SNAPSHOTS || ss.snap_bytes + len > ss.snap_max)
		return json_pack("{s:b, s:s}", "ok", 0, "error",
				 "no room for another snapshot (64, or --snapshot-memory)");
	char name[24];
	snprintf(name, sizeof name, "snap%u", ++ss.next_snap);
	/* its session's moat run options: it is restored only under the same
	 * (what a hostile cell packed is unpacked where it could have written) */
	json_object_set_new(ss.snaps, name,
			    json_pack("{s:O, s:O, s:O, s:o}", "data", data, "size",
				      json_object_get(m, "size"), "sha256", json_object_get(m, "sha256"),
				      "argv", argv_json(s->argv)));
	ss.snap_bytes += len;
	return json_pack("{s:b, s:s, s:O, s:O}", "ok", 1, "snapshot", name, "size",
			 json_object_get(m, "size"), "sha256", json_object_get(m, "sha256"));
}

/* A new session's starting files: its snapshot, unpacked in its home. */
static void restore_start(struct sess *s)
{
	struct fileop *f = fileop_new(s, "put", NULL, FOR_RESTORE);
	if (!f) {
		restore_done(s, json_pack("{s:b, s:s}", "ok", 0, "error", "no file slot"));
		return;
	}
	/* no links: a snapshot's tar was made by a cell, not by the client */
	to_driver(s, json_pack("{s:s, s:i, s:s, s:s, s:O, s:s, s:b}", "op", "file", "rid", f->rid,
			       "action", "put", "path", ".", "data",
			       json_object_get(s->restore, "data"), "format", "tar", "links", 0));
	flush_driver(s);
}

/* The snapshot is in (or not): the create's reply. */
static void restore_done(struct sess *s, json_t *r)
{
	json_decref(s->restore);
	s->restore = NULL;
	if (!json_is_true(json_object_get(r, "ok"))) {
		const char *e = json_string_value(json_object_get(r, "error"));
		reply_error(s->create_id, "the snapshot could not be restored: %s", e ? e : "?");
		json_decref(r);
		json_decref(s->create_id);
		s->create_id = NULL;
		s->creating = false;
		s->close_reason = "restore-failed";
		sess_close(s, NULL);
		return;
	}
	json_decref(r);
	emit(s->create_id, json_pack("{s:b, s:s, s:I}", "ok", 1, "session", s->name, "started_ms",
				     (json_int_t)(now_ms() - s->started)));
	json_decref(s->create_id);
	s->create_id = NULL;
	s->creating = false;
	if (s->queued) {
		json_t *q = s->queued;
		s->queued = NULL;
		cell_start(s, q);
		json_decref(q);
	}
}

/* The driver's answer to a file request: checked, then the reply. */
static bool file_reply(struct sess *s, json_t *m)
{
	json_t *rid = json_object_get(m, "rid");
	struct fileop *f = json_is_integer(rid) ? fileop_find(s, json_integer_value(rid)) : NULL;
	json_t *ok = json_object_get(m, "ok");
	if (!f || !json_is_boolean(ok))
		return false;
	json_t *r = NULL;
	if (!json_is_true(ok)) {
		json_t *err = json_object_get(m, "error");
		if (!json_is_string(err) || json_object_size(m) != 4)
			return false;
		r = json_pack("{s:b, s:O}", "ok", 0, "error", err);
	} else if (!strcmp(f->action, "put")) {
		if (json_object_size(m) != 4 || !json_is_integer(json_object_get(m, "size")))
			return false;
		r = json_pack("{s:b, s:O}", "ok", 1, "size", json_object_get(m, "size"));
	} else if (!strcmp(f->action, "get")) {
		const char *fmt = json_string_value(json_object_get(m, "format"));
		json_t *h = json_object_get(m, "sha256");
		if (json_object_size(m) != 7 || !json_is_string(json_object_get(m, "data")) ||
		    !json_is_integer(json_object_get(m, "size")) || !json_is_string(h) ||
		    json_string_length(h) != 64 || !fmt || (strcmp(fmt, "raw") && strcmp(fmt, "tar")))
			return false;
		if (f->purpose == FOR_SNAPSHOT)
			r = snapshot_keep(s, m, fmt);
		else
			r = json_pack("{s:b, s:O, s:O, s:O, s:s}", "ok", 1, "data",
				      json_object_get(m, "data"), "size", json_object_get(m, "size"),
				      "sha256", h, "format", fmt);
	} else {
		json_t *e = json_object_get(m, "entries");
		if (json_object_size(m) != 4 || !entries_list(e))
			return false;
		r = json_pack("{s:b, s:O}", "ok", 1, "entries", e);
	}
	if (f->purpose == FOR_RESTORE) {
		restore_done(s, r);
		fileop_end(f);
		return true;
	}
	emit(f->id, r);
	fileop_end(f);
	return true;
}

/* Every file request still in flight fails: the interpreter went. */
static void fileops_fail(struct sess *s)
{
	for (int i = 0; i < MAX_FILEOPS; i++)
		if (s->files[i].rid) {
			if (s->files[i].purpose != FOR_RESTORE)
				reply_error(s->files[i].id, "the session's interpreter ended (%s)",
					    "restarted");
			fileop_end(&s->files[i]);
		}
}

/* {ev: stream, n, name: stdout|stderr, text}: each field of its kind. */
static bool stream_ok(const json_t *m)
{
	const char *name = json_string_value(json_object_get(m, "name"));
	return json_object_size(m) == 4 && json_is_string(json_object_get(m, "text")) && name &&
	       (!strcmp(name, "stdout") || !strcmp(name, "stderr"));
}

/* One message of the driver's: checked, then passed on. */
static void driver_line(void *ctx, char *text, size_t len)
{
	struct sess *s = ctx;
	if (s->killed)
		return; /* it is going: nothing it says counts */
	json_error_t jerr;
	json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	const char *ev = json_string_value(json_object_get(m, "ev"));
	json_t *n = json_object_get(m, "n");
	bool ours = json_is_integer(n) && json_integer_value(n) == s->n && s->st == S_BUSY;
	if (!m || !ev) {
		protocol_error(s, "the driver sent a message that is not a JSON object with \"ev\"");
	} else if (!strcmp(ev, "ready") && s->st == S_STARTING && json_object_size(m) == 1) {
		s->st = S_READY;
		s->was_ready = true;
		s->last_active = now_ms();
		if (s->creating && s->restore) {
			restore_start(s); /* the create's reply waits for it */
		} else if (s->creating) {
			emit(s->create_id, json_pack("{s:b, s:s, s:I}", "ok", 1, "session", s->name,
						     "started_ms",
						     (json_int_t)(now_ms() - s->started)));
			json_decref(s->create_id);
			s->create_id = NULL;
			s->creating = false;
		}
		if (s->queued && !s->creating) {
			json_t *q = s->queued;
			s->queued = NULL;
			cell_start(s, q);
			json_decref(q);
		}
	} else if (!strcmp(ev, "stream") && ours && stream_ok(m)) {
		emit(s->exec_id, json_pack("{s:s, s:O, s:O}", "event", "stream", "name",
					   json_object_get(m, "name"), "text",
					   json_object_get(m, "text")));
	} else if (!strcmp(ev, "display") && ours && json_object_size(m) == 3 &&
		   mime_bundle(json_object_get(m, "data"))) {
		json_t *data = json_object_get(m, "data");
		/* kept for the reply up to --max-message in all; past it the
		 * events still go out, and the reply says what it left out */
		size_t size = 0;
		const char *k;
		json_t *x;
		json_object_foreach(data, k, x) size += json_string_length(x);
		if (s->outputs_bytes + size <= ss.max_msg) {
			json_array_append(s->outputs, data);
			s->outputs_bytes += size;
		} else {
			s->outputs_cut++;
		}
		emit(s->exec_id, json_pack("{s:s, s:O}", "event", "display", "data", data));
	} else if (!strcmp(ev, "file") && s->st != S_STARTING) {
		if (!file_reply(s, m))
			protocol_error(s, "the driver's \"file\" message is malformed or unasked");
	} else if (!strcmp(ev, "done") && ours && json_object_size(m) == 6) {
		audit_drain(s); /* its denials were logged before it ended */
		const char *st = json_string_value(json_object_get(m, "status"));
		json_t *result = json_object_get(m, "result");
		json_t *error = json_object_get(m, "error");
		json_t *files = json_object_get(m, "files");
		if (!st || (strcmp(st, "ok") && strcmp(st, "error") && strcmp(st, "interrupted")) ||
		    !(json_is_null(result) || mime_bundle(result)) || !error_object(error) ||
		    !files_list(files)) {
			protocol_error(s, "the driver's \"done\" message is malformed");
		} else {
			if (!strcmp(st, "interrupted") && s->timed_out)
				st = "timeout";
			cell_reply(s, st,
				   json_pack("{s:O, s:O, s:O}", "result", result, "error", error,
					     "files_changed", files),
				   "OK", false);
			s->st = S_READY;
		}
	} else if (json_is_integer(n) && json_integer_value(n) >= 0 &&
		   (json_integer_value(n) < s->n || (json_integer_value(n) == s->n && s->st != S_BUSY)) &&
		   ((!strcmp(ev, "stream") && stream_ok(m)) ||
		    (!strcmp(ev, "display") && json_object_size(m) == 3 &&
		     mime_bundle(json_object_get(m, "data"))))) {
		/* a finished cell's: late, dropped (the driver sends such
		 * output with the next cell; this one was in flight) */
	} else {
		protocol_error(s, "the driver sent a message out of turn or of an unknown kind");
	}
	json_decref(m);
}

/* One record of the session's audit log (moat's writing: the sandbox's
 * strings in it are escaped): a denial during a cell is that cell's. */
static void audit_line(void *ctx, char *text, size_t len)
{
	struct sess *s = ctx;
	if (s->st != S_BUSY || !s->denials)
		return;
	json_t *rec = json_loadb(text, len, 0, NULL);
	if (!strcmp(json_string_value(json_object_get(rec, "decision")) ?: "", "deny")) {
		s->ndenials++;
		if (json_array_size(s->denials) < MAX_DENIALS) {
			static const char *const keep[] = { "syscall", "comm", "path", "resolved",
							    "address", "errno", "rule" };
			json_t *d = json_object();
			for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
				json_t *v = json_object_get(rec, keep[i]);
				if (json_is_string(v))
					json_object_set(d, keep[i], v);
			}
			json_array_append_new(s->denials, d);
		}
	}
	json_decref(rec);
}

/* What the audit log holds now. */
static void audit_drain(struct sess *s)
{
	int r;
	while (s->audit_fd >= 0 &&
	       (r = read_lines(s->audit_fd, &s->audit, AUDIT_LINE_MAX, audit_line, s)) != -3) {
		if (r == -2)
			linebuf_free(&s->audit); /* a record past the limit: skipped */
		else if (r == -1)
			close_fd(&s->audit_fd);
	}
}

/* moat run's stderr: its end is kept (the report is its last line). */
static void keep_err(struct sess *s)
{
	char chunk[4096]; /* smaller than the tail: a chunk always fits */
	ssize_t r;
	while ((r = read(s->err_fd, chunk, sizeof chunk)) > 0) {
		if (s->err_len + (size_t)r >= ERR_TAIL) {
			size_t drop = s->err_len + (size_t)r - (ERR_TAIL - 1);
			memmove(s->err_tail, s->err_tail + drop, s->err_len - drop);
			s->err_len -= drop;
		}
		memcpy(s->err_tail + s->err_len, chunk, (size_t)r);
		s->err_len += (size_t)r;
	}
	if (r == 0)
		close_fd(&s->err_fd);
}

/* The run report, as moat run writes it to its pipe: kept whole (up to
 * REPORT_MAX) until the run ends. */
static void keep_report(struct sess *s)
{
	char chunk[65536];
	ssize_t r;
	while ((r = read(s->report_fd, chunk, sizeof chunk)) > 0) {
		if (s->report_len + (size_t)r > REPORT_MAX)
			continue; /* past the bound: the verdict is lost, nothing else */
		char *b = realloc(s->report, s->report_len + (size_t)r + 1);
		if (!b)
			continue;
		memcpy(b + s->report_len, chunk, (size_t)r);
		s->report = b;
		s->report_len += (size_t)r;
		s->report[s->report_len] = '\0';
	}
	if (r == 0)
		close_fd(&s->report_fd);
}

/* The run's verdict (its report's status: moat's are two capitals), and
 * moat's own last words on stderr (why a start failed). */
static void run_report(struct sess *s, char *verdict, size_t vlen, char *msg, size_t mlen)
{
	snprintf(verdict, vlen, "XX");
	snprintf(msg, mlen, "moat run ended");
	json_t *rep = s->report ? json_loadb(s->report, s->report_len, 0, NULL) : NULL;
	const char *st = json_string_value(json_object_get(rep, "status"));
	if (st && strlen(st) == 2 && st[0] >= 'A' && st[0] <= 'Z' && st[1] >= 'A' && st[1] <= 'Z')
		snprintf(verdict, vlen, "%s", st);
	json_decref(rep);
	s->err_tail[s->err_len] = '\0';
	size_t len = s->err_len;
	while (len && s->err_tail[len - 1] == '\n')
		s->err_tail[--len] = '\0';
	char *last = strrchr(s->err_tail, '\n');
	last = last ? last + 1 : s->err_tail;
	if (*last)
		snprintf(msg, mlen, "%s", last);
}

static void args_free(char **a)
{
	for (char **p = a; p && *p; p++)
		free(*p);
	free(a);
}

static void sess_free(struct sess *s)
{
	for (int i = 0; i < MAX_SESSIONS; i++)
		if (ss.s[i] == s)
			ss.s[i] = NULL;
	close_fd(&s->in_fd);
	close_fd(&s->out_fd);
	close_fd(&s->err_fd);
	close_fd(&s->audit_fd);
	close_fd(&s->life_fd);
	close_fd(&s->report_fd);
	close_fd(&s->pidfd);
	linebuf_free(&s->out);
	linebuf_free(&s->audit);
	free(s->report);
	free(s->pend);
	json_decref(s->create_id);
	json_decref(s->queued);
	json_decref(s->close_id);
	json_decref(s->restore);
	fileops_fail(s);
	cell_clear(s);
	args_free(s->argv);
	free(s);
}

/* The session's moat run has ended: say so, then start it again or let
 * the session go. */
static void sess_died(struct sess *s)
{
	int status = 0;
	waitpid(s->pid, &status, WNOHANG); /* its pidfd said it ended */
	if (s->err_fd >= 0)
		keep_err(s);
	if (s->report_fd >= 0)
		keep_report(s);
	char verdict[16], msg[512];
	run_report(s, verdict, sizeof verdict, msg, sizeof msg);
	close_fd(&s->in_fd);
	close_fd(&s->out_fd);
	close_fd(&s->err_fd);
	close_fd(&s->audit_fd);
	close_fd(&s->life_fd);
	close_fd(&s->report_fd);
	close_fd(&s->pidfd);
	s->pend_len = 0;
	s->pid = 0;
	fileops_fail(s);
	if (s->exec_id || s->outputs)
		cell_reply(s, "killed", NULL, verdict, !s->closing);
	bool failed = s->creating && !s->closing;
	if (s->creating) {
		reply_error(s->create_id, s->closing ? "the session was closed before it started%s"
						     : "the session did not start: %s",
			    s->closing ? "" : msg);
		s->creating = false;
	}
	if (s->queued && (failed || s->closing))
		reply_error(json_object_get(s->queued, "id"), "session %s is gone", s->name);
	if (s->closing && s->close_id)
		emit(s->close_id, json_pack("{s:b, s:s}", "ok", 1, "verdict", verdict));
	else if (s->closing) /* no request asked: an event, with why */
		emit(NULL, json_pack("{s:s, s:s, s:s, s:s}", "event", "closed", "session", s->name,
				     "reason", s->close_reason ? s->close_reason : "closed",
				     "verdict", verdict));
	if (failed || s->closing) {
		sess_free(s);
		return;
	}
	/* Restarted: a fresh interpreter, the state gone; unless it keeps
	 * dying before it is ready (a file in its directory it imports). */
	s->failed_starts = s->was_ready ? 0 : s->failed_starts + 1;
	if (s->failed_starts >= MAX_FAILED_STARTS) {
		if (s->queued)
			reply_error(json_object_get(s->queued, "id"),
				    "session %s cannot start its interpreter: closed", s->name);
		emit(NULL, json_pack("{s:s, s:s, s:s, s:s, s:s}", "event", "closed", "session",
				     s->name, "reason", "restart-failed", "verdict", verdict, "message",
				     msg));
		sess_free(s);
		return;
	}
	if (sess_spawn(s) < 0) {
		if (s->queued)
			reply_error(json_object_get(s->queued, "id"),
				    "the session's interpreter could not be restarted%s", "");
		sess_free(s);
	}
}

/* ---- requests ---- */

/* moat run's argv, being built. */
struct args {
	char **a;
	size_t n, cap;
	bool oom;
};

static void arg(struct args *v, const char *str)
{
	if (v->oom)
		return;
	if (v->n + 2 > v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		char **a = realloc(v->a, cap * sizeof *a);
		if (!a) {
			v->oom = true;
			return;
		}
		v->a = a;
		v->cap = cap;
	}
	if (!(v->a[v->n] = strdup(str))) {
		v->oom = true;
		return;
	}
	v->a[++v->n] = NULL;
}

/* Each string of array `v` after `opt`: false if one is not a string. */
static bool arg_strings(struct args *out, const json_t *v, const char *opt)
{
	size_t i;
	json_t *x;
	if (!json_is_array(v))
		return false;
	json_array_foreach(v, i, x) {
		if (!json_is_string(x))
			return false;
		if (opt)
			arg(out, opt);
		arg(out, json_string_value(x));
	}
	return true;
}

/* moat run's argv for a create request, or NULL with `why` set. */
static char **run_argv(const json_t *req, const char **why)
{
	struct args v = { 0 };
	const char *k;
	json_t *x, *o;
	arg(&v, "moat");
	arg(&v, "run");
	arg(&v, "--report"); /* read whole when it ends (fd 5) */
	arg(&v, "/dev/fd/5");
	arg(&v, "--audit-log"); /* the session's denials, counted a cell */
	arg(&v, "/dev/fd/3");
	arg(&v, "--lifeline"); /* our death is the sandbox's (fd 4) */
	arg(&v, "4");
	if ((o = json_object_get(req, "memory_limit"))) {
		if (!json_is_string(o)) {
			*why = "memory_limit: a string (\"512M\", \"none\")";
			goto fail;
		}
		arg(&v, "--memory-limit");
		arg(&v, json_string_value(o));
	}
	if ((o = json_object_get(req, "env"))) {
		if (!json_is_object(o)) {
			*why = "env: an object of strings";
			goto fail;
		}
		json_object_foreach(o, k, x) {
			if (!json_is_string(x)) {
				*why = "env: an object of strings";
				goto fail;
			}
			arg(&v, "--setenv");
			arg(&v, k);
			arg(&v, json_string_value(x));
		}
	}
	if ((o = json_object_get(req, "binds"))) {
		size_t i;
		if (!json_is_array(o)) {
			*why = "binds: an array of {src, dst, rw}";
			goto fail;
		}
		json_array_foreach(o, i, x) {
			const char *src = json_string_value(json_object_get(x, "src"));
			const char *dst = json_string_value(json_object_get(x, "dst"));
			if (!src || !dst) {
				*why = "binds: an array of {src, dst, rw}";
				goto fail;
			}
			arg(&v, json_is_true(json_object_get(x, "rw")) ? "--bind" : "--ro-bind");
			arg(&v, src);
			arg(&v, dst);
		}
	}
	if ((o = json_object_get(req, "allow_net")) && !arg_strings(&v, o, "--allow-net")) {
		*why = "allow_net: an array of rules";
		goto fail;
	}
	if ((o = json_object_get(req, "run_args"))) {
		size_t i;
		/* the program, its stdio and its report are the session's */
		json_array_foreach(o, i, x) {
			const char *s = json_string_value(x);
			if (s && (!strcmp(s, "--") || !strcmp(s, "--json") || !strcmp(s, "--report") ||
				  !strcmp(s, "--help") || !strcmp(s, "--version"))) {
				*why = "run_args: moat run's options, without --, --json, --report, "
				       "--help or --version";
				goto fail;
			}
		}
		if (!arg_strings(&v, o, NULL)) {
			*why = "run_args: an array of moat run's options";
			goto fail;
		}
	}
	const char *lang = json_string_value(json_object_get(req, "language"));
	bool bash = lang && !strcmp(lang, "bash");
	if (lang && !bash && strcmp(lang, "python")) {
		*why = "language: python or bash";
		goto fail;
	}
	/* both drivers are Python: the bash one keeps one bash alive */
	arg(&v, "--");
	arg(&v, "python3");
	arg(&v, "-P"); /* not the cwd first on sys.path at start: a json.py there */
	arg(&v, "-c");
	arg(&v, bash ? driver_bash : driver_python);
	if (!v.oom)
		return v.a;
	*why = "out of memory";
fail:
	args_free(v.a);
	return NULL;
}

static void op_create(json_t *id, json_t *req)
{
	if (sess_count() >= ss.max_sessions) {
		reply_error(id, "too many sessions (--max-sessions %s)", "reached");
		return;
	}
	const char *from = json_string_value(json_object_get(req, "restore"));
	json_t *snap = from ? json_object_get(ss.snaps, from) : NULL;
	if (json_object_get(req, "restore") && !snap) {
		reply_error(id, "no such snapshot: %s", from ? from : "(not a name)");
		return;
	}
	const char *why = NULL;
	char **argv = run_argv(req, &why);
	if (!argv) {
		reply_error(id, "%s", why);
		return;
	}
	json_t *mine = argv_json(argv);
	bool same = !snap || json_equal(mine, json_object_get(snap, "argv"));
	json_decref(mine);
	if (!same) {
		args_free(argv);
		reply_error(id, "snapshot %s is restored only into a session with the same options",
			    from);
		return;
	}
	struct sess *s = calloc(1, sizeof *s);
	int slot = -1;
	for (int i = 0; i < MAX_SESSIONS && slot < 0; i++)
		if (!ss.s[i])
			slot = i;
	if (!s || slot < 0) {
		free(s);
		args_free(argv);
		reply_error(id, "out of %s", "memory");
		return;
	}
	s->in_fd = s->out_fd = s->err_fd = s->audit_fd = s->pidfd = -1;
	s->life_fd = s->report_fd = -1;
	s->argv = argv;
	s->bash = !strcmp(json_string_value(json_object_get(req, "language")) ?: "", "bash");
	snprintf(s->name, sizeof s->name, "s%u", ++ss.next_name);
	s->create_id = id ? json_incref(id) : NULL;
	s->creating = true;
	if (snap)
		s->restore = json_incref(snap);
	ss.s[slot] = s;
	int r = sess_spawn(s);
	if (r < 0) {
		reply_error(id, "cannot start moat run: %s", strerror(-r));
		sess_free(s);
	}
}

static struct sess *named(json_t *id, json_t *req)
{
	const char *name = json_string_value(json_object_get(req, "session"));
	struct sess *s = name ? sess_find(name) : NULL;
	if (!s)
		reply_error(id, "no such session: %s", name ? name : "(none given)");
	else if (s->closing)
		reply_error(id, "session %s is closing", s->name);
	return s && !s->closing ? s : NULL;
}

static void op_exec(json_t *id, json_t *req)
{
	struct sess *s = named(id, req);
	if (!s)
		return;
	json_t *timeout = json_object_get(req, "timeout");
	if (!json_is_string(json_object_get(req, "code"))) {
		reply_error(id, "exec needs \"code\", a %s", "string");
	} else if (timeout && !json_is_null(timeout) &&
		   !(json_is_number(timeout) && json_number_value(timeout) >= 0)) {
		reply_error(id, "timeout: seconds, a number %s", ">= 0");
	} else if (s->st == S_BUSY || s->queued) {
		reply_error(id, "session %s is busy", s->name);
	} else if (s->st == S_STARTING) {
		s->queued = json_incref(req); /* run when the interpreter is ready */
	} else {
		cell_start(s, req);
	}
}

/* put_file, get_file, list_files: handed to the driver, whose answer is
 * the reply (file_reply). */
static void op_file(json_t *id, json_t *req, const char *action)
{
	struct sess *s = named(id, req);
	if (!s)
		return;
	json_t *path = json_object_get(req, "path");
	json_t *data = json_object_get(req, "data");
	const char *fmt = json_string_value(json_object_get(req, "format"));
	if (!json_is_string(path) && strcmp(action, "list") && strcmp(action, "snapshot")) {
		reply_error(id, "%s needs \"path\", a string", action);
	} else if (!strcmp(action, "put") && !json_is_string(data)) {
		reply_error(id, "put_file needs \"data\", base64 %s", "text");
	} else if (fmt && strcmp(fmt, "raw") && strcmp(fmt, "tar")) {
		reply_error(id, "format: raw or tar, not %s", fmt);
	} else if (s->st == S_STARTING || s->pid == 0) {
		reply_error(id, "session %s is starting: try again", s->name);
	} else {
		bool snap = !strcmp(action, "snapshot");
		struct fileop *f = fileop_new(s, snap ? "get" : action, id,
					      snap ? FOR_SNAPSHOT : FOR_CLIENT);
		if (!f) {
			reply_error(id, "too many file requests in flight (%s)", "16");
			return;
		}
		json_t *m = json_pack("{s:s, s:i, s:s, s:s, s:I}", "op", "file", "rid", f->rid,
				      "action", f->action, "path",
				      json_is_string(path) ? json_string_value(path) : ".", "max",
				      (json_int_t)(ss.max_msg / 4 * 3 - 4096));
		if (data)
			json_object_set(m, "data", data);
		if (fmt)
			json_object_set_new(m, "format", json_string(fmt));
		to_driver(s, m);
		flush_driver(s);
	}
}

static void op_drop_snapshot(json_t *id, json_t *req)
{
	const char *name = json_string_value(json_object_get(req, "snapshot"));
	json_t *snap = name ? json_object_get(ss.snaps, name) : NULL;
	if (!snap) {
		reply_error(id, "no such snapshot: %s", name ? name : "(none given)");
		return;
	}
	ss.snap_bytes -= json_string_length(json_object_get(snap, "data"));
	json_object_del(ss.snaps, name);
	emit(id, json_pack("{s:b}", "ok", 1));
}

static void op_interrupt(json_t *id, json_t *req)
{
	struct sess *s = named(id, req);
	if (!s)
		return;
	sess_interrupt(s);
	emit(id, json_pack("{s:b}", "ok", 1));
}

static void sess_close(struct sess *s, json_t *id)
{
	s->closing = true;
	s->close_id = id ? json_incref(id) : NULL;
	s->st = S_CLOSING;
	close_fd(&s->in_fd); /* the driver reads its end: it leaves */
	s->pend_len = 0;
	s->kill_at = now_ms() + CLOSE_WAIT_MS;
}

static void op_close(json_t *id, json_t *req)
{
	struct sess *s = named(id, req);
	if (s)
		sess_close(s, id);
}

static void op_list(json_t *id)
{
	json_t *list = json_array();
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct sess *s = ss.s[i];
		if (s)
			json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:i}", "session",
							      s->name, "language",
							      s->bash ? "bash" : "python",
							      "busy", s->st == S_BUSY,
							      "execution_count", s->count));
	}
	emit(id, json_pack("{s:b, s:o}", "ok", 1, "sessions", list));
}

static void client_line(void *ctx, char *text, size_t len)
{
	if (!ctx && ss.skipping) { /* the end of a request past the limit */
		ss.skipping = false;
		return;
	}
	json_error_t jerr;
	json_t *req = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	json_t *who = NULL;
	if (ctx) { /* a socket's client: its replies find their way back */
		int c = (int)(intptr_t)ctx - 1;
		json_t *theirs = json_object_get(req, "id");
		who = json_pack("[i, i, O]", c, ss.cl[c].gen, theirs ? theirs : json_null());
	}
	if (!json_is_object(req)) {
		reply_error(who, "a request is one JSON object a line (%s)",
			    req ? "not an object" : jerr.text);
		json_decref(req);
		json_decref(who);
		return;
	}
	if (who)
		json_object_set_new(req, "id", who);
	session_request(req);
	json_decref(req);
}

void session_request(json_t *req)
{
	json_t *id = json_object_get(req, "id");
	const char *op = json_string_value(json_object_get(req, "op"));
	if (!op)
		reply_error(id, "a request needs \"op\"%s", "");
	else if (!strcmp(op, "create"))
		op_create(id, req);
	else if (!strcmp(op, "exec"))
		op_exec(id, req);
	else if (!strcmp(op, "interrupt"))
		op_interrupt(id, req);
	else if (!strcmp(op, "close"))
		op_close(id, req);
	else if (!strcmp(op, "list"))
		op_list(id);
	else if (!strcmp(op, "put_file"))
		op_file(id, req, "put");
	else if (!strcmp(op, "get_file"))
		op_file(id, req, "get");
	else if (!strcmp(op, "list_files"))
		op_file(id, req, "list");
	else if (!strcmp(op, "snapshot"))
		op_file(id, req, "snapshot");
	else if (!strcmp(op, "drop_snapshot"))
		op_drop_snapshot(id, req);
	else
		reply_error(id, "unknown op: %s", op);
}

/* ---- clients on a socket (--listen) ---- */

/* A client went: its running cells are interrupted (docs/sessions.md);
 * the sessions stay for a later client, or for their idle close. */
static void client_drop(int c)
{
	struct client *k = &ss.cl[c];
	if (k->fd < 0)
		return;
	close_fd(&k->fd);
	linebuf_free(&k->in);
	free(k->out);
	k->out = NULL;
	k->out_len = 0;
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct sess *s = ss.s[i];
		json_t *id = s ? s->exec_id : NULL;
		if (s && s->st == S_BUSY && json_integer_value(json_array_get(id, 0)) == c &&
		    (unsigned)json_integer_value(json_array_get(id, 1)) == k->gen)
			sess_interrupt(s);
	}
}

static void client_accept(void)
{
	int fd = accept4(ss.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (int c = 0; c < MAX_CLIENTS; c++)
		if (ss.cl[c].fd < 0) {
			ss.cl[c] = (struct client){ .fd = fd, .gen = ++ss.next_gen };
			return;
		}
	close(fd); /* full: it sees the connection end */
}

static void client_flush(int c)
{
	struct client *k = &ss.cl[c];
	while (k->out_len) {
		ssize_t w = send(k->fd, k->out, k->out_len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) {
			client_drop(c);
			return;
		}
		memmove(k->out, k->out + w, k->out_len - (size_t)w);
		k->out_len -= (size_t)w;
	}
}

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* The socket, mode 0600 (the umask is 077 while it is made): 0, or the
 * exit code after a one-line message. */
static int listen_open(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(ss.listen_path) >= sizeof a.sun_path) {
		fprintf(stderr, "moat session: --listen %s: a socket path is at most %zu bytes\n",
			ss.listen_path, sizeof a.sun_path - 1);
		return 125;
	}
	snprintf(a.sun_path, sizeof a.sun_path, "%s", ss.listen_path);
	ss.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	mode_t old = umask(077);
	int r = ss.listen_fd < 0 ? -1 : bind(ss.listen_fd, (struct sockaddr *)&a, sizeof a);
	int e = errno;
	umask(old);
	if (r < 0 || listen(ss.listen_fd, 16) < 0) {
		fprintf(stderr, "moat session: --listen %s: %s%s\n", ss.listen_path, strerror(e),
			e == EADDRINUSE ? " (remove it, if no moat session serves it)" : "");
		return 125;
	}
	chmod(ss.listen_path, 0600); /* 0700 from the umask: no x either */
	for (int c = 0; c < MAX_CLIENTS; c++)
		ss.cl[c].fd = -1;
	struct sigaction sa = { .sa_handler = on_stop }; /* no SA_RESTART: poll sees it */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return 0;
}

/* ---- the loop ---- */

/* Deadlines due: a cell's timeout, its grace, a closing driver's wait.
 * The poll's timeout until the next one (-1: none). */
static int deadlines(void)
{
	uint64_t now = now_ms(), next = 0;
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct sess *s = ss.s[i];
		if (!s || !s->pid)
			continue;
		if (s->st == S_BUSY && s->deadline && now >= s->deadline && !s->interrupted) {
			s->timed_out = true;
			sess_interrupt(s);
		}
		if (s->st == S_BUSY && s->grace_at && now >= s->grace_at && !s->killed)
			sess_kill(s);
		for (int f = 0; f < MAX_FILEOPS; f++)
			if (s->files[f].rid && now >= s->files[f].due && !s->killed)
				protocol_error(s, "the driver did not answer a file request in 60 s");
		if (s->st == S_STARTING && now >= s->started + START_WAIT_MS && !s->killed)
			sess_kill(s); /* its death says the rest (sess_died) */
		uint64_t idle_at = s->st == S_READY && !s->queued && ss.idle_s > 0
					   ? s->last_active + (uint64_t)(ss.idle_s * 1000)
					   : 0;
		if (idle_at && now >= idle_at) {
			s->close_reason = "idle";
			sess_close(s, NULL);
			idle_at = 0;
		}
		if (s->closing && now >= s->kill_at && !s->killed)
			sess_kill(s);
		else if (s->killed && now >= s->kill_at && !s->hard_killed) {
			signal_run(s, SIGKILL);
			s->hard_killed = true;
		}
		uint64_t due[5] = { s->st == S_BUSY && !s->interrupted ? s->deadline : 0,
				    s->st == S_BUSY && !s->killed ? s->grace_at : 0,
				    s->closing && !s->killed ? s->kill_at : 0,
				    s->killed && !s->hard_killed ? s->kill_at : 0, idle_at };
		for (int k = 0; k < 5; k++)
			if (due[k] && (!next || due[k] < next))
				next = due[k];
	}
	if (!next)
		return -1;
	return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

/* What the loop polls: each fd, and whose it is. */
#define POLL_MAX (3 + MAX_CLIENTS + MAX_SESSIONS * 6)
struct pollset {
	struct pollfd p[POLL_MAX];
	struct sess *who[POLL_MAX]; /* the session, or NULL */
	int client[POLL_MAX]; /* -1 stdin or a session's, -2 the socket, -3 stdout, else a client */
	int n;
};

static void poll_add(struct pollset *ps, int fd, short events, struct sess *s, int client)
{
	ps->p[ps->n] = (struct pollfd){ fd, events, 0 };
	ps->who[ps->n] = s;
	ps->client[ps->n++] = client;
}

static void poll_build(struct pollset *ps)
{
	ps->n = 0;
	if (ss.stdin_open && !ss.listen_path)
		poll_add(ps, 0, POLLIN, NULL, -1);
	if (!ss.listen_path && !ss.out_gone)
		poll_add(ps, 1, 0, NULL, -3); /* POLLERR: the reader of stdout is gone */
	if (ss.stdin_open && ss.listen_path)
		poll_add(ps, ss.listen_fd, POLLIN, NULL, -2);
	for (int c = 0; ss.listen_path && c < MAX_CLIENTS; c++)
		if (ss.cl[c].fd >= 0)
			poll_add(ps, ss.cl[c].fd, POLLIN | (ss.cl[c].out_len ? POLLOUT : 0), NULL, c);
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct sess *s = ss.s[i];
		if (!s || !s->pid)
			continue;
		int fds[6] = { s->pidfd,    s->out_fd,    s->err_fd,
			       s->audit_fd, s->report_fd, s->in_fd };
		for (int k = 0; k < 6; k++)
			if (fds[k] >= 0 && (k < 5 || s->pend_len))
				poll_add(ps, fds[k], k == 5 ? POLLOUT : POLLIN, s, -1);
	}
}

/* Every session closes; the loop ends once they are gone. */
static void close_all(const char *why)
{
	ss.stdin_open = false;
	for (int i = 0; i < MAX_SESSIONS; i++)
		if (ss.s[i] && !ss.s[i]->closing) {
			ss.s[i]->close_reason = why;
			sess_close(ss.s[i], NULL);
		}
}

/* A client's socket is ready. */
static void client_ready(int c, const struct pollfd *p)
{
	if (ss.cl[c].fd != p->fd)
		return; /* dropped this round */
	if (p->revents & POLLOUT)
		client_flush(c);
	if (ss.cl[c].fd < 0 || !(p->revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	int r = read_lines(ss.cl[c].fd, &ss.cl[c].in, ss.max_msg, client_line, (void *)(intptr_t)(c + 1));
	for (; ss.cl[c].in.dropped; ss.cl[c].in.dropped--)
		client_write(c, json_pack("{s:b, s:s}", "ok", 0, "error",
					  "a request longer than --max-message: skipped"));
	if (r == -1 || r == -2)
		client_drop(c);
}

/* Is the session doing nothing, nor about to? */
static bool sess_idle(const struct sess *s)
{
	if (s->st != S_READY || s->queued || s->creating || s->closing)
		return false;
	for (int i = 0; i < MAX_FILEOPS; i++)
		if (s->files[i].rid)
			return false;
	return true;
}

/* stdin has ended: each session closes once what was asked of it is
 * done (a script that pipes its requests in gets every reply). */
static void close_idle(void)
{
	for (int i = 0; i < MAX_SESSIONS; i++)
		if (ss.s[i] && sess_idle(ss.s[i])) {
			ss.s[i]->close_reason = "stdin-ended";
			sess_close(ss.s[i], NULL);
		}
}

static void stdin_ready(void)
{
	int r = read_lines(0, &ss.in, ss.max_msg, ss.in_line, NULL);
	for (; ss.in.dropped; ss.in.dropped--)
		reply_error(NULL, "a request longer than %s bytes: skipped", "--max-message");
	if (r == -2) {
		/* answered, and skipped to its end: the next line is served */
		reply_error(NULL, "a request longer than %s bytes: skipped", "--max-message");
		linebuf_free(&ss.in);
		ss.skipping = true;
	} else if (r == -1) {
		ss.stdin_open = false;
		ss.draining = true;
	}
}

/* One of a session's fds is ready. */
static void sess_ready(struct sess *s, int fd)
{
	if (!sess_alive(s) || !s->pid)
		return; /* gone or restarted in this round */
	if (fd == s->out_fd) {
		int r = read_lines(s->out_fd, &s->out, ss.max_msg, driver_line, s);
		if (r == -2 || s->out.dropped) {
			linebuf_free(&s->out);
			protocol_error(s, "the driver sent a message longer than the limit "
					  "(--max-message)");
		} else if (r == -1) {
			close_fd(&s->out_fd);
		}
	} else if (fd == s->err_fd) {
		keep_err(s);
	} else if (fd == s->audit_fd) {
		audit_drain(s);
	} else if (fd == s->report_fd) {
		keep_report(s);
	} else if (fd == s->in_fd) {
		flush_driver(s);
	} else if (fd == s->pidfd) {
		/* what it wrote before it died, first (as much as the pipe
		 * holds now: its writers may still be dying) */
		while (s->out_fd >= 0 && read_lines(s->out_fd, &s->out, ss.max_msg, driver_line, s) == 0)
			;
		sess_died(s);
	}
}

static int serve(void)
{
	static struct pollset ps;
	for (;;) {
		if (!ss.stdin_open && !sess_count())
			return 0;
		if (stop_signal && ss.stdin_open)
			close_all("shutdown"); /* --listen's end */
		if (ss.draining)
			close_idle();
		int timeout = deadlines(); /* first: it may queue an interrupt */
		poll_build(&ps);
		if (poll(ps.p, (nfds_t)ps.n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return 125;
		}
		for (int k = 0; k < ps.n; k++) {
			if (!ps.p[k].revents)
				continue;
			if (ps.who[k])
				sess_ready(ps.who[k], ps.p[k].fd);
			else if (ps.client[k] == -2)
				client_accept();
			else if (ps.client[k] == -3) {
				/* the client died: its cells are ended, not finished */
				ss.out_gone = true;
				close_all("client-gone");
			}
			else if (ps.client[k] >= 0)
				client_ready(ps.client[k], &ps.p[k]);
			else
				stdin_ready();
		}
		/* the front end's turn: what it asks now is served this round */
		while (ss.out && json_array_size(ss.outq)) {
			json_t *pair = json_incref(json_array_get(ss.outq, 0));
			json_array_remove(ss.outq, 0);
			json_t *id = json_array_get(pair, 0);
			ss.out(json_is_null(id) ? NULL : id, json_incref(json_array_get(pair, 1)));
			json_decref(pair);
		}
		for (int i = 0; i < MAX_SESSIONS; i++)
			if (ss.s[i] && ss.s[i]->pend_len)
				flush_driver(ss.s[i]);
		for (int c = 0; ss.listen_path && c < MAX_CLIENTS; c++)
			if (ss.cl[c].fd >= 0 && ss.cl[c].out_len)
				client_flush(c);
	}
}

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "moat session: %s%s (try: moat session --help)\n", what, arg ? arg : "");
	return 125;
}

static void session_usage(FILE *f)
{
	fputs("usage: moat session [--listen PATH] [--grace SEC] [--idle-timeout SEC]\n"
	      "                    [--max-sessions N] [--max-message BYTES] [--snapshot-memory BYTES]\n"
	      "\n"
	      "Serves live interpreters in sandboxes over JSON lines: requests on stdin,\n"
	      "replies and events on stdout (docs/sessions.md).\n"
	      "  --listen PATH       serve clients on a Unix socket at PATH (mode 0600) instead\n"
	      "                      of stdin and stdout, until SIGINT or SIGTERM\n"
	      "  --grace SEC         an interrupted cell's time to stop before its\n"
	      "                      interpreter is killed and restarted (default 2)\n"
	      "  --idle-timeout SEC  a session without a cell for SEC is closed (default\n"
	      "                      1200; 0: never)\n"
	      "  --max-sessions N    sessions at once (default and most: 64)\n"
	      "  --max-message BYTES a request or a driver's message at most (default 32 MiB)\n"
	      "  --snapshot-memory BYTES  the snapshots kept, together (default 256 MiB)\n",
	      f);
}

int session_options(int argc, char **argv)
{
	ss.grace_s = 2;
	ss.idle_s = 1200;
	ss.max_sessions = MAX_SESSIONS;
	ss.max_msg = 32u << 20;
	ss.snap_max = 256u << 20;
	ss.snaps = json_object();
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (i + 1 >= argc)
			return usage_error("unknown option or missing value: ", a);
		char *end;
		const char *v = argv[++i];
		errno = 0;
		if (!strcmp(a, "--grace")) {
			ss.grace_s = strtod(v, &end);
			if (errno || *end || end == v || !(ss.grace_s >= 0 && ss.grace_s <= 3600))
				return usage_error("--grace: seconds from 0 to 3600, not ", v);
		} else if (!strcmp(a, "--idle-timeout")) {
			ss.idle_s = strtod(v, &end);
			if (errno || *end || end == v || !(ss.idle_s >= 0 && ss.idle_s <= 86400 * 7))
				return usage_error("--idle-timeout: seconds from 0 to a week, not ", v);
		} else if (!strcmp(a, "--max-sessions")) {
			long n = strtol(v, &end, 10);
			if (errno || *end || end == v || n < 1 || n > MAX_SESSIONS)
				return usage_error("--max-sessions: 1 to 64, not ", v);
			ss.max_sessions = (int)n;
		} else if (!strcmp(a, "--listen")) {
			ss.listen_path = v;
		} else if (!strcmp(a, "--snapshot-memory")) {
			long long n = strtoll(v, &end, 10);
			if (errno || *end || end == v || n < 0 || n > (16LL << 30))
				return usage_error("--snapshot-memory: bytes from 0 to 16 GiB, not ", v);
			ss.snap_max = (size_t)n;
		} else if (!strcmp(a, "--max-message")) {
			long long n = strtoll(v, &end, 10);
			if (errno || *end || end == v || n < 4096 || n > (1LL << 30))
				return usage_error("--max-message: bytes from 4096 to 1 GiB, not ", v);
			ss.max_msg = (size_t)n;
		} else {
			return usage_error("unknown option: ", a);
		}
	}
	ssize_t n = readlink("/proc/self/exe", ss.exe, sizeof ss.exe - 1);
	if (n <= 0)
		return usage_error("cannot find moat's own binary (/proc/self/exe)", NULL);
	ss.exe[n] = '\0';
	return 0;
}

int session_serve(session_out_fn out, session_in_fn in)
{
	ss.out = out;
	ss.outq = json_array();
	ss.in_line = in;
	ss.stdin_open = true;
	if (ss.listen_path) {
		int r = listen_open();
		if (r)
			return r;
	}
	int r = serve();
	if (ss.listen_path)
		unlink(ss.listen_path);
	return r;
}

int cmd_session(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			session_usage(stdout);
			return 0;
		}
	int r = session_options(argc, argv);
	return r ? r : session_serve(NULL, client_line);
}
