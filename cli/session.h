/* `moat session`: live interpreters in sandboxes, over JSON lines
 * (docs/sessions.md).  Each session is a `moat run` of its own, started by
 * this process, with the driver (drivers/) as its program. */
#ifndef MOAT_SESSION_H
#define MOAT_SESSION_H

/* The subcommand: argv after "session".  moat's exit code. */
int cmd_session(int argc, char **argv);

#endif
