/* `moat run`'s options: one table drives the parsing of argv, the
 * --help text and any other front end that fills a run plan (a session's
 * create, an OCI config.json), so an option is written once.
 *
 * An entry's setter validates its arguments and stores them in the plan
 * (cli/run_config.h).  It never prints and never exits: it returns 0, or
 * -1 with one line for people in err (no "moat: " prefix, no newline),
 * and the caller decides what a failure does.  Setters may look at the
 * host where the option is about the host (a --bind source must be a
 * directory, --allow-net resolves its host names, --net-policy reads its
 * file); none makes anything. */
#ifndef MOAT_OPTIONS_H
#define MOAT_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "cli/run_config.h"

struct moat_option;
typedef int (*moat_option_set)(struct run_config *rc, const struct moat_option *o,
			       char *const *args, char *err, size_t errlen);

/* Shown on the previous entry's --help line ("--uid N, --gid N"), whose
 * help text then speaks for both; the entry's own help is for front ends
 * that describe one option. */
#define OPT_JOINED 1u

struct moat_option {
	const char *name;       /* "--bind": what argv says */
	unsigned nargs;         /* 0, 1 or 2 */
	const char *metavar[2]; /* "SRC", "DST": the arguments' names in --help */
	const char *help;       /* lines joined by '\n', without the indent */
	unsigned flags;         /* OPT_JOINED */
	/* Spaces between a synopsis too wide for its column and the help
	 * (0: two): --help as it has always been printed. */
	unsigned gap;
	moat_option_set set;
};

/* Every option of `moat run`, in --help's order; ended by an entry whose
 * name is NULL. */
extern const struct moat_option moat_options[];

/* The entry named `name` ("--bind"), or NULL. */
const struct moat_option *option_find(const char *name);

/* Apply option `o` to the plan: args holds o->nargs strings (borrowed:
 * the plan may keep them).  0, or -1 with one line in err. */
int option_apply(struct run_config *rc, const struct moat_option *o, char *const *args, char *err,
		 size_t errlen);

/* Parse `moat run`'s words (those after "run"): options up to "--" or
 * the first word not starting with '-', then the command, which
 * rc->argv points at (argv must outlive rc).  0, or -1 with one line in
 * err: an unknown option, a missing argument, a setter's refusal, or no
 * command. */
int options_parse_argv(struct run_config *rc, int argc, char **argv, char *err, size_t errlen);

/* The --help text, from the table. */
void options_usage(FILE *f);

#endif
