/* `moat mcp`: the sessions as a Model Context Protocol server over stdio
 * (docs/sessions.md, "MCP"). */
#ifndef MOAT_MCP_H
#define MOAT_MCP_H

/* The subcommand: argv after "mcp".  moat's exit code. */
int cmd_mcp(int argc, char **argv);

#endif
