/* A strict reader of JSON lines, for the tests of what moat writes (the
 * audit log): RFC 8259 with nothing a lenient reader forgives — no raw
 * control byte, no invalid UTF-8 (overlong forms, surrogates, past
 * U+10FFFF), no lone surrogate escape, no duplicate key in a record, no
 * trailing bytes — plus the rule of docs/audit.md "Strings": no raw
 * character a terminal acts on (C1, U+2028/U+2029, the bidirectional
 * controls) outside an escape.
 *
 * Shared by the unit tests through this header alone (each test is one
 * file); everything is static inline, so a test uses what it needs. */
#ifndef MOAT_TEST_JSONL_H
#define MOAT_TEST_JSONL_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JREC_MAX 64

struct jrec;

struct jv {
	char type;         /* 's' string, 'n' number, 'a' array, 'o' object, 'b' bool, 'z' null */
	char *s;           /* 's': the decoded bytes, NUL-terminated (may hold NUL: len) */
	size_t len;
	long long num;     /* 'n' when integral; 'b': 0 or 1 */
	bool integral;
	int nitems;        /* 'a': its elements */
	struct jv *items;
	struct jrec *obj;  /* 'o': its members */
};

struct jfield {
	char *key;
	struct jv v;
};

/* One line: a JSON object's members, in order. */
struct jrec {
	int n;
	struct jfield f[JREC_MAX];
};

static inline void jrec_free(struct jrec *r);

static inline void jv_free(struct jv *v)
{
	if (v->obj) {
		jrec_free(v->obj);
		free(v->obj);
	}
	free(v->s);
	for (int i = 0; i < v->nitems; i++)
		jv_free(&v->items[i]);
	free(v->items);
	memset(v, 0, sizeof *v);
}

struct jcur {
	const unsigned char *p, *end;
	const char *err;
};

static inline bool j_fail(struct jcur *c, const char *why)
{
	if (!c->err)
		c->err = why;
	return false;
}

/* The length of the valid UTF-8 sequence at p, its code point in *cp; 0
 * when none starts there. */
static inline int j_utf8(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
	unsigned b = p[0];
	int len;
	uint32_t v, min;
	if (b < 0x80) {
		*cp = b;
		return 1;
	}
	if (b >= 0xc2 && b <= 0xdf)
		len = 2, v = b & 0x1f, min = 0x80;
	else if ((b & 0xf0) == 0xe0)
		len = 3, v = b & 0x0f, min = 0x800;
	else if (b >= 0xf0 && b <= 0xf4)
		len = 4, v = b & 0x07, min = 0x10000;
	else
		return 0;
	if (end - p < len)
		return 0;
	for (int k = 1; k < len; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[k] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* What docs/audit.md "Strings" keeps out of the file as raw characters. */
static inline bool j_acts(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

static inline size_t j_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static inline int j_hex4(struct jcur *c, uint32_t *v)
{
	*v = 0;
	if (c->end - c->p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		unsigned char h = c->p[i];
		unsigned d = h >= '0' && h <= '9'   ? h - '0'
			     : h >= 'a' && h <= 'f' ? h - 'a' + 10
			     : h >= 'A' && h <= 'F' ? h - 'A' + 10
						    : 16;
		if (d > 15)
			return -1;
		*v = *v << 4 | d;
	}
	c->p += 4;
	return 0;
}

/* A string at c->p, decoded into *out (malloc'd; the caller frees). */
static inline bool j_string(struct jcur *c, char **out, size_t *outlen)
{
	if (c->p >= c->end || *c->p != '"')
		return j_fail(c, "string expected");
	c->p++;
	/* Decoded is never longer than written. */
	char *o = malloc((size_t)(c->end - c->p) + 1);
	ck_assert_ptr_nonnull(o);
	size_t n = 0;
	for (;;) {
		if (c->p >= c->end) {
			free(o);
			return j_fail(c, "unterminated string");
		}
		unsigned char ch = *c->p;
		uint32_t cp;
		if (ch == '"') {
			c->p++;
			break;
		}
		if (ch == '\\') {
			c->p++;
			if (c->p >= c->end) {
				free(o);
				return j_fail(c, "cut escape");
			}
			static const char esc[] = "\"\\/bfnrt", val[] = "\"\\/\b\f\n\r\t";
			char e = (char)*c->p++;
			const char *simple = e ? strchr(esc, e) : NULL;
			if (simple) {
				o[n++] = val[simple - esc];
				continue;
			}
			if (e != 'u' || j_hex4(c, &cp) < 0) {
				free(o);
				return j_fail(c, "bad escape");
			}
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				free(o);
				return j_fail(c, "lone low surrogate escape");
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				uint32_t lo;
				if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u') {
					free(o);
					return j_fail(c, "lone high surrogate escape");
				}
				c->p += 2;
				if (j_hex4(c, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff) {
					free(o);
					return j_fail(c, "bad surrogate pair");
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			n += j_put(o + n, cp);
			continue;
		}
		int len = j_utf8(c->p, c->end, &cp);
		if (!len) {
			free(o);
			return j_fail(c, "invalid UTF-8 in a string");
		}
		if (j_acts(cp)) {
			free(o);
			return j_fail(c, "raw control character in a string");
		}
		memcpy(o + n, c->p, (size_t)len);
		n += (size_t)len;
		c->p += len;
	}
	o[n] = '\0';
	if (out) {
		*out = o;
		*outlen = n;
	} else {
		free(o);
	}
	return true;
}

static inline bool j_digits(struct jcur *c)
{
	const unsigned char *s = c->p;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > s;
}

static inline bool j_number(struct jcur *c, struct jv *v)
{
	const unsigned char *s = c->p;
	v->type = 'n';
	v->integral = true;
	if (c->p < c->end && *c->p == '-')
		c->p++;
	if (c->p < c->end && *c->p == '0')
		c->p++;
	else if (!j_digits(c))
		return j_fail(c, "bad number");
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		v->integral = false;
		if (!j_digits(c))
			return j_fail(c, "bad fraction");
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		v->integral = false;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!j_digits(c))
			return j_fail(c, "bad exponent");
	}
	char tmp[64];
	size_t n = (size_t)(c->p - s);
	if (n >= sizeof tmp)
		return j_fail(c, "number too long for the test");
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	v->num = strtoll(tmp, NULL, 10);
	return true;
}

static inline void j_ws(struct jcur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static inline bool j_word(struct jcur *c, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
		return j_fail(c, "unexpected token");
	c->p += n;
	return true;
}

static inline bool j_value(struct jcur *c, struct jv *v, int depth);

/* An object; its members kept in r when r is not NULL. */
static inline bool j_object(struct jcur *c, struct jrec *r, int depth)
{
	if (c->p >= c->end || *c->p != '{')
		return j_fail(c, "object expected");
	c->p++;
	j_ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return true;
	}
	for (;;) {
		char *key;
		size_t klen;
		struct jv v = { 0 };
		j_ws(c);
		if (!j_string(c, &key, &klen))
			return false;
		j_ws(c);
		if (c->p >= c->end || *c->p != ':') {
			free(key);
			return j_fail(c, "':' expected");
		}
		c->p++;
		j_ws(c);
		if (!j_value(c, &v, depth + 1)) {
			free(key);
			jv_free(&v);
			return false;
		}
		if (r) {
			for (int i = 0; i < r->n; i++)
				if (strcmp(r->f[i].key, key) == 0) {
					free(key);
					jv_free(&v);
					return j_fail(c, "duplicate key");
				}
			if (r->n == JREC_MAX) {
				free(key);
				jv_free(&v);
				return j_fail(c, "too many members for the test");
			}
			r->f[r->n].key = key;
			r->f[r->n++].v = v;
		} else {
			free(key);
			jv_free(&v);
		}
		j_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == '}') {
			c->p++;
			return true;
		}
		return j_fail(c, "',' or '}' expected");
	}
}

static inline bool j_array(struct jcur *c, struct jv *v, int depth)
{
	v->type = 'a';
	c->p++; /* '[' */
	j_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return true;
	}
	for (;;) {
		j_ws(c);
		v->items = realloc(v->items, (size_t)(v->nitems + 1) * sizeof *v->items);
		ck_assert_ptr_nonnull(v->items);
		struct jv *it = &v->items[v->nitems++];
		memset(it, 0, sizeof *it);
		if (!j_value(c, it, depth + 1))
			return false;
		j_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			return true;
		}
		return j_fail(c, "',' or ']' expected");
	}
}

static inline bool j_value(struct jcur *c, struct jv *v, int depth)
{
	if (depth > 32)
		return j_fail(c, "nested too deep");
	if (c->p >= c->end)
		return j_fail(c, "value expected");
	switch (*c->p) {
	case '"':
		v->type = 's';
		return j_string(c, &v->s, &v->len);
	case '{':
		v->type = 'o';
		v->obj = calloc(1, sizeof *v->obj);
		ck_assert_ptr_nonnull(v->obj);
		return j_object(c, v->obj, depth);
	case '[':
		return j_array(c, v, depth);
	case 't':
		v->type = 'b', v->num = 1;
		return j_word(c, "true");
	case 'f':
		v->type = 'b', v->num = 0;
		return j_word(c, "false");
	case 'n':
		v->type = 'z';
		return j_word(c, "null");
	default:
		return j_number(c, v);
	}
}

static inline void jrec_free(struct jrec *r)
{
	for (int i = 0; i < r->n; i++) {
		free(r->f[i].key);
		jv_free(&r->f[i].v);
	}
	r->n = 0;
}

/* One line (without its newline) as one JSON object and nothing else.
 * NULL, or why a strict reader refuses it. */
static inline const char *jrec_parse(const char *line, size_t len, struct jrec *r)
{
	struct jcur c = { (const unsigned char *)line, (const unsigned char *)line + len, NULL };
	memset(r, 0, sizeof *r);
	j_ws(&c);
	if (j_object(&c, r, 0)) {
		j_ws(&c);
		if (c.p != c.end)
			j_fail(&c, "bytes after the object");
	}
	if (c.err)
		jrec_free(r);
	return c.err;
}

static inline const struct jv *jget(const struct jrec *r, const char *key)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->f[i].key, key) == 0)
			return &r->f[i].v;
	return NULL;
}

/* The string member `key`, or NULL when absent or not a string. */
static inline const char *jstr(const struct jrec *r, const char *key)
{
	const struct jv *v = jget(r, key);
	return v && v->type == 's' ? v->s : NULL;
}

/* The integer member `key`; the test fails when it is absent or not one. */
static inline long long jint(const struct jrec *r, const char *key)
{
	const struct jv *v = jget(r, key);
	ck_assert_msg(v && v->type == 'n' && v->integral, "no integer \"%s\"", key);
	return v->num;
}

/* Everything written to `fd` (read from offset 0, the offset left as it
 * is) as records, one a line: each line must end with a newline and parse
 * strictly.  Returns the number of records (*recs: the caller frees with
 * jlog_free). */
static inline int jlog_read(int fd, struct jrec **recs)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	ck_assert_ptr_nonnull(buf);
	for (;;) {
		if (len == cap) {
			buf = realloc(buf, cap *= 2);
			ck_assert_ptr_nonnull(buf);
		}
		ssize_t n = pread(fd, buf + len, cap - len, (off_t)len);
		ck_assert_int_ge(n, 0);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	ck_assert_msg(len == 0 || buf[len - 1] == '\n', "the log does not end with a newline");
	int n = 0;
	*recs = NULL;
	for (size_t at = 0; at < len;) {
		char *nl = memchr(buf + at, '\n', len - at);
		size_t l = (size_t)(nl - (buf + at));
		*recs = realloc(*recs, (size_t)(n + 1) * sizeof **recs);
		ck_assert_ptr_nonnull(*recs);
		const char *why = jrec_parse(buf + at, l, &(*recs)[n]);
		ck_assert_msg(!why, "line %d: %s: %.*s", n + 1, why, (int)(l > 400 ? 400 : l), buf + at);
		n++;
		at += l + 1;
	}
	free(buf);
	return n;
}

static inline void jlog_free(struct jrec *recs, int n)
{
	for (int i = 0; i < n; i++)
		jrec_free(&recs[i]);
	free(recs);
}

#endif
