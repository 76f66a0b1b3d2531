/* Strings the sandbox chose, written where people and programs read them:
 * the audit log, the run report, --json, moat's own messages.
 *
 * Every JSON string written here is valid UTF-8 whatever bytes it was given,
 * and never carries a character a terminal acts on (docs/audit.md
 * "Strings"): C0 and C1 controls, DEL, the line and paragraph separators
 * and the bidirectional controls are written as \uXXXX escapes (a JSON
 * reader gets the same characters back); a byte that is not part of valid
 * UTF-8 is written as U+FFFD, and the writer says so, so that the caller
 * can add the exact bytes beside it (KEY-hex). */
#ifndef MOAT_JSON_H
#define MOAT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* `n` bytes of `s` as a quoted JSON string.  Returns true when some byte
 * was not valid UTF-8 (written as U+FFFD): the string is then lossy. */
bool json_strn(FILE *f, const void *s, size_t n);
/* The same for a NUL-terminated string. */
bool json_str(FILE *f, const char *s);
/* `,"KEY":"S"`, plus `,"KEY-hex":"<the exact bytes in hex>"` when S is not
 * valid UTF-8. */
void json_field(FILE *f, const char *key, const char *s);
/* `n` bytes as a quoted string of lower-case hex digits. */
void json_hex(FILE *f, const void *s, size_t n);
/* `n` bytes as a quoted base64 string (RFC 4648, padded). */
void json_base64(FILE *f, const void *s, size_t n);

/* `src` made safe for a terminal, into dst (cap bytes, always
 * terminated): printable ASCII and valid UTF-8 that is not a control are
 * kept, a backslash is doubled, anything else is \xHH. */
void text_safe(char *dst, size_t cap, const char *src);

#endif
