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
#include <linux/capability.h>
#include <xxhash.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/seccomp.h>
#include <linux/filter.h>

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

/* What the walker may do: read the sandbox's memory, read files,
 * map memory without execution, write its answer, exit.  Anything else
 * fails EPERM.  Built once (libseccomp is slow), loaded in each child. */
static struct sock_fprog contain_prog;

static int contain_build(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return -1;
	static const int plain[] = {
		SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(close),
		SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(lseek), SCMP_SYS(munmap),
		SCMP_SYS(brk), SCMP_SYS(madvise), SCMP_SYS(mremap), SCMP_SYS(futex),
		SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
		SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(clock_gettime),
		SCMP_SYS(rt_sigprocmask), SCMP_SYS(getrandom),
	};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sizeof plain / sizeof plain[0]; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
	/* write: its answer pipe (fd 4) only */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, 4));
	/* open read-only only; map and protect without PROT_EXEC */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	/* process_vm_readv: the kernel's ptrace checks decide whose memory
	 * (the walker holds CAP_SYS_PTRACE and nothing else: what it could
	 * read reaches only moat, as return addresses in the audit log). */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(process_vm_readv), 0);
	void *buf = NULL;
	size_t len = 0;
	int fd = rc == 0 ? memfd_create("moat-stack-filter", MFD_CLOEXEC) : -1;
	if (fd >= 0 && seccomp_export_bpf(ctx, fd) == 0) {
		off_t sz = lseek(fd, 0, SEEK_END);
		if (sz > 0 && (buf = malloc((size_t)sz)) && pread(fd, buf, (size_t)sz, 0) == sz)
			len = (size_t)sz;
	}
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	if (!len) {
		free(buf);
		return -1;
	}
	contain_prog.len = (unsigned short)(len / sizeof(struct sock_filter));
	contain_prog.filter = buf;
	return 0;
}

/* The walks run in a process of moat's that can do nothing else:
 * libunwind parses DWARF read from the sandbox's memory (and, by its ptrace
 * helpers, files named by a maps file the sandbox can change at will), so a
 * crafted object or a race could aim the parser at moat.  The walker keeps
 * only CAP_SYS_PTRACE (to read the sandbox's memory when it runs as another
 * uid), no new privileges, the filter above, 256 MiB, and is killed when a
 * walk takes over 300 ms (a new one starts at the next walk).  One walker
 * serves every walk of the run, so its caches stay warm. */
struct walk_req {
	int32_t pid, tid, max;
	uint64_t ip, sp;
};

static int walker_in = -1, walker_out = -1;
static pid_t walker_pid;
static uid_t walker_uid = 65534;
static gid_t walker_gid = 65534;

void stack_walker_ids(uid_t uid, gid_t gid)
{
	walker_uid = uid;
	walker_gid = gid;
}
/* Walkers that died or stalled: past 5 the run goes on without stacks
 * (a sandbox crafting objects that crash the walker gets no fork storm). */
static unsigned walker_failures;

static void walker_main(int in, int out)
{
	struct walk_req rq;
	unw_addr_space_t as = unw_create_addr_space(&accessors, 0);
	if (!as)
		_exit(1);
	unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
	uint64_t last = 0;
	while (read(in, &rq, sizeof rq) == (ssize_t)sizeof rq) {
		uint64_t res[STACK_MAX + 1];
		int max = rq.max < STACK_MAX ? rq.max : STACK_MAX;
		cur.pid = rq.pid;
		cur.tid = rq.tid;
		cur.ip = rq.ip;
		cur.sp = rq.sp;
		maps_read();
		/* Unwind rules are cached by address alone: kept only while the
		 * process and its mappings stay the same. */
		uint64_t sig = (uint64_t)rq.pid;
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
				res[1 + n++] = pc;
			} while (n < max && unw_step(&c) > 0);
		}
		walk_end();
		res[0] = (uint64_t)n;
		if (write(out, res, (size_t)(n + 1) * sizeof res[0]) < 0)
			break;
	}
	_exit(0);
}

static int walker_pidfd = -1;

static void walker_stop(void)
{
	walker_failures++;
	/* Through its pidfd: the loop's waitpid(-1) may have reaped it and
	 * its pid be another process's by now. */
	if (walker_pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, walker_pidfd, SIGKILL, NULL, 0);
		close(walker_pidfd);
	}
	if (walker_pid > 0)
		waitpid(walker_pid, NULL, WNOHANG);
	if (walker_in >= 0)
		close(walker_in);
	if (walker_out >= 0)
		close(walker_out);
	walker_in = walker_out = walker_pidfd = -1;
	walker_pid = 0;
}

bool stack_walker_reaped(pid_t pid)
{
	if (pid <= 0 || pid != walker_pid)
		return false;
	walker_pid = 0; /* reaped: its pid is free; stop() only closes */
	walker_stop();
	return true;
}

static int walker_start(void)
{
	if (!contain_prog.len && contain_build() < 0)
		return -1;
	int req[2], res[2];
	if (pipe2(req, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(res, O_CLOEXEC) < 0) {
		close(req[0]);
		close(req[1]);
		return -1;
	}
	pid_t parent = getpid();
	pid_t c = fork();
	if (c < 0) {
		close(req[0]), close(req[1]), close(res[0]), close(res[1]);
		return -1;
	}
	if (c == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		setpgid(0, 0); /* terminal signals are the program's, not ours */
		/* Nothing of moat's but the two pipes (as 3 and 4); 0-2 are
		 * /dev/null, not moat's terminal. */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(req[0], 3) < 0 || dup2(res[1], 4) < 0 || dup2(null, 0) < 0 ||
		    dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(1);
		syscall(SYS_close_range, 5, ~0U, 0);
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2] = { 0 };
		bool root = geteuid() == 0;
		if (root) {
			/* Everything moat may raise, for the bounding set's drop;
			 * then the sandbox's uid, keeping CAP_SYS_PTRACE alone: its
			 * opens are what the sandbox could read itself. */
			if (syscall(SYS_capget, &h, d) < 0)
				_exit(1);
			d[0].effective = d[0].permitted, d[1].effective = d[1].permitted;
			if (syscall(SYS_capset, &h, d) < 0)
				_exit(1);
			for (int k = 0; k <= 63; k++)
				if (k != CAP_SYS_PTRACE && prctl(PR_CAPBSET_DROP, k, 0, 0, 0) < 0 && errno != EINVAL)
					_exit(1);
			if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ||
			    syscall(SYS_setgroups, 0, NULL) < 0 ||
			    syscall(SYS_setresgid, walker_gid, walker_gid, walker_gid) < 0 ||
			    syscall(SYS_setresuid, walker_uid, walker_uid, walker_uid) < 0)
				_exit(1);
			memset(d, 0, sizeof d);
			d[0].effective = d[0].permitted = 1u << CAP_SYS_PTRACE;
		}
		struct rlimit as = { 256u << 20, 256u << 20 };
#if defined(__SANITIZE_ADDRESS__)
		as.rlim_cur = as.rlim_max = RLIM_INFINITY; /* ASan's shadow is terabytes */
#endif
		if (syscall(SYS_capset, &h, d) < 0 || setrlimit(RLIMIT_AS, &as) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &contain_prog) < 0)
			_exit(1);
		walker_main(3, 4);
	}
	close(req[0]);
	close(res[1]);
	walker_in = req[1];
	walker_out = res[0];
	walker_pid = c;
	walker_pidfd = (int)syscall(SYS_pidfd_open, c, 0);
	/* A walker that stops reading must not block moat. */
	fcntl(walker_in, F_SETFL, O_NONBLOCK);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The return addresses of the thread, from the walker.  0 on any trouble
 * (and the walker is replaced). */
static int walk_contained(pid_t pid, pid_t tid, uint64_t ip, uint64_t sp, uint64_t *pcs, int max)
{
	if (walker_failures > 5 || (walker_pid <= 0 && walker_start() < 0))
		return 0;
	struct walk_req rq = { pid, tid, max, ip, sp };
	if (write(walker_in, &rq, sizeof rq) != (ssize_t)sizeof rq) {
		walker_stop();
		return 0;
	}
	uint64_t in[STACK_MAX + 1];
	size_t got = 0, want = sizeof in[0];
	struct pollfd pf = { walker_out, POLLIN, 0 };
	/* One deadline for the whole answer: a walker dribbling bytes must
	 * not hold the loop. */
	uint64_t deadline = now_ms() + 300;
	int left;
	while (got < want && (left = (int)(deadline - now_ms())) > 0 && poll(&pf, 1, left) > 0) {
		ssize_t r = read(walker_out, (char *)in + got, sizeof in - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got >= sizeof in[0]) {
			if (in[0] > STACK_MAX || (int)in[0] > max)
				break;
			want = (size_t)(in[0] + 1) * sizeof in[0];
		}
	}
	if (got < want || got < sizeof in[0]) {
		walker_stop(); /* slow, dead or confused: a new one next time */
		return 0;
	}
	int n = (int)in[0];
	memcpy(pcs, in + 1, (size_t)n * sizeof *pcs);
	return n;
}

int stack_capture_sp(pid_t pid, pid_t tid, uint64_t ip, uint64_t sp, char frames[][STACK_FRAME_LEN],
		     int max)
{
	static bool init;
	if (!init) {
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
		init = true;
	}
	uint64_t pcs[STACK_MAX];
	int n = walk_contained(pid, tid, ip, sp, pcs, max);
	/* Names: the maps as they are now, objects that pass trusted() only,
	 * read by moat itself (libelf on the host's system files). */
	cur.pid = pid;
	maps_read();
	for (int i = 0; i < n; i++)
		/* A return address points after its call: look up the call
		 * itself (pc - 1) for every frame but the first. */
		frame_of(i ? pcs[i] - 1 : pcs[i], frames[i], STACK_FRAME_LEN);
	walk_end();
	return n;
}
