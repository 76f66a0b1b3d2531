/* The synthetic /etc files (see etc.h).
 *
 * Only what programs look up: the accounts that can own a file in the
 * sandbox (root, the sandbox user, nobody), the host name, and a network
 * configuration that says there is no network rather than pointing at the
 * host's resolvers. */
#include "fs-emulation/etc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "core/machine.h"
#include "fs-emulation/vfs.h"

const char *const etc_files[] = {
	"passwd",        "group",    "hostname",   "hosts",  "resolv.conf",
	"nsswitch.conf", "pip.conf", "machine-id", "shadow", NULL,
};


/* An append-only writer into the caller's buffer: the first overflow
 * sticks, so a generator can print freely and check once. */
struct out {
	char *buf;
	size_t len, off;
	bool full;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	if (o->full)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(o->buf + o->off, o->len - o->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->off)
		o->full = true;
	else
		o->off += (size_t)n;
}

/* The sandbox's own machine, not the host's: a new id each run (systemd's
 * format, 32 hex digits), so nothing names the host or links two runs. */
static void gen_machine_id(struct out *o)
{
	unsigned char b[16] = { 0 };
	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
		memset(b, 0, sizeof b);
	for (int i = 0; i < 16; i++)
		put(o, "%02x", b[i]);
	put(o, "\n");
}

/* Debian's system accounts and groups (base-passwd's fixed ids, the same
 * on every Debian): programs look them up by name (apt drops to _apt,
 * daemons to daemon or www-data, tests chown to bin).  Not the host's:
 * its own accounts stay its own. */
static const struct {
	const char *name;
	unsigned uid, gid;
	const char *home;
} sys_users[] = {
	{ "daemon", 1, 1, "/usr/sbin" },
	{ "bin", 2, 2, "/bin" },
	{ "sys", 3, 3, "/dev" },
	{ "sync", 4, 65534, "/bin" },
	{ "games", 5, 60, "/usr/games" },
	{ "man", 6, 12, "/var/cache/man" },
	{ "lp", 7, 7, "/var/spool/lpd" },
	{ "mail", 8, 8, "/var/mail" },
	{ "news", 9, 9, "/var/spool/news" },
	{ "uucp", 10, 10, "/var/spool/uucp" },
	{ "proxy", 13, 13, "/bin" },
	{ "www-data", 33, 33, "/var/www" },
	{ "backup", 34, 34, "/var/backups" },
	{ "list", 38, 38, "/var/list" },
	{ "irc", 39, 39, "/run/ircd" },
	{ "_apt", 42, 65534, "/nonexistent" },
};
static const struct {
	const char *name;
	unsigned gid;
} sys_groups[] = {
	{ "daemon", 1 },    { "bin", 2 },      { "sys", 3 },       { "adm", 4 },
	{ "tty", 5 },       { "disk", 6 },     { "lp", 7 },        { "mail", 8 },
	{ "news", 9 },      { "uucp", 10 },    { "man", 12 },      { "proxy", 13 },
	{ "kmem", 15 },     { "dialout", 20 }, { "fax", 21 },      { "voice", 22 },
	{ "cdrom", 24 },    { "floppy", 25 },  { "tape", 26 },     { "sudo", 27 },
	{ "audio", 29 },    { "dip", 30 },     { "www-data", 33 }, { "backup", 34 },
	{ "operator", 37 }, { "list", 38 },    { "irc", 39 },      { "src", 40 },
	{ "shadow", 42 },   { "utmp", 43 },    { "video", 44 },    { "sasl", 45 },
	{ "plugdev", 46 },  { "staff", 50 },   { "games", 60 },    { "users", 100 },
};

static void gen_passwd(const struct vfs *v, struct out *o)
{
	/* A uid-0 sandbox is root itself, with the sandbox's home. */
	put(o, "root:x:0:0:root:%s:/bin/sh\n", v->uid == 0 ? "/workspace" : "/root");
	/* Next: getpwuid() finds the sandbox's own name first, whatever
	 * system account or nobody (moat's default under root) has its id. */
	if (v->uid != 0)
		put(o, "sandbox:x:%u:%u:moat sandbox:/workspace:/bin/sh\n", (unsigned)v->uid,
		    (unsigned)v->gid);
	for (size_t i = 0; i < sizeof sys_users / sizeof sys_users[0]; i++)
		put(o, "%s:x:%u:%u:%s:%s:/usr/sbin/nologin\n", sys_users[i].name, sys_users[i].uid,
		    sys_users[i].gid, sys_users[i].name, sys_users[i].home);
	put(o, "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
}

/* Every account of gen_passwd, locked: no password logs in ("*"), none
 * of the host's hashes.  PAM's pam_unix reads it for the account checks
 * of su and runuser (root's own su needs no password: pam_rootok). */
static void gen_shadow(const struct vfs *v, struct out *o)
{
	put(o, "root:*:20000:0:99999:7:::\n");
	if (v->uid != 0)
		put(o, "sandbox:*:20000:0:99999:7:::\n");
	for (size_t i = 0; i < sizeof sys_users / sizeof sys_users[0]; i++)
		put(o, "%s:*:20000:0:99999:7:::\n", sys_users[i].name);
	put(o, "nobody:*:20000:0:99999:7:::\n");
}

static void gen_group(const struct vfs *v, struct out *o)
{
	put(o, "root:x:0:\n");
	if (v->gid != 0)
		put(o, "sandbox:x:%u:\n", (unsigned)v->gid);
	for (size_t i = 0; i < sizeof sys_groups / sizeof sys_groups[0]; i++)
		put(o, "%s:x:%u:\n", sys_groups[i].name, sys_groups[i].gid);
	put(o, "nogroup:x:65534:\n");
}

static void gen_hosts(const struct vfs *v, struct out *o)
{
	/* 127.0.1.1 for the host name, as Debian does: the name resolves
	 * without DNS, to the sandbox's private loopback. */
	put(o,
	    "127.0.0.1\tlocalhost\n"
	    "127.0.1.1\t%s\n"
	    "::1\tlocalhost ip6-localhost ip6-loopback\n"
	    "ff02::1\tip6-allnodes\n"
	    "ff02::2\tip6-allrouters\n",
	    machine_hostname(v->machine));
	if (v->etc_hosts_pins && v->etc_hosts_pins[0])
		put(o, "# Resolved by moat at start for --allow-net (pinned for the run):\n%s",
		    v->etc_hosts_pins);
}

static void gen_resolv(const struct vfs *v, struct out *o)
{
	if (v->etc_dns_stub) {
		/* moat's stub: it answers the names of the allow list and
		 * refuses the rest at once, keeping each name on the record. */
		put(o,
		    "# Generated by moat.  The name server is moat's stub resolver: it answers\n"
		    "# the host names allowed with --allow-net (also in /etc/hosts) and refuses\n"
		    "# every other name; no query leaves the sandbox.\n"
		    "nameserver 127.0.0.53\n"
		    "options timeout:1 attempts:1\n");
		return;
	}
	/* No nameserver line: the sandbox has no network to reach one.  (A
	 * resolver without one tries 127.0.0.1:53, the sandbox's private
	 * loopback, where nothing listens: the lookup fails at once.) */
	put(o, "# Generated by moat.  The sandbox has no network: moat denies it, so no\n"
	       "# name server is listed and names outside /etc/hosts do not resolve.\n"
	       "options timeout:1 attempts:1\n");
}

static void gen_nsswitch(const struct vfs *v, struct out *o)
{
	put(o,
	    "# Generated by moat: every database is the local files%s.\n"
	    "passwd:         files\n"
	    "group:          files\n"
	    "shadow:         files\n"
	    "gshadow:        files\n"
	    "hosts:          files%s\n"
	    "networks:       files\n"
	    "protocols:      files\n"
	    "services:       files\n"
	    "ethers:         files\n"
	    "rpc:            files\n"
	    "netgroup:       files\n",
	    v->etc_dns_stub ? ", and host names moat's stub resolver (resolv.conf)" : "",
	    v->etc_dns_stub ? " dns" : "");
}

static void gen_pip(const struct vfs *v, struct out *o)
{
	/* pip retries a failed index five times with back-off (about 8 s)
	 * before it says anything; with nothing outside allowed no retry can
	 * succeed, so it fails at once.  The host's own pip.conf is kept,
	 * with the line added to its [global] section (pip refuses a section
	 * or an option given twice, so one that sets retries is left as it
	 * is).  With egress allowed: nothing (no file; the host's shows). */
	if (!v->etc_no_egress)
		return;
	static char host[16384];
	size_t n = 0;
	FILE *f = fopen("/etc/pip.conf", "re");
	if (f) {
		n = fread(host, 1, sizeof host - 1, f);
		fclose(f);
	}
	host[n] = '\0';
	if (n == sizeof host - 1 || strstr(host, "retries"))
		return;
	const char *line = "retries = 0\n";
	char *g = strstr(host, "[global]");
	if (g && (g == host || g[-1] == '\n')) {
		char *eol = strchr(g, '\n');
		size_t head = eol ? (size_t)(eol + 1 - host) : n;
		put(o,
		    "%.*s%s%s# Added by moat: the sandbox reaches no host outside it (no\n"
		    "# --allow-net), so pip does not retry an index it cannot reach.\n%s%s",
		    (int)head, host, eol ? "" : "\n", "", line, host + head);
		return;
	}
	put(o,
	    "%s%s# Generated by moat.  The sandbox reaches no host outside it (no\n"
	    "# --allow-net), so pip does not retry an index it cannot reach.\n"
	    "[global]\n%s",
	    host, n && host[n - 1] != '\n' ? "\n" : "", line);
}

int etc_generate(const struct vfs *v, const char *name, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };
	if (len == 0)
		return -ENOSPC;
	if (strcmp(name, "passwd") == 0)
		gen_passwd(v, &o);
	else if (strcmp(name, "machine-id") == 0)
		gen_machine_id(&o);
	else if (strcmp(name, "group") == 0)
		gen_group(v, &o);
	else if (strcmp(name, "shadow") == 0)
		gen_shadow(v, &o);
	else if (strcmp(name, "hostname") == 0)
		put(&o, "%s\n", machine_hostname(v->machine));
	else if (strcmp(name, "hosts") == 0)
		gen_hosts(v, &o);
	else if (strcmp(name, "resolv.conf") == 0)
		gen_resolv(v, &o);
	else if (strcmp(name, "nsswitch.conf") == 0)
		gen_nsswitch(v, &o);
	else if (strcmp(name, "pip.conf") == 0)
		gen_pip(v, &o);
	else
		return -ENOENT;
	return o.full ? -ENOSPC : (int)o.off;
}
