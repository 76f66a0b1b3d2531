/* The stack of a sandbox thread waiting in a supervised call (stack.h):
 * the entry points, the mappings of the thread's process, and which
 * objects moat parses.
 *
 * The walk itself runs in a contained process (stack_walker.c), where
 * libunwind follows the frames (stack_unwind.c); it answers with return
 * addresses alone, which moat names from the host's system files
 * (stack_symbols.c).  Their shared internals: stack_internal.h. */
#include "audit/stack.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "audit/stack_internal.h"
#include "core/creds.h"

/* ---- the mappings of the thread's process ---- */

int stack_map_of(const struct stack_maps *m, uint64_t ip)
{
	for (int i = 0; i < m->nmap; i++)
		if (ip >= m->map[i].lo && ip < m->map[i].hi)
			return i;
	return -1;
}

void stack_maps_read(struct stack_maps *m, pid_t pid)
{
	char path[64], line[4096 + 128];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	m->nmap = 0;
	while (f && m->nmap < STACK_MAX_MAPS && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, off;
		int name = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &name) < 3 ||
		    !name || line[name] != '/')
			continue;
		line[name + strcspn(line + name, "\n")] = '\0';
		char *p = strdup(line + name);
		if (!p)
			break;
		m->map[m->nmap].lo = lo, m->map[m->nmap].hi = hi, m->map[m->nmap].off = off;
		m->map[m->nmap++].path = p;
	}
	if (f)
		fclose(f);
}

void stack_maps_free(struct stack_maps *m)
{
	for (int i = 0; i < m->nmap; i++)
		free(m->map[i].path);
	m->nmap = 0;
}

/* ---- which objects moat parses ----
 *
 * libunwind parses an object's DWARF and libelf its symbol tables, in the
 * supervisor.  An object the sandbox wrote (compiled into /tmp, dropped in
 * a writable layer) could be crafted against those parsers, so only the
 * host's system files are parsed: below /usr, /lib*, /bin, /sbin, owned and
 * writable by root alone, and outside every directory the sandbox can
 * write (stack_distrust).  A frame in any other object is shown as the
 * object and offset, and the walk ends there. */

static char distrusted[16][PATH_MAX];
static int ndistrusted;

void stack_distrust(const char *dir)
{
	if (ndistrusted < 16 && dir && *dir)
		snprintf(distrusted[ndistrusted++], PATH_MAX, "%s", dir);
}

bool stack_trusted(const char *path)
{
	static const char *const sys[] = { "/usr/",    "/lib/", "/lib64/", "/lib32/",
					   "/libx32/", "/bin/", "/sbin/" };
	bool under = false;
	for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
		if (strncmp(path, sys[i], strlen(sys[i])) == 0)
			under = true;
	if (!under || strstr(path, "/../") || strstr(path, " (deleted)"))
		return false;
	for (int i = 0; i < ndistrusted; i++) {
		size_t l = strlen(distrusted[i]);
		if (strncmp(path, distrusted[i], l) == 0 && (path[l] == '/' || path[l] == '\0'))
			return false;
	}
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 022);
}

/* The stack pointer of a thread blocked in a syscall: /proc/TID/syscall
 * is "NR ARG1..ARG6 SP PC", or "running" (-EBUSY). */
static int read_sp_pc(pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/syscall", tid);
	creds_proc_begin();
	FILE *f = fopen(path, "re");
	creds_proc_end();
	if (!f)
		return -errno;
	char *ok = fgets(buf, sizeof buf, f);
	fclose(f);
	if (!ok)
		return -EIO;
	if (strncmp(buf, "running", 7) == 0)
		return -EBUSY;
	unsigned long long v[9];
	if (sscanf(buf, "%llu %llx %llx %llx %llx %llx %llx %llx %llx", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7], &v[8]) != 9)
		return -EIO;
	*sp = v[7];
	if (pc)
		*pc = v[8];
	return 0;
}

int stack_capture(pid_t pid, pid_t tid, uint64_t ip, char frames[][STACK_FRAME_LEN], int max)
{
	uint64_t sp;
	if (read_sp_pc(tid, &sp, NULL) < 0)
		return 0;
	return stack_capture_sp(pid, tid, ip, sp, frames, max);
}

int stack_capture_blocked(pid_t pid, pid_t tid, char frames[][STACK_FRAME_LEN], int max,
			  unsigned wait_us)
{
	uint64_t sp, pc;
	int r;
	for (unsigned waited = 0; (r = read_sp_pc(tid, &sp, &pc)) == -EBUSY && waited < wait_us;
	     waited += 100)
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	if (r < 0)
		return 0;
	return stack_capture_sp(pid, tid, pc, sp, frames, max);
}

int stack_capture_sp(pid_t pid, pid_t tid, uint64_t ip, uint64_t sp, char frames[][STACK_FRAME_LEN],
		     int max)
{
	static struct stack_maps maps;
	uint64_t pcs[STACK_MAX];
	int n = stack_walk_contained(pid, tid, ip, sp, pcs, max);
	/* Names: the maps as they are now, objects that pass stack_trusted()
	 * only, read by moat itself (libelf on the host's system files). */
	stack_maps_read(&maps, pid);
	for (int i = 0; i < n; i++)
		/* A return address points after its call: look up the call
		 * itself (pc - 1) for every frame but the first. */
		stack_frame_name(&maps, i ? pcs[i] - 1 : pcs[i], frames[i], STACK_FRAME_LEN);
	stack_maps_free(&maps);
	return n;
}
