/* The one string writer of every output (audit/json.c): whatever bytes it
 * gets, the result is valid UTF-8 JSON that a strict reader takes, carries
 * no control a terminal acts on, and says when it had to replace bytes, so
 * that the exact ones can follow (KEY-hex, -base64). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/json.h"

static char out[4096];
static bool lossy;

static const char *w(const char *in, size_t n)
{
	FILE *f = fmemopen(out, sizeof out, "w");
	ck_assert_ptr_nonnull(f);
	lossy = json_strn(f, in, n);
	fclose(f);
	return out;
}
#define W(lit) w(lit, sizeof lit - 1)

/* A byte string that is valid UTF-8 and holds no byte in 0x00-0x1f or
 * 0x7f, no C1 (c2 80..c2 9f) and no raw byte a terminal could read as one. */
static void clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		ck_assert_msg(*p >= 0x20 && *p != 0x7f, "control byte %02x in %s", *p, s);
		if (*p == 0xc2)
			ck_assert_msg(p[1] < 0x80 || p[1] > 0x9f, "C1 in %s", s);
	}
}

START_TEST(test_ascii_and_utf8_kept)
{
	ck_assert_str_eq(W("/tmp/a b"), "\"/tmp/a b\"");
	ck_assert(!lossy);
	ck_assert_str_eq(W("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
			 "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	ck_assert(!lossy);
	ck_assert_str_eq(W("q\"b\\"), "\"q\\\"b\\\\\"");
}
END_TEST

START_TEST(test_controls_escaped)
{
	ck_assert_str_eq(W("a\nb\tc\x1b[31m\x7f"), "\"a\\nb\\tc\\u001b[31m\\u007f\"");
	ck_assert(!lossy);
	/* U+009B (CSI) as UTF-8, and U+0085 (NEL) */
	ck_assert_str_eq(W("x\xc2\x9by\xc2\x85"), "\"x\\u009by\\u0085\"");
	ck_assert(!lossy);
	/* line separator, right-to-left override, first strong isolate */
	ck_assert_str_eq(W("\xe2\x80\xa8\xe2\x80\xae\xe2\x81\xa8"), "\"\\u2028\\u202e\\u2068\"");
	clean(out);
}
END_TEST

START_TEST(test_invalid_bytes_replaced)
{
	/* a raw 0x9b (CSI in 8-bit terminals), a lone continuation, a
	 * truncated sequence, an overlong '/', a surrogate, past U+10FFFF */
	static const char *const bad[] = { "\x9b",     "\x80",         "\xe2\x82",
					   "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
					   "\xff" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		w(bad[i], strlen(bad[i]));
		ck_assert_msg(lossy, "%zu not flagged", i);
		ck_assert_msg(strstr(out, "\\ufffd"), "%zu: %s", i, out);
		clean(out);
	}
	/* NUL in the middle of counted bytes */
	ck_assert_str_eq(w("a\0b", 3), "\"a\\u0000b\"");
}
END_TEST

START_TEST(test_field_adds_hex)
{
	FILE *f = fmemopen(out, sizeof out, "w");
	json_field(f, "path", "/w/x\x9b");
	json_field(f, "ok", "/w/y");
	fclose(f);
	ck_assert_str_eq(out,
			 ",\"path\":\"/w/x\\ufffd\",\"path-hex\":\"2f772f789b\",\"ok\":\"/w/y\"");
}
END_TEST

START_TEST(test_base64)
{
	static const char *const in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const exp[] = { "\"\"",        "\"Zg==\"",     "\"Zm8=\"",
					   "\"Zm9v\"",    "\"Zm9vYg==\"", "\"Zm9vYmE=\"",
					   "\"Zm9vYmFy\"" };
	for (size_t i = 0; i < 7; i++) {
		FILE *f = fmemopen(out, sizeof out, "w");
		json_base64(f, in[i], strlen(in[i]));
		fclose(f);
		ck_assert_str_eq(out, exp[i]);
	}
}
END_TEST

START_TEST(test_text_safe)
{
	char t[64];
	text_safe(t, sizeof t, "evil.example\x1b]0;x\x07\xc2\x9b\x9b\\ caf\xc3\xa9");
	ck_assert_str_eq(t, "evil.example\\x1b]0;x\\x07\\xc2\\x9b\\x9b\\\\ caf\xc3\xa9");
	clean(t);
	text_safe(t, 8, "\x01\x02\x03");
	ck_assert_str_eq(t, "\\x01"); /* cut at a whole escape */
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("strings");
	tcase_add_test(tc, test_ascii_and_utf8_kept);
	tcase_add_test(tc, test_controls_escaped);
	tcase_add_test(tc, test_invalid_bytes_replaced);
	tcase_add_test(tc, test_field_adds_hex);
	tcase_add_test(tc, test_base64);
	tcase_add_test(tc, test_text_safe);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(json_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
