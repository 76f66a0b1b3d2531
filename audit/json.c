/* One writer for every string moat prints that the sandbox could have
 * chosen (a path, a process name, a DNS question, its output). */
#include "audit/json.h"

#include <stdint.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at p (end - p bytes left), with
 * its code point in *cp; 0 when the byte at p starts no valid sequence
 * (overlong forms, surrogates and code points past U+10FFFF are invalid). */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
	unsigned c = p[0];
	size_t len;
	uint32_t v;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, v = c & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < len)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[k] & 0x3f);
	}
	if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10ffff)) ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* Characters a terminal or a text viewer acts on rather than shows: C0,
 * DEL, C1 (0x9b is CSI on many terminals), the line and paragraph
 * separators (line breaks to JavaScript) and the bidirectional controls
 * (text that reads differently from what it is). */
static bool acts(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

bool json_strn(FILE *f, const void *s, size_t n)
{
	const unsigned char *p = s, *end = p + n;
	bool lossy = false;
	fputc('"', f);
	while (p < end) {
		uint32_t cp;
		size_t len = utf8_seq(p, end, &cp);
		if (!len) {
			fputs("\\ufffd", f);
			lossy = true;
			p++;
			continue;
		}
		if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (char)cp);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (acts(cp))
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(p, 1, len, f);
		p += len;
	}
	fputc('"', f);
	return lossy;
}

bool json_str(FILE *f, const char *s)
{
	return json_strn(f, s, strlen(s));
}

void json_hex(FILE *f, const void *s, size_t n)
{
	const unsigned char *p = s;
	fputc('"', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
	fputc('"', f);
}

void json_field(FILE *f, const char *key, const char *s)
{
	fprintf(f, ",\"%s\":", key);
	if (json_str(f, s)) {
		fprintf(f, ",\"%s-hex\":", key);
		json_hex(f, s, strlen(s));
	}
}

void json_base64(FILE *f, const void *s, size_t n)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = s;
	fputc('"', f);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		fputc(b64[(v >> 18) & 63], f);
		fputc(b64[(v >> 12) & 63], f);
		fputc(i + 1 < n ? b64[(v >> 6) & 63] : '=', f);
		fputc(i + 2 < n ? b64[v & 63] : '=', f);
	}
	fputc('"', f);
}

void text_safe(char *dst, size_t cap, const char *src)
{
	const unsigned char *p = (const unsigned char *)src, *end = p + strlen(src);
	size_t o = 0;
	if (!cap)
		return;
	while (p < end) {
		uint32_t cp;
		size_t len = utf8_seq(p, end, &cp);
		char tmp[8];
		size_t tl;
		if (len && cp == '\\') {
			memcpy(tmp, "\\\\", 2);
			tl = 2;
		} else if (len && !acts(cp)) {
			memcpy(tmp, p, len);
			tl = len;
		} else {
			len = 1;
			tl = (size_t)snprintf(tmp, sizeof tmp, "\\x%02x", *p);
		}
		if (o + tl >= cap)
			break;
		memcpy(dst + o, tmp, tl);
		o += tl;
		p += len;
	}
	dst[o] = '\0';
}
