/* `moat session`: live interpreters in sandboxes, over JSON lines
 * (docs/sessions.md).  Each session is a `moat run` of its own, started by
 * this process, with the driver (drivers/) as its program. */
#ifndef MOAT_SESSION_H
#define MOAT_SESSION_H

#include <jansson.h>
#include <stddef.h>

/* The subcommand: argv after "session".  moat's exit code. */
int cmd_session(int argc, char **argv);

/* The engine, for another front end (cli/mcp.c, `moat mcp`). */
typedef void (*session_out_fn)(json_t *id, json_t *obj); /* obj is taken */
typedef void (*session_in_fn)(void *ctx, char *line, size_t len);
/* `moat session`'s options (argv without the subcommand): 0, or the exit
 * code after a one-line message. */
int session_options(int argc, char **argv);
/* Serve until stdin ends and every session is gone: each line of stdin
 * goes to `in`, each reply and event to `out` with the id of its request.
 * moat's exit code. */
int session_serve(session_out_fn out, session_in_fn in);
/* A request, as if a client had sent it (not taken). */
void session_request(json_t *req);
/* One JSON line on stdout, ASCII only (`obj` is taken). */
void session_write(json_t *obj);

#endif
