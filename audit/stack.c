/* The stack of a sandbox thread waiting in a supervised call (stack.h).
 *
 * The thread is not in a ptrace stop (it waits for the seccomp listener's
 * answer), so its registers are not to be had from ptrace.  Its program
 * counter comes with the notification and its stack pointer from
 * /proc/TID/syscall; libunwind walks the frames from there with the
 * DWARF CFI of each object (found through /proc/PID/maps by libunwind's
 * ptrace helpers, which read the ELF files themselves), and the stack's
 * memory is read with process_vm_readv.  Registers other than those two
 * are unknown: a frame whose unwinding needs one ends the walk, which
 * keeps the innermost frames — the ones that say where the call came
 * from. */
#include "audit/stack.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libunwind-ptrace.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>

/* The thread being walked (the supervisor walks one at a time). */
#define MAX_MAPS 1024
#define MAX_OBJS 8

static struct {
	pid_t pid, tid;
	uint64_t ip, sp;
	/* Its file mappings (read once per walk) and one libunwind ptrace
	 * helper per object met: each caches the last object it opened, so
	 * frames alternating between two objects would reopen both. */
	struct { uint64_t lo, hi, off; char *path; } map[MAX_MAPS];
	int nmap;
	struct { const char *path; void *upt; } obj[MAX_OBJS];
	int nobj;
} cur;

static int map_of(uint64_t ip)
{
	for (int i = 0; i < cur.nmap; i++)
		if (ip >= cur.map[i].lo && ip < cur.map[i].hi)
			return i;
	return -1;
}

static void maps_read(void)
{
	char path[64], line[4096 + 128];
	snprintf(path, sizeof path, "/proc/%d/maps", cur.pid);
	FILE *f = fopen(path, "re");
	cur.nmap = 0;
	while (f && cur.nmap < MAX_MAPS && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, off;
		int name = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &name) < 3 || !name ||
		    line[name] != '/')
			continue;
		line[name + strcspn(line + name, "\n")] = '\0';
		char *p = strdup(line + name);
		if (!p)
			break;
		cur.map[cur.nmap].lo = lo, cur.map[cur.nmap].hi = hi, cur.map[cur.nmap].off = off;
		cur.map[cur.nmap++].path = p;
	}
	if (f)
		fclose(f);
}

static void walk_end(void)
{
	for (int i = 0; i < cur.nobj; i++)
		_UPT_destroy(cur.obj[i].upt);
	for (int i = 0; i < cur.nmap; i++)
		free(cur.map[i].path);
	cur.nobj = cur.nmap = 0;
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

static bool trusted(const char *path)
{
	static const char *const sys[] = { "/usr/", "/lib/", "/lib64/", "/lib32/", "/libx32/",
					   "/bin/", "/sbin/" };
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

/* The ptrace helper for the object mapped at ip, made on first use; NULL
 * for an object moat does not parse (the walk ends there). */
static void *upt_for(uint64_t ip)
{
	int m = map_of(ip);
	const char *path = m >= 0 ? cur.map[m].path : "";
	if (!trusted(path))
		return NULL;
	for (int i = 0; i < cur.nobj; i++)
		if (strcmp(cur.obj[i].path, path) == 0)
			return cur.obj[i].upt;
	if (cur.nobj == MAX_OBJS)
		return cur.obj[MAX_OBJS - 1].upt;
	void *u = _UPT_create(cur.tid);
	if (!u)
		return NULL;
	cur.obj[cur.nobj].path = path;
	cur.obj[cur.nobj++].upt = u;
	return u;
}

static int acc_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	(void)as, (void)arg;
	if (write)
		return -UNW_EINVAL;
	struct iovec local = { val, sizeof *val }, remote = { (void *)(uintptr_t)addr, sizeof *val };
	return process_vm_readv(cur.tid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof *val ? 0
											   : -UNW_EINVAL;
}

static int acc_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	(void)as, (void)arg;
	if (write)
		return -UNW_EINVAL;
	if (reg == UNW_X86_64_RIP)
		*val = cur.ip;
	else if (reg == UNW_X86_64_RSP)
		*val = cur.sp;
	else
		return -UNW_EBADREG;
	return 0;
}

static int acc_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	(void)as, (void)reg, (void)val, (void)write, (void)arg;
	return -UNW_EBADREG;
}

static int acc_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as, (void)c, (void)arg;
	return -UNW_EINVAL;
}

static unw_accessors_t accessors;

/* libunwind's ptrace helpers find the unwind tables and symbol names from
 * the ELF files named in /proc/PID/maps; their memory and register reads
 * come back to the accessors above (through the address space). */
static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	(void)arg;
	void *u = upt_for(ip);
	return u ? _UPT_find_proc_info(as, ip, pi, need, u) : -UNW_ENOINFO;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)arg;
	void *u = cur.nobj ? cur.obj[0].upt : NULL;
	if (u)
		_UPT_put_unwind_info(as, pi, u);
}

static int get_dyn(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as, (void)addr, (void)arg;
	return -UNW_ENOINFO; /* no JIT registration is read */
}

static int get_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off,
		    void *arg)
{
	(void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
	return -UNW_ENOINFO; /* names come from sym_lookup below */
}

/* ---- symbols: libelf, the function that contains the address ----
 *
 * Distribution binaries keep only .dynsym: a static function has no
 * symbol, and the nearest exported one before it would be a wrong name.
 * So a name is given only when the address is inside the symbol's size;
 * otherwise the frame is the object and offset alone, which is exact. */

struct sym {
	uint64_t lo, hi;
	char *name;
};

struct obj {
	dev_t dev;
	ino_t ino;
	struct sym *sym;
	size_t nsym;
	struct { uint64_t off, filesz, vaddr; } load[8];
	int nload;
};

static struct obj objs[32];
static unsigned nobj;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void obj_load(struct obj *o, int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return;
	size_t nph = 0;
	elf_getphdrnum(e, &nph);
	for (size_t i = 0; i < nph && o->nload < 8; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
			o->load[o->nload].off = ph.p_offset, o->load[o->nload].filesz = ph.p_filesz,
			o->load[o->nload++].vaddr = ph.p_vaddr;
	}
	size_t cap = 0;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(s, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sy;
			if (!gelf_getsym(d, (int)i, &sy) || GELF_ST_TYPE(sy.st_info) != STT_FUNC ||
			    !sy.st_value || !sy.st_size)
				continue;
			const char *nm = elf_strptr(e, sh.sh_link, sy.st_name);
			if (!nm || !*nm)
				continue;
			if (o->nsym == cap) {
				cap = cap ? 2 * cap : 256;
				struct sym *ns = realloc(o->sym, cap * sizeof *ns);
				if (!ns)
					break;
				o->sym = ns;
			}
			o->sym[o->nsym++] = (struct sym){ sy.st_value, sy.st_value + sy.st_size, strdup(nm) };
		}
	}
	elf_end(e);
	if (o->nsym)
		qsort(o->sym, o->nsym, sizeof *o->sym, sym_cmp);
}

static struct obj *obj_get(const char *file)
{
	struct stat st;
	if (!trusted(file) || stat(file, &st) < 0)
		return NULL;
	for (unsigned i = 0; i < nobj && i < 32; i++)
		if (objs[i].dev == st.st_dev && objs[i].ino == st.st_ino)
			return &objs[i];
	struct obj *o = &objs[nobj++ % 32];
	for (size_t i = 0; i < o->nsym; i++)
		free(o->sym[i].name);
	free(o->sym);
	memset(o, 0, sizeof *o);
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		obj_load(o, fd);
		close(fd);
	}
	return o;
}

/* The function of `file` holding file offset `off`, and the offset in it. */
static const char *sym_lookup(const char *file, uint64_t off, uint64_t *in)
{
	struct obj *o = obj_get(file);
	if (!o || !o->nsym)
		return NULL;
	uint64_t va = 0;
	int k;
	for (k = 0; k < o->nload; k++)
		if (off >= o->load[k].off && off < o->load[k].off + o->load[k].filesz) {
			va = off - o->load[k].off + o->load[k].vaddr;
			break;
		}
	if (k == o->nload)
		return NULL;
	size_t lo = 0, hi = o->nsym;
	while (lo < hi) { /* the last symbol starting at or below va */
		size_t mid = (lo + hi) / 2;
		if (o->sym[mid].lo <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || va >= o->sym[lo - 1].hi)
		return NULL;
	*in = va - o->sym[lo - 1].lo;
	return o->sym[lo - 1].name;
}

/* The stack pointer of a thread blocked in a syscall: /proc/TID/syscall
 * is "NR ARG1..ARG6 SP PC". */
static int read_sp_pc(pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/syscall", tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char *ok = fgets(buf, sizeof buf, f);
	fclose(f);
	if (!ok)
		return -EIO;
	unsigned long long v[9];
	if (sscanf(buf, "%llu %llx %llx %llx %llx %llx %llx %llx %llx", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7], &v[8]) != 9)
		return -EIO;
	*sp = v[7];
	if (pc)
		*pc = v[8];
	return 0;
}

/* "name+0x14 (libc.so.6+0x10e1b4)" or "libc.so.6+0x10e1b4" for an address of
 * a mapped file, "0x7f00..." for anything else (a JIT's code). */
static void frame_of(uint64_t ip, char *buf, size_t len)
{
	int m = map_of(ip);
	if (m < 0) {
		snprintf(buf, len, "0x%" PRIx64, ip);
		return;
	}
	const char *file = cur.map[m].path, *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	uint64_t foff = ip - cur.map[m].lo + cur.map[m].off, in = 0;
	const char *fn = sym_lookup(file, foff, &in);
	if (fn)
		snprintf(buf, len, "%s+0x%" PRIx64 " (%s+0x%" PRIx64 ")", fn, in, base, foff);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, base, foff);
}

int stack_capture(pid_t pid, pid_t tid, uint64_t ip, char frames[][STACK_FRAME_LEN], int max)
{
	uint64_t sp;
	if (read_sp_pc(tid, &sp, NULL) < 0)
		return 0;
	return stack_capture_sp(pid, tid, ip, sp, frames, max);
}

int stack_capture_blocked(pid_t pid, pid_t tid, char frames[][STACK_FRAME_LEN], int max)
{
	uint64_t sp, pc;
	if (read_sp_pc(tid, &sp, &pc) < 0)
		return 0;
	return stack_capture_sp(pid, tid, pc, sp, frames, max);
}

int stack_capture_sp(pid_t pid, pid_t tid, uint64_t ip, uint64_t sp, char frames[][STACK_FRAME_LEN],
		     int max)
{
	static unw_addr_space_t as;
	if (!as) {
		elf_version(EV_CURRENT);
		accessors = (unw_accessors_t){
			.find_proc_info = find_proc_info,
			.put_unwind_info = put_unwind_info,
			.get_dyn_info_list_addr = get_dyn,
			.access_mem = acc_mem,
			.access_reg = acc_reg,
			.access_fpreg = acc_fpreg,
			.resume = acc_resume,
			.get_proc_name = get_name,
		};
		as = unw_create_addr_space(&accessors, 0);
		if (!as)
			return 0;
		unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
	}
	cur.pid = pid;
	cur.tid = tid;
	cur.ip = ip;
	cur.sp = sp;
	maps_read();
	/* Cached unwind rules are keyed by address alone: another process,
	 * or this one after an exec or a dlopen, may hold something else
	 * there.  The cache lives only while the mappings stay the same. */
	static uint64_t last;
	uint64_t sig = (uint64_t)pid;
	for (int i = 0; i < cur.nmap; i++)
		sig = XXH3_64bits_withSeed(cur.map[i].path, strlen(cur.map[i].path),
					   sig ^ cur.map[i].lo ^ (cur.map[i].off << 1));
	if (sig != last)
		unw_flush_cache(as, 0, 0);
	last = sig;
	int n = 0;
	unw_cursor_t c;
	if (unw_init_remote(&c, as, NULL) == 0) {
		do {
			unw_word_t pc;
			if (unw_get_reg(&c, UNW_REG_IP, &pc) < 0 || pc == 0)
				break;
			/* A return address points after its call: look up the
			 * call itself (pc - 1) for every frame but the first. */
			frame_of(n ? pc - 1 : pc, frames[n], STACK_FRAME_LEN);
			n++;
		} while (n < max && unw_step(&c) > 0);
	}
	walk_end();
	return n;
}
