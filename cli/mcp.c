/* `moat mcp`: the sessions as a Model Context Protocol server over stdio
 * (JSON-RPC 2.0, one message a line; docs/sessions.md "MCP").
 *
 * A front end of the session engine (cli/session.c): the client's calls
 * become the engine's requests, the engine's replies become the calls'
 * results.  One session serves the client, made at `initialize` with the
 * `moat run` options given after `--`, and made again after a reset or
 * an idle close.  Calls are served one at a time, in order. */
#include "cli/mcp.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/session.h"

#define MCP_TEXT_MAX (1u << 20) /* a tool's text content at most */

static const char *const versions[] = { "2025-06-18", "2025-03-26", "2024-11-05" };

static struct {
	json_t *run_args; /* moat run's options for the session */
	char session[16]; /* "": none yet */
	bool starting;    /* a create is out */
	json_t *queue;    /* calls waiting, in order */
	json_t *cur;      /* the call being served, or NULL */
	int step;         /* of cur: which engine reply is awaited */
	char *text;       /* a run's stdout and stderr, gathered */
	size_t text_len;
	bool text_cut;
	json_t *images; /* a run's image/png outputs */
} mc;

enum { STEP_NONE, STEP_CREATE, STEP_TOOL, STEP_RESET_CLOSE };

static const char *mcp_version = "0.1.0";

static void rpc_result(json_t *id, json_t *result)
{
	session_write(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
				"result", result));
}

static void rpc_error(json_t *id, int code, const char *msg)
{
	session_write(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
				id ? id : json_null(), "error", "code", code, "message", msg));
}

/* A tool's result: one text item (and `extra` content, taken, or NULL). */
static void tool_result(json_t *id, const char *text, json_t *extra, bool is_error)
{
	json_t *content = json_array();
	json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", text));
	if (extra)
		json_array_extend(content, extra);
	json_decref(extra);
	rpc_result(id, json_pack("{s:o, s:b}", "content", content, "isError", is_error));
}

/* ---- base64, for upload_file's text and download_file's text ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const unsigned char *in, size_t n)
{
	char *out = malloc(n / 3 * 4 + 5);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

/* Decoded bytes of `in` (the sandbox's: checked char by char), or NULL. */
static unsigned char *b64_decode(const char *in, size_t n, size_t *len)
{
	if (n % 4)
		return NULL;
	unsigned char *out = malloc(n / 4 * 3 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		int pad = 0;
		for (int k = 0; k < 4; k++) {
			const char *p = in[i + k] ? strchr(b64, in[i + k]) : NULL;
			if (in[i + k] == '=' && i + 4 == n && k >= 2) {
				pad++;
				v <<= 6;
				continue;
			}
			if (!p || pad) {
				free(out);
				return NULL;
			}
			v = v << 6 | (uint32_t)(p - b64);
		}
		out[o++] = (unsigned char)(v >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(v >> 8);
		if (pad < 1)
			out[o++] = (unsigned char)v;
	}
	*len = o;
	return out;
}

/* ---- the session behind the calls ---- */

static void text_add(const char *s)
{
	size_t n = strlen(s);
	if (mc.text_len + n > MCP_TEXT_MAX) {
		n = MCP_TEXT_MAX - mc.text_len;
		mc.text_cut = true;
	}
	char *t = realloc(mc.text, mc.text_len + n + 1);
	if (!t)
		return;
	memcpy(t + mc.text_len, s, n);
	mc.text_len += n;
	t[mc.text_len] = '\0';
	mc.text = t;
}

static void run_clear(void)
{
	free(mc.text);
	mc.text = NULL;
	mc.text_len = 0;
	mc.text_cut = false;
	json_decref(mc.images);
	mc.images = json_array();
}

/* A request to the engine about the current call. */
static void engine(json_t *req, int step)
{
	mc.step = step;
	json_object_set_new(req, "id", json_integer(step));
	session_request(req);
	json_decref(req);
}

static void create_session(void)
{
	json_t *req = json_pack("{s:s, s:s}", "op", "create", "language", "python");
	if (mc.run_args)
		json_object_set(req, "run_args", mc.run_args);
	mc.starting = true;
	engine(req, STEP_CREATE);
}

static json_t *arguments(void)
{
	json_t *a = json_object_get(json_object_get(mc.cur, "params"), "arguments");
	return json_is_object(a) ? a : NULL;
}

/* The engine request for the current tools/call, or a result at once. */
static void tool_start(void)
{
	json_t *id = json_object_get(mc.cur, "id");
	const char *name = json_string_value(json_object_get(json_object_get(mc.cur, "params"), "name"));
	json_t *args = arguments();
	const char *path = json_string_value(json_object_get(args, "path"));
	json_t *req = NULL;
	run_clear();
	if (!name) {
		rpc_error(id, -32602, "tools/call needs params.name");
	} else if (!strcmp(name, "reset_session")) {
		if (!mc.session[0]) {
			create_session();
			return;
		}
		engine(json_pack("{s:s, s:s}", "op", "close", "session", mc.session), STEP_RESET_CLOSE);
		return;
	} else if (!strcmp(name, "run_code")) {
		json_t *code = json_object_get(args, "code");
		json_t *timeout = json_object_get(args, "timeout");
		if (!json_is_string(code)) {
			rpc_error(id, -32602, "run_code needs arguments.code, a string");
		} else {
			req = json_pack("{s:s, s:s, s:O}", "op", "exec", "session", mc.session, "code",
					code);
			if (json_is_number(timeout))
				json_object_set(req, "timeout", timeout);
		}
	} else if (!strcmp(name, "upload_file")) {
		const char *text = json_string_value(json_object_get(args, "content"));
		json_t *raw = json_object_get(args, "content_base64");
		if (!path || (!text && !json_is_string(raw))) {
			rpc_error(id, -32602,
				  "upload_file needs arguments.path and content (text) or content_base64");
		} else {
			char *data = text ? b64_encode((const unsigned char *)text, strlen(text))
					  : strdup(json_string_value(raw));
			if (data)
				req = json_pack("{s:s, s:s, s:s, s:s}", "op", "put_file", "session",
						mc.session, "path", path, "data", data);
			free(data);
		}
	} else if (!strcmp(name, "download_file")) {
		if (!path)
			rpc_error(id, -32602, "download_file needs arguments.path");
		else
			req = json_pack("{s:s, s:s, s:s}", "op", "get_file", "session", mc.session,
					"path", path);
	} else if (!strcmp(name, "list_files")) {
		req = json_pack("{s:s, s:s, s:s}", "op", "list_files", "session", mc.session, "path",
				path ? path : ".");
	} else {
		rpc_error(id, -32602, "unknown tool");
	}
	if (req) {
		engine(req, STEP_TOOL);
	} else if (mc.step == STEP_NONE) { /* answered at once: the caller serves the next */
		json_decref(mc.cur);
		mc.cur = NULL;
	}
}

static void serve_next(void);

static void call_done(void)
{
	json_decref(mc.cur);
	mc.cur = NULL;
	mc.step = STEP_NONE;
	serve_next();
}

/* run_code's result: the output as text, the figures as images. */
static void run_result(json_t *id, json_t *r)
{
	const char *status = json_string_value(json_object_get(r, "status"));
	json_t *err = json_object_get(r, "error");
	const char *res = json_string_value(json_object_get(json_object_get(r, "result"), "text/plain"));
	json_t *outputs = json_object_get(r, "outputs");
	size_t i;
	json_t *o;
	if (res) {
		text_add(mc.text_len && mc.text[mc.text_len - 1] != '\n' ? "\n" : "");
		text_add(res);
		text_add("\n");
	}
	if (json_is_object(err)) {
		json_t *line;
		size_t k;
		json_array_foreach(json_object_get(err, "traceback"), k, line) {
			text_add(json_string_value(line) ?: "");
			text_add("\n");
		}
	}
	if (status && strcmp(status, "ok")) {
		char note[160];
		snprintf(note, sizeof note, "[moat: the cell ended: %s, verdict %s%s]\n", status,
			 json_string_value(json_object_get(r, "verdict")) ?: "?",
			 json_is_true(json_object_get(r, "restarted"))
				 ? "; the interpreter was restarted, its state is lost"
				 : "");
		text_add(note);
	}
	if (mc.text_cut)
		text_add("[moat: output cut at 1 MiB]\n");
	json_array_foreach(outputs, i, o) {
		json_t *png = json_object_get(o, "image/png");
		if (json_is_string(png))
			json_array_append_new(mc.images, json_pack("{s:s, s:O, s:s}", "type", "image",
								   "data", png, "mimeType",
								   "image/png"));
	}
	json_t *images = mc.images;
	mc.images = NULL;
	tool_result(id, mc.text_len ? mc.text : "(no output)", images, !status || strcmp(status, "ok"));
}

/* download_file's result: the file as an embedded resource (text when
 * it is UTF-8, a blob otherwise). */
static void download_result(json_t *id, json_t *r)
{
	const char *data = json_string_value(json_object_get(r, "data"));
	const char *path = json_string_value(json_object_get(json_object_get(mc.cur, "params"), "arguments")
						     ? json_object_get(arguments(), "path")
						     : NULL);
	char uri[4200], summary[256];
	snprintf(uri, sizeof uri, "file://%s%s", path && path[0] == '/' ? "" : "/workspace/",
		 path ? path : "");
	snprintf(summary, sizeof summary, "%lld bytes, sha256 %s, format %s",
		 (long long)json_integer_value(json_object_get(r, "size")),
		 json_string_value(json_object_get(r, "sha256")) ?: "?",
		 json_string_value(json_object_get(r, "format")) ?: "?");
	size_t n = 0;
	unsigned char *bytes = data ? b64_decode(data, strlen(data), &n) : NULL;
	json_t *text = bytes && !memchr(bytes, 0, n) ? json_stringn((const char *)bytes, n) : NULL;
	json_t *res = json_pack("{s:s}", "uri", uri);
	if (text) {
		json_object_set_new(res, "mimeType", json_string("text/plain"));
		json_object_set_new(res, "text", text);
	} else {
		json_object_set_new(res, "mimeType", json_string("application/octet-stream"));
		json_object_set_new(res, "blob", json_string(data ? data : ""));
	}
	free(bytes);
	tool_result(id, summary, json_pack("[{s:s, s:o}]", "type", "resource", "resource", res),
		    false);
}

static void list_result(json_t *id, json_t *r)
{
	size_t i;
	json_t *e;
	run_clear();
	json_array_foreach(json_object_get(r, "entries"), i, e) {
		char line[600];
		snprintf(line, sizeof line, "%-5s %12lld  %s\n",
			 json_string_value(json_object_get(e, "type")) ?: "?",
			 (long long)json_integer_value(json_object_get(e, "size")),
			 json_string_value(json_object_get(e, "name")) ?: "?");
		text_add(line);
	}
	tool_result(id, mc.text_len ? mc.text : "(empty)", NULL, false);
}

/* The engine's reply or event about the current call. */
static void engine_out(json_t *rid, json_t *obj)
{
	const char *ev = json_string_value(json_object_get(obj, "event"));
	json_t *id = json_object_get(mc.cur, "id");
	if (!rid && !ev) { /* about no call: a line the engine could not take */
		const char *e = json_string_value(json_object_get(obj, "error"));
		rpc_error(NULL, -32600, e ? e : "invalid request");
	} else if (ev && !strcmp(ev, "closed")) {
		mc.session[0] = '\0'; /* closed idle: made again at the next call */
	} else if (ev && !strcmp(ev, "stream")) {
		text_add(json_string_value(json_object_get(obj, "text")) ?: "");
	} else if (ev) {
		/* display: in the reply's outputs too */
	} else if (json_integer_value(rid) == STEP_CREATE && mc.step == STEP_CREATE) {
		mc.starting = false;
		const char *name = json_string_value(json_object_get(obj, "session"));
		if (json_is_true(json_object_get(obj, "ok")) && name) {
			snprintf(mc.session, sizeof mc.session, "%s", name);
			mc.step = STEP_NONE;
			if (mc.cur && !strcmp(json_string_value(json_object_get(json_object_get(mc.cur, "params"), "name")) ?: "",
					       "reset_session")) {
				tool_result(id, "a fresh session: every variable and file is gone",
					    NULL, false);
				call_done();
			} else {
				if (mc.cur)
					tool_start();
				if (!mc.cur && mc.step == STEP_NONE)
					serve_next();
			}
		} else {
			const char *e = json_string_value(json_object_get(obj, "error"));
			if (mc.cur)
				tool_result(id, e ? e : "the session did not start", NULL, true);
			mc.step = STEP_NONE;
			call_done();
		}
	} else if (json_integer_value(rid) == STEP_RESET_CLOSE && mc.step == STEP_RESET_CLOSE) {
		mc.session[0] = '\0';
		create_session();
	} else if (json_integer_value(rid) == STEP_TOOL && mc.step == STEP_TOOL && mc.cur) {
		const char *name =
			json_string_value(json_object_get(json_object_get(mc.cur, "params"), "name"));
		if (!json_is_true(json_object_get(obj, "ok")))
			tool_result(id, json_string_value(json_object_get(obj, "error")) ?: "failed",
				    NULL, true);
		else if (!strcmp(name, "run_code"))
			run_result(id, obj);
		else if (!strcmp(name, "download_file"))
			download_result(id, obj);
		else if (!strcmp(name, "list_files"))
			list_result(id, obj);
		else
			tool_result(id, "written", NULL, false);
		call_done();
	}
	json_decref(obj);
}

static json_t *tools_list(void)
{
	return json_pack(
		"{s:[{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}, s:[s]}},"
		"{s:s, s:s, s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}}, s:[s]}},"
		"{s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}},"
		"{s:s, s:s, s:{s:s, s:{s:{s:s}}}},"
		"{s:s, s:s, s:{s:s, s:{}}}]}",
		"tools",
		/* run_code */
		"name", "run_code", "description",
		"Run Python code in a persistent sandboxed interpreter (variables, imports and "
		"files stay between calls). Returns stdout, stderr, the value of the last "
		"expression, the traceback of an error, and matplotlib figures as images.",
		"inputSchema", "type", "object", "properties", "code", "type", "string",
		"description", "Python source, one or more statements", "timeout", "type", "number",
		"description", "seconds; past them the code is interrupted (KeyboardInterrupt)",
		"required", "code",
		/* upload_file */
		"name", "upload_file", "description",
		"Write a file into the sandbox (relative paths are below /workspace).", "inputSchema",
		"type", "object", "properties", "path", "type", "string", "content", "type", "string",
		"content_base64", "type", "string", "required", "path",
		/* download_file */
		"name", "download_file", "description",
		"Read a file from the sandbox (a directory comes back as a tar archive).",
		"inputSchema", "type", "object", "properties", "path", "type", "string", "required",
		"path",
		/* list_files */
		"name", "list_files", "description", "List a directory of the sandbox.", "inputSchema",
		"type", "object", "properties", "path", "type", "string",
		/* reset_session */
		"name", "reset_session", "description",
		"Start a fresh interpreter and sandbox: every variable and file is lost.",
		"inputSchema", "type", "object", "properties");
}

static void serve_call(json_t *msg)
{
	json_t *id = json_object_get(msg, "id");
	const char *method = json_string_value(json_object_get(msg, "method"));
	if (!strcmp(method, "initialize")) {
		const char *want = json_string_value(
			json_object_get(json_object_get(msg, "params"), "protocolVersion"));
		const char *v = versions[0];
		for (size_t i = 0; want && i < sizeof versions / sizeof versions[0]; i++)
			if (!strcmp(want, versions[i]))
				v = versions[i];
		rpc_result(id, json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}", "protocolVersion", v,
					 "capabilities", "tools", "listChanged", 0, "serverInfo",
					 "name", "moat", "version", mcp_version, "instructions",
					 "Python runs in a moat sandbox: no network unless allowed, "
					 "files below /workspace, state kept between run_code calls."));
		if (!mc.session[0] && !mc.starting)
			create_session(); /* ready by the first call */
	} else if (!strcmp(method, "ping")) {
		rpc_result(id, json_object());
	} else if (!strcmp(method, "tools/list")) {
		rpc_result(id, tools_list());
	} else if (!strcmp(method, "tools/call")) {
		mc.cur = json_incref(msg);
		if (!mc.session[0]) {
			if (!mc.starting)
				create_session();
			return; /* tool_start once it is there */
		}
		tool_start();
		return;
	} else if (id) {
		rpc_error(id, -32601, "method not found");
	}
}

static void serve_next(void)
{
	while (!mc.cur && mc.step == STEP_NONE && json_array_size(mc.queue)) {
		json_t *msg = json_incref(json_array_get(mc.queue, 0));
		json_array_remove(mc.queue, 0);
		serve_call(msg);
		json_decref(msg);
	}
}

static void mcp_line(void *ctx, char *text, size_t len)
{
	(void)ctx;
	json_error_t jerr;
	json_t *msg = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg) {
		rpc_error(NULL, -32700, "parse error");
		return;
	}
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");
	if (!json_is_object(msg) || !method ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")) ?: "", "2.0")) {
		if (!json_object_get(msg, "result") && !json_object_get(msg, "error"))
			rpc_error(id, -32600, "invalid request");
		json_decref(msg); /* a response to us: we ask nothing */
		return;
	}
	if (!strncmp(method, "notifications/", 14)) {
		json_decref(msg); /* initialized, cancelled...: nothing to do */
		return;
	}
	json_array_append_new(mc.queue, msg);
	serve_next();
}

int cmd_mcp(int argc, char **argv)
{
	int sep = argc;
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			sep = i;
			break;
		}
	for (int i = 0; i < sep; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts("usage: moat mcp [SESSION OPTIONS] [-- MOAT RUN OPTIONS]\n"
			     "\n"
			     "A Model Context Protocol server over stdio: the tools run_code,\n"
			     "upload_file, download_file, list_files and reset_session act on one\n"
			     "sandboxed Python session (docs/sessions.md).  SESSION OPTIONS are\n"
			     "moat session's; after --, moat run's options for the sandbox.");
			return 0;
		}
	int r = session_options(sep, argv);
	if (r)
		return r;
	mc.queue = json_array();
	mc.images = json_array();
	if (sep < argc) {
		mc.run_args = json_array();
		for (int i = sep + 1; i < argc; i++)
			json_array_append_new(mc.run_args, json_string(argv[i]));
	}
	return session_serve(engine_out, mcp_line);
}
