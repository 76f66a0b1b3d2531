/* The run report: one JSON object (docs/limits.md). */
#include "cli/report.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include "audit/audit.h"
#include "audit/json.h"
#include "fs-emulation/vfs.h"
#include "interposer/sandbox.h"
#include "net-stub/net.h"

#define str json_str

static const char *const class_names[SC_NCLASS] = {
	"file", "net", "process", "memory", "signal", "time", "ipc", "identity", "system",
};

static void counts(FILE *f, const char *name, const uint64_t *v)
{
	fprintf(f, ",\"%s\":{", name);
	for (int i = 0; i < SC_NCLASS; i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", class_names[i], (unsigned long long)v[i]);
	fputc('}', f);
}

struct report_files report_files; /* the run's (cli collects, the report prints) */

static void add_file(void *arg, const char *vpath, const struct stat *st, int fd)
{
	struct report_files *rf = arg;
	struct report_file *nf = realloc(rf->f, (rf->n + 1) * sizeof *nf);
	if (!nf)
		return;
	rf->f = nf;
	struct report_file *e = &rf->f[rf->n++];
	snprintf(e->path, sizeof e->path, "%s", vpath);
	e->size = (uint64_t)st->st_size;
	e->xxh128[0] = '\0';
	/* Hashing costs a read: 1 GiB a file, 4 GiB a run at most. */
	static uint64_t hashed;
	if (fd < 0 || st->st_size > (1LL << 30) || hashed + (uint64_t)st->st_size > (4ULL << 30))
		return;
	hashed += (uint64_t)st->st_size;
	XXH3_state_t *h = XXH3_createState();
	if (!h || XXH3_128bits_reset(h) == XXH_ERROR) {
		XXH3_freeState(h);
		return;
	}
	char buf[65536];
	ssize_t n;
	uint64_t total = 0;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		XXH3_128bits_update(h, buf, (size_t)n);
		total += (uint64_t)n;
	}
	if (n == 0) {
		XXH128_hash_t d = XXH3_128bits_digest(h);
		snprintf(e->xxh128, sizeof e->xxh128, "%016llx%016llx",
			 (unsigned long long)d.high64, (unsigned long long)d.low64);
		e->size = total; /* what was read is what was hashed */
	}
	XXH3_freeState(h);
}

void report_collect_files(struct report_files *out, const struct vfs *v, struct timespec since)
{
	struct vfs_changes_cut cut;
	vfs_changed_files(v, since, REPORT_FILES_MAX, add_file, out, &cut);
	out->omitted = cut.files;
	out->deep = cut.dirs;
}

void report_print(FILE *f, const struct sandbox *sb, int exit_status, int moat_exit,
		  const char *version)
{
	const struct run_result *r = &sb->res;
	const struct limits *l = &sb->lim;
	fputs("{\"status\":", f);
	str(f, r->status[0] ? r->status : "XX");
	fputs(",\"message\":", f);
	str(f, r->message);
	fputs(",\"limit\":", f);
	if (r->limit)
		str(f, r->limit);
	else
		fputs("null", f);
	fprintf(f, ",\"killed\":%s", r->killed ? "true" : "false");
	if (WIFEXITED(exit_status))
		fprintf(f, ",\"exitcode\":%d", WEXITSTATUS(exit_status));
	else if (WIFSIGNALED(exit_status))
		fprintf(f, ",\"exitsig\":%d", WTERMSIG(exit_status));
	fprintf(f, ",\"moat-exit\":%d", moat_exit);
	fprintf(f, ",\"time\":%.3f,\"time-user\":%.3f,\"time-sys\":%.3f,\"time-wall\":%.3f",
		r->cpu_user + r->cpu_sys, r->cpu_user, r->cpu_sys,
		r->t1_ns > r->t0_ns ? (double)(r->t1_ns - r->t0_ns) / 1e9 : 0.0);
	fprintf(f, ",\"time-moat\":%.3f,\"moat-max-rss\":%llu", r->moat_cpu,
		(unsigned long long)r->moat_rss_kb);
	fprintf(f, ",\"max-rss\":%llu,\"processes\":%u,\"max-processes\":%u",
		(unsigned long long)r->max_rss_kb, r->procs_started + 1,
		r->procs_max ? r->procs_max : 1);
	counts(f, "supervised", sb->supervised);
	counts(f, "denied", sb->denied);
	/* cgroup: the kernel holds every memory and task limit set;
	 * cgroup+polling: it holds some, moat's sampling the rest. */
	const struct cgroups *cg = &sb->cg;
	bool held = (!l->mem_bytes || cg->ver[CGP_MEMORY]) && (!l->pids || cg->ver[CGP_PIDS]);
	fprintf(f, ",\"enforcement\":\"%s\"",
		!cgroup_any(cg) ? "rlimits+polling"
		: held          ? "cgroup"
				: "cgroup+polling");
	static const char *const piece[CGP_N] = { "memory", "pids", "cpu", "kill" };
	fputs(",\"cgroup\":{", f);
	for (int p = 0; p < CGP_N; p++)
		if (cg->ver[p])
			fprintf(f, "%s\"%s\":\"v%d\"", p ? "," : "", piece[p], cg->ver[p]);
		else
			fprintf(f, "%s\"%s\":null", p ? "," : "", piece[p]);
	fputc('}', f);
	if (r->mem_peak)
		fprintf(f, ",\"memory-peak\":%llu", (unsigned long long)(r->mem_peak / 1024));
	/* What moat held for it in files it handed over, charged to the same
	 * limit (fs-emulation/held.c). */
	fprintf(f, ",\"memory-held-peak\":%llu", (unsigned long long)(held_peak() / 1024));
	fprintf(f,
		",\"limits\":{\"time\":%g,\"wall-time\":%g,\"memory\":%llu,\"processes\":%u,"
		"\"file-size\":%llu,\"open-files\":%u,\"kill-grace\":%g}",
		l->cpu_s, l->wall_s, (unsigned long long)l->mem_bytes, l->pids,
		(unsigned long long)l->fsize_bytes, l->nofile, l->grace_s);
	const struct net *n = sb->net;
	if (n) {
		fputs(",\"network\":{\"loopback\":", f);
		str(f, n->mode == NET_NETNS ? "netns" : n->mode == NET_USERNS ? "userns" : "none");
		fputs(",\"destinations\":", f);
		net_json_destinations(f, n);
		fputc('}', f);
	}
	if (sb->audit) {
		uint64_t rec, drop, bytes;
		audit_stats(sb->audit, &rec, &drop, &bytes);
		fprintf(f, ",\"audit\":{\"records\":%llu,\"dropped\":%llu,\"bytes\":%llu}",
			(unsigned long long)rec, (unsigned long long)drop,
			(unsigned long long)bytes);
	}
	fputs(",\"files\":[", f);
	for (size_t i = 0; i < report_files.n; i++) {
		const struct report_file *e = &report_files.f[i];
		fputs(i ? ",{\"path\":" : "{\"path\":", f);
		if (str(f, e->path)) {
			fputs(",\"path-hex\":", f);
			json_hex(f, e->path, strlen(e->path));
		}
		fprintf(f, ",\"size\":%llu,\"xxh128\":", (unsigned long long)e->size);
		if (e->xxh128[0])
			str(f, e->xxh128);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputc(']', f);
	/* A list that is cut says so, and by how much. */
	if (report_files.omitted || report_files.deep)
		fprintf(f, ",\"files-truncated\":true,\"files-omitted\":%u,\"dirs-not-walked\":%u",
			report_files.omitted, report_files.deep);
	fputs(",\"version\":", f);
	str(f, version);
	fputs("}\n", f);
}

void report_json(FILE *f, const struct sandbox *sb, int exit_status, int moat_exit,
		 const char *version)
{
	const struct output *o = &sb->out;
	/* Output is not always text: when a stream is not valid UTF-8, its
	 * exact bytes follow in base64. */
	static const char *const name[2] = { "stdout", "stderr" };
	for (int i = 0; i < 2; i++) {
		fprintf(f, "%s\"%s\":", i ? "," : "{", name[i]);
		if (json_strn(f, o->buf[i] ? o->buf[i] : "", o->len[i])) {
			fprintf(f, ",\"%s-base64\":", name[i]);
			json_base64(f, o->buf[i], o->len[i]);
		}
	}
	fprintf(f, ",\"stdout-truncated\":%s,\"stderr-truncated\":%s,\"report\":",
		o->truncated[0] ? "true" : "false", o->truncated[1] ? "true" : "false");
	char *rep = NULL;
	size_t rlen = 0;
	FILE *m = open_memstream(&rep, &rlen);
	if (m) {
		report_print(m, sb, exit_status, moat_exit, version);
		fclose(m);
	}
	if (rep && rlen && rep[rlen - 1] == '\n')
		rep[--rlen] = '\0'; /* one line for the whole object */
	fputs(rep && rlen ? rep : "null", f);
	free(rep);
	fputs("}\n", f);
}

void report_print_to(FILE *f, void *arg)
{
	const struct report_args *a = arg;
	report_print(f, a->sb, a->exit_status, a->moat_exit, a->version);
}
