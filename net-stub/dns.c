/* DNS: reading the question of a query, and the stub resolver.
 *
 * The sandbox's /etc/resolv.conf names the stub (NET_DNS_ADDR, in the
 * private world).  It answers the host names moat pinned from the allow
 * list and refuses every other name (REFUSED: glibc gives up at once, no
 * time-out), so every name a program tries to resolve is on the record
 * and no query ever leaves the sandbox. */
#include "net-stub/net.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "audit/audit.h"
#include "audit/stack.h"
#include "core/call.h"
#include "core/task.h"

static const char *type_name(unsigned t, char *buf, size_t len)
{
	switch (t) {
	case 1: return "A";
	case 2: return "NS";
	case 5: return "CNAME";
	case 6: return "SOA";
	case 12: return "PTR";
	case 15: return "MX";
	case 16: return "TXT";
	case 28: return "AAAA";
	case 33: return "SRV";
	case 65: return "HTTPS";
	case 255: return "ANY";
	}
	snprintf(buf, len, "%u", t);
	return buf;
}

/* The question name at `off`, as text with every byte outside [A-Za-z0-9-_]
 * escaped (\xNN), so a name made to forge log lines reads as bytes.
 * Returns the offset after the name, or 0. */
static size_t read_name(const unsigned char *msg, size_t len, size_t off, char *name, size_t nlen)
{
	size_t o = 0;
	name[0] = '\0';
	for (int labels = 0; off < len && labels < 128; labels++) {
		unsigned l = msg[off++];
		if (l == 0) {
			if (o == 0 && nlen > 1)
				snprintf(name, nlen, ".");
			return off;
		}
		if (l & 0xc0 || off + l > len)
			return 0; /* no compression in a question; or cut short */
		if (o && o + 1 < nlen)
			name[o++] = '.';
		for (unsigned i = 0; i < l; i++) {
			unsigned char ch = msg[off + i];
			if (isalnum(ch) || ch == '-' || ch == '_') {
				if (o + 1 < nlen)
					name[o++] = (char)ch;
			} else if (o + 4 < nlen) {
				o += (size_t)snprintf(name + o, nlen - o, "\\x%02x", ch);
			}
		}
		name[o < nlen ? o : nlen - 1] = '\0';
		off += l;
	}
	return 0;
}

bool dns_question(const unsigned char *msg, size_t len, char *name, size_t nlen, char *type,
		  size_t tlen)
{
	/* Header: id, flags, qdcount, ancount, nscount, arcount. */
	if (!msg || len < 12 + 5 || (msg[2] & 0x80) || ((msg[4] << 8) | msg[5]) == 0)
		return false;
	size_t off = read_name(msg, len, 12, name, nlen);
	if (!off || off + 4 > len) {
		name[0] = '\0';
		return false;
	}
	char b[8];
	snprintf(type, tlen, "%s",
		 type_name((unsigned)(msg[off] << 8 | msg[off + 1]), b, sizeof b));
	return true;
}

void net_dns_note_source(struct net *n, uint16_t port, int pid, int tid)
{
	unsigned k = n->dns_src_next++ % (sizeof n->dns_src / sizeof n->dns_src[0]);
	n->dns_src[k].port = port;
	n->dns_src[k].pid = pid;
	n->dns_src[k].tid = tid;
}

static void source_of(const struct net *n, uint16_t port, int *pid, int *tid)
{
	*pid = *tid = 0;
	for (size_t i = 0; i < sizeof n->dns_src / sizeof n->dns_src[0]; i++)
		if (n->dns_src[i].port == port && n->dns_src[i].pid) {
			*pid = n->dns_src[i].pid;
			*tid = n->dns_src[i].tid;
		}
}

/* The answer to query `q` (len bytes, its question ending at `qend`):
 * the pinned addresses of the name for A/AAAA, REFUSED otherwise.
 * Returns the answer's length, *pinned whether the name was pinned. */
static size_t answer(const struct net *n, const unsigned char *q, size_t qend, const char *name,
		     unsigned qtype, unsigned char *out, size_t outlen, bool *pinned)
{
	memcpy(out, q, qend);
	out[2] = 0x80 | (q[2] & 0x79); /* QR, opcode, RD */
	out[3] = 0x80;                 /* RA, rcode 0 */
	out[4] = 0, out[5] = 1;        /* one question */
	memset(out + 6, 0, 6);
	size_t o = qend;
	unsigned an = 0;
	*pinned = false;
	for (int i = 0; i < n->npin; i++) {
		if (strcasecmp(n->pin[i].host, name) != 0)
			continue;
		*pinned = true;
		int fam = n->pin[i].family;
		unsigned want = fam == AF_INET ? 1 : 28;
		size_t alen = fam == AF_INET ? 4 : 16;
		if (qtype != want || o + 12 + alen > outlen)
			continue;
		unsigned char rr[12] = { 0xc0, 12, 0, (unsigned char)want, 0, 1, 0, 0,
					 0,    60, 0, (unsigned char)alen };
		memcpy(out + o, rr, 12);
		memcpy(out + o + 12, n->pin[i].addr, alen);
		o += 12 + alen;
		an++;
	}
	if (!*pinned)
		out[3] = 0x80 | 5; /* REFUSED */
	out[6] = (unsigned char)(an >> 8), out[7] = (unsigned char)an;
	return o;
}

static bool dns_may_record(struct net *n)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (!n->dns_last_ns)
		n->dns_tokens = 200;
	else
		n->dns_tokens += (double)(now - n->dns_last_ns) * 50 / 1e9;
	if (n->dns_tokens > 200)
		n->dns_tokens = 200;
	n->dns_last_ns = now;
	if (n->dns_tokens < 1) {
		n->dns_unrecorded++;
		return false;
	}
	n->dns_tokens -= 1;
	return true;
}

void net_dns_serve(struct net *n, struct audit *audit)
{
	/* All waiting questions first, then the stacks of their askers, then
	 * the answers: an asker woken by one answer would have moved on before
	 * the stack for its next question was read. */
	static struct {
		unsigned char q[512];
		size_t len;
		struct sockaddr_in from;
		int pid, tid, nstack;
		bool record;
		char stack[STACK_MAX][STACK_FRAME_LEN];
	} in[16];
	int nin = 0;
	for (int reads = 0; nin < 16 && reads < 64; reads++) {
		socklen_t fl = sizeof in[nin].from;
		ssize_t len = recvfrom(n->dns_fd, in[nin].q, sizeof in[nin].q, MSG_DONTWAIT,
				       (struct sockaddr *)&in[nin].from, &fl);
		if (len < 0)
			break;
		in[nin].len = (size_t)len;
		char qn[256], qt[12];
		if (!dns_question(in[nin].q, in[nin].len, qn, sizeof qn, qt, sizeof qt))
			continue; /* not a query: dropped unanswered, and not counted */
		source_of(n, ntohs(in[nin].from.sin_port), &in[nin].pid, &in[nin].tid);
		/* The asker was noted at its connect: a thread that is gone
		 * since (its tid maybe another process's now) is nobody. */
		if (!task_is(in[nin].pid, in[nin].tid))
			in[nin].pid = in[nin].tid = 0;
		in[nin].nstack = 0;
		bool rec = audit && dns_may_record(n);
		in[nin].record = rec;
		if (rec && in[nin].pid) {
			/* The asker waits in poll() for the answer: where it
			 * asked from is on its stack (one read per asker). */
			int same = -1;
			for (int k = 0; k < nin; k++)
				if (in[k].tid == in[nin].tid)
					same = k;
			if (same >= 0) {
				memcpy(in[nin].stack, in[same].stack, sizeof in[nin].stack);
				in[nin].nstack = in[same].nstack;
			} else {
				/* The question can arrive before the asker is
				 * in its poll() (preempted between the send and
				 * the wait): 2 ms at most are waited for it, only
				 * for a question that gets a record (200, then 50
				 * a second: docs/security.md, class 2). */
				in[nin].nstack = stack_capture_blocked(in[nin].pid, in[nin].tid,
								       in[nin].stack, STACK_MAX,
								       2000);
			}
		}
		nin++;
	}
	for (int k = 0; k < nin; k++) {
		struct call_net cn = { .family = AF_INET, .port = 53 };
		snprintf(cn.address, sizeof cn.address, "%s", NET_DNS_ADDR);
		if (!dns_question(in[k].q, in[k].len, cn.query, sizeof cn.query, cn.qtype,
				  sizeof cn.qtype))
			continue; /* not a query: dropped, as a resolver would */
		char tmp[256];
		size_t qend = read_name(in[k].q, in[k].len, 12, tmp, sizeof tmp) + 4;
		unsigned qtype = (unsigned)(in[k].q[qend - 4] << 8 | in[k].q[qend - 3]);
		bool pinned;
		unsigned char out[1024];
		size_t alen = answer(n, in[k].q, qend, cn.query, qtype, out, sizeof out, &pinned);
		sendto(n->dns_fd, out, alen, MSG_DONTWAIT, (struct sockaddr *)&in[k].from,
		       sizeof in[k].from);
		char what[300];
		snprintf(what, sizeof what, "dns %s", cn.query);
		net_seen(n, what, pinned);
		if (in[k].record) {
			struct proc *p = in[k].pid ? proc_find(in[k].pid) : NULL;
			cn.allowed = pinned;
			audit_dns(audit, in[k].pid, in[k].tid, p ? p->exe : "", &cn,
				  pinned ? "emulate" : "deny", pinned ? "net.allow" : "net.dns",
				  in[k].stack, p ? in[k].nstack : 0);
		}
	}
}
