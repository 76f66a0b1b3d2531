/* The egress policy (net-stub/policy.c) and the DNS question reader
 * (net-stub/dns.c): pure functions of their input, no network. */
#include <arpa/inet.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net-stub/net.h"

static struct net n;
static char err[512];

static void reset(void)
{
	memset(&n, 0, sizeof n);
}

static enum net_dest check4(const char *addr, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	ck_assert_int_eq(inet_pton(AF_INET, addr, &a.sin_addr), 1);
	const struct net_rule *r;
	return net_policy_check(&n, (struct sockaddr *)&a, sizeof a, &r);
}

static enum net_dest check6(const char *addr, int port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
	ck_assert_int_eq(inet_pton(AF_INET6, addr, &a.sin6_addr), 1);
	const struct net_rule *r;
	return net_policy_check(&n, (struct sockaddr *)&a, sizeof a, &r);
}

START_TEST(test_default_deny)
{
	reset();
	ck_assert_int_eq(check4("93.184.216.34", 443), ND_DENY_HOST);
	ck_assert_int_eq(check4("192.0.2.1", 53), ND_DENY_HOST);
	ck_assert_int_eq(check4("169.254.169.254", 80), ND_DENY_HOST);
	ck_assert_int_eq(check4("127.0.0.1", 80), ND_PRIVATE);
	ck_assert_int_eq(check4("127.3.2.1", 80), ND_PRIVATE);
	ck_assert_int_eq(check4("0.0.0.0", 80), ND_PRIVATE);
	ck_assert_int_eq(check6("::1", 80), ND_PRIVATE);
	ck_assert_int_eq(check6("::", 80), ND_PRIVATE);
	ck_assert_int_eq(check6("::ffff:127.0.0.1", 80), ND_PRIVATE);
	ck_assert_int_eq(check6("2001:db8::1", 80), ND_DENY_HOST);
	ck_assert_int_eq(check6("::ffff:8.8.8.8", 53), ND_DENY_HOST);
	/* too short for its family */
	struct sockaddr_in a = { .sin_family = AF_INET };
	const struct net_rule *r;
	ck_assert_int_eq(net_policy_check(&n, (struct sockaddr *)&a, 8, &r), ND_INVALID);
}
END_TEST

START_TEST(test_rules)
{
	reset();
	ck_assert_int_eq(net_policy_add(&n, "10.1.0.0/16:443", err, sizeof err), 0);
	ck_assert_int_eq(net_policy_add(&n, "192.0.2.7:8000-8010", err, sizeof err), 0);
	ck_assert_int_eq(net_policy_add(&n, "[2001:db8::/32]:*", err, sizeof err), 0);
	ck_assert_int_eq(net_policy_add(&n, "127.0.0.1:5000", err, sizeof err), 0);
	ck_assert_int_eq(check4("10.1.200.3", 443), ND_ALLOW);
	ck_assert_int_eq(check4("10.1.200.3", 444), ND_DENY_PORT);
	ck_assert_int_eq(check4("10.2.0.1", 443), ND_DENY_HOST);
	ck_assert_int_eq(check4("192.0.2.7", 8000), ND_ALLOW);
	ck_assert_int_eq(check4("192.0.2.7", 8010), ND_ALLOW);
	ck_assert_int_eq(check4("192.0.2.7", 8011), ND_DENY_PORT);
	ck_assert_int_eq(check6("2001:db8:5::1", 1), ND_ALLOW);
	ck_assert_int_eq(check6("::ffff:10.1.0.1", 443), ND_ALLOW); /* mapped = IPv4 */
	/* a loopback rule opens the host's port, and that port only */
	ck_assert_int_eq(check4("127.0.0.1", 5000), ND_ALLOW);
	ck_assert_int_eq(check4("127.0.0.1", 5001), ND_PRIVATE);
	ck_assert_int_eq(check6("::ffff:127.0.0.1", 5000), ND_ALLOW);
}
END_TEST

START_TEST(test_wide_rule_keeps_loopback_private)
{
	reset();
	ck_assert_int_eq(net_policy_add(&n, "0.0.0.0/0", err, sizeof err), 0);
	ck_assert_int_eq(net_policy_add(&n, "[::/0]", err, sizeof err), 0);
	ck_assert_int_eq(check4("8.8.8.8", 53), ND_ALLOW);
	ck_assert_int_eq(check4("127.0.0.1", 22), ND_PRIVATE);
	ck_assert_int_eq(check6("::1", 22), ND_PRIVATE);
	ck_assert_int_eq(check6("2001:db8::1", 22), ND_ALLOW);
}
END_TEST

START_TEST(test_bad_rules)
{
	static const char *bad[] = {
		"10.0.0.1:0", "10.0.0.1:65536",   "10.0.0.1:80-70", "10.0.0.0/33", "[::1]:x",
		"[::1",       "[2001:db8::/129]", "bad name!",      "10.0.0.1/x",  "host:",
		"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		reset();
		err[0] = '\0';
		ck_assert_msg(net_policy_add(&n, bad[i], err, sizeof err) < 0, "%s accepted",
			      bad[i]);
		ck_assert_msg(err[0] && !strchr(err, '\n'), "%s: no one-line reason", bad[i]);
		ck_assert_int_eq(n.nrule, 0);
	}
}
END_TEST

START_TEST(test_host_pinned)
{
	reset();
	/* /etc/hosts of the test machine names localhost. */
	ck_assert_int_eq(net_policy_add(&n, "localhost:8080", err, sizeof err), 0);
	ck_assert_int_ge(n.npin, 1);
	ck_assert_str_eq(n.pin[0].host, "localhost");
	ck_assert_str_eq(n.rule[0].host, "localhost");
	ck_assert_int_eq(check4("127.0.0.1", 8080), ND_ALLOW);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(8080) };
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	ck_assert_str_eq(net_pinned_name(&n, (struct sockaddr *)&a, sizeof a), "localhost");
}
END_TEST

START_TEST(test_policy_file)
{
	reset();
	char path[] = "/tmp/moat-test-policy-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("# egress for the build\n\n  allow 10.0.0.0/8:443  # internal\n192.0.2.1\n", f);
	fclose(f);
	ck_assert_int_eq(net_policy_load(&n, path, err, sizeof err), 0);
	ck_assert_int_eq(n.nrule, 2);
	ck_assert_int_eq(check4("10.9.9.9", 443), ND_ALLOW);
	ck_assert_int_eq(check4("192.0.2.1", 1), ND_ALLOW);
	f = fopen(path, "w");
	fputs("10.0.0.0/8\n10.0.0.1:99999\n", f);
	fclose(f);
	reset();
	ck_assert_int_lt(net_policy_load(&n, path, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(err, "line 2"));
	unlink(path);
	ck_assert_int_lt(net_policy_load(&n, path, err, sizeof err), 0);
}
END_TEST

START_TEST(test_dns_question)
{
	/* id 0x1234, RD, one question: "pypi.org" AAAA IN */
	static const unsigned char q[] = {
		0x12, 0x34, 0x01, 0x00, 0, 1,   0,   0,   0, 0, 0,  0, 4,
		'p',  'y',  'p',  'i',  3, 'o', 'r', 'g', 0, 0, 28, 0, 1
	};
	char name[256], type[12];
	ck_assert(dns_question(q, sizeof q, name, sizeof name, type, sizeof type));
	ck_assert_str_eq(name, "pypi.org");
	ck_assert_str_eq(type, "AAAA");
	/* cut short, a response, a compression pointer in the question */
	ck_assert(!dns_question(q, sizeof q - 3, name, sizeof name, type, sizeof type));
	unsigned char r[sizeof q];
	memcpy(r, q, sizeof q);
	r[2] |= 0x80;
	ck_assert(!dns_question(r, sizeof r, name, sizeof name, type, sizeof type));
	memcpy(r, q, sizeof q);
	r[12] = 0xc0;
	ck_assert(!dns_question(r, sizeof r, name, sizeof name, type, sizeof type));
	/* bytes that could forge a log line are escaped */
	static const unsigned char e[] = { 0, 1, 0,   0,    0,   1, 0, 0,  0, 0, 0,
					   0, 3, 'a', '\n', '"', 0, 0, 16, 0, 1 };
	ck_assert(dns_question(e, sizeof e, name, sizeof name, type, sizeof type));
	ck_assert_str_eq(name, "a\\x0a\\x22");
	ck_assert_str_eq(type, "TXT");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("net");
	TCase *tc = tcase_create("policy");
	tcase_add_test(tc, test_default_deny);
	tcase_add_test(tc, test_rules);
	tcase_add_test(tc, test_wide_rule_keeps_loopback_private);
	tcase_add_test(tc, test_bad_rules);
	tcase_add_test(tc, test_host_pinned);
	tcase_add_test(tc, test_policy_file);
	tcase_add_test(tc, test_dns_question);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
