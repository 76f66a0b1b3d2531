/* The unwinding of a sandbox thread's stack (stack_internal.h), run in
 * the contained walker process only (stack_walker.c says why).
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
#include <dlfcn.h>
#include <libunwind-ptrace.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <xxhash.h>

#include "audit/stack_internal.h"

/* libunwind, mapped by the walker alone, before its filter
 * (stack_unwind_load): moat never maps it, nor its three other libraries
 * (measured: ~0.45 ms of every start on this VM). */
static struct {
	__typeof__(_UPT_create) *upt_create;
	__typeof__(_UPT_destroy) *upt_destroy;
	__typeof__(_UPT_find_proc_info) *upt_find_proc_info;
	__typeof__(_UPT_put_unwind_info) *upt_put_unwind_info;
	__typeof__(unw_create_addr_space) *create_addr_space;
	__typeof__(unw_set_caching_policy) *set_caching_policy;
	__typeof__(unw_flush_cache) *flush_cache;
	__typeof__(unw_init_remote) *init_remote;
	__typeof__(unw_get_reg) *get_reg;
	__typeof__(unw_step) *step;
} lu;

static int sym(void *lib, const char *name, void *slot)
{
	void *f = lib ? dlsym(lib, name) : NULL;
	if (!f)
		return -1;
	memcpy(slot, &f, sizeof f);
	return 0;
}

/* unw_* are macros for the architecture's names (_Ux86_64_...). */
#define UNW_NAME2(f) #f
#define UNW_NAME(f) UNW_NAME2(f)

int stack_unwind_load(void)
{
	static int loaded; /* 1: mapped, -1: could not be */
	if (loaded)
		return loaded > 0 ? 0 : -1;
	/* The architecture's library first and global: the ptrace helpers
	 * do not name it as a dependency, and take their unw_ calls from it */
	void *g = dlopen("libunwind-" UNW_NAME(UNW_TARGET) ".so.8", RTLD_NOW | RTLD_GLOBAL);
	void *p = g ? dlopen("libunwind-ptrace.so.0", RTLD_NOW | RTLD_LOCAL) : NULL;
	loaded = sym(p, "_UPT_create", &lu.upt_create) < 0 ||
				 sym(p, "_UPT_destroy", &lu.upt_destroy) < 0 ||
				 sym(p, "_UPT_find_proc_info", &lu.upt_find_proc_info) < 0 ||
				 sym(p, "_UPT_put_unwind_info", &lu.upt_put_unwind_info) < 0 ||
				 sym(g, UNW_NAME(unw_create_addr_space), &lu.create_addr_space) <
					 0 ||
				 sym(g, UNW_NAME(unw_set_caching_policy), &lu.set_caching_policy) <
					 0 ||
				 sym(g, UNW_NAME(unw_flush_cache), &lu.flush_cache) < 0 ||
				 sym(g, UNW_NAME(unw_init_remote), &lu.init_remote) < 0 ||
				 sym(g, UNW_NAME(unw_get_reg), &lu.get_reg) < 0 ||
				 sym(g, UNW_NAME(unw_step), &lu.step) < 0
			 ? -1
			 : 1;
	return loaded > 0 ? 0 : -1;
}

/* The thread being walked (the walker walks one at a time). */
#define MAX_OBJS 8

static struct {
	pid_t tid;
	uint64_t ip, sp;
	/* Its file mappings (read once per walk) and one libunwind ptrace
	 * helper per object met: each caches the last object it opened, so
	 * frames alternating between two objects would reopen both. */
	struct stack_maps maps;
	struct {
		const char *path;
		void *upt;
	} obj[MAX_OBJS];
	int nobj;
} cur;

static void walk_end(void)
{
	for (int i = 0; i < cur.nobj; i++)
		lu.upt_destroy(cur.obj[i].upt);
	stack_maps_free(&cur.maps);
	cur.nobj = 0;
}

/* The ptrace helper for the object mapped at ip, made on first use; NULL
 * for an object moat does not parse (the walk ends there). */
static void *upt_for(uint64_t ip)
{
	int m = stack_map_of(&cur.maps, ip);
	const char *path = m >= 0 ? cur.maps.map[m].path : "";
	if (!stack_trusted(path))
		return NULL;
	for (int i = 0; i < cur.nobj; i++)
		if (strcmp(cur.obj[i].path, path) == 0)
			return cur.obj[i].upt;
	if (cur.nobj == MAX_OBJS)
		return cur.obj[MAX_OBJS - 1].upt;
	void *u = lu.upt_create(cur.tid);
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
	struct iovec local = { val, sizeof *val },
		     remote = { (void *)(uintptr_t)addr, sizeof *val };
	return process_vm_readv(cur.tid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof *val
		       ? 0
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

/* libunwind's ptrace helpers find the unwind tables and symbol names from
 * the ELF files named in /proc/PID/maps; their memory and register reads
 * come back to the accessors above (through the address space). */
static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need,
			  void *arg)
{
	(void)arg;
	void *u = upt_for(ip);
	return u ? lu.upt_find_proc_info(as, ip, pi, need, u) : -UNW_ENOINFO;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)arg;
	void *u = cur.nobj ? cur.obj[0].upt : NULL;
	if (u)
		lu.upt_put_unwind_info(as, pi, u);
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
	return -UNW_ENOINFO; /* names come from stack_symbols.c, in moat */
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn,
	.access_mem = acc_mem,
	.access_reg = acc_reg,
	.access_fpreg = acc_fpreg,
	.resume = acc_resume,
	.get_proc_name = get_name,
};

static unw_addr_space_t addr_space;
static uint64_t last; /* the signature of the process and mappings last walked */

int stack_unwind_init(void)
{
	addr_space = lu.create_addr_space(&accessors, 0);
	if (!addr_space)
		return -1;
	lu.set_caching_policy(addr_space, UNW_CACHE_GLOBAL);
	return 0;
}

int stack_unwind(pid_t pid, pid_t tid, uint64_t ip, uint64_t sp, uint64_t *pcs, int max)
{
	cur.tid = tid;
	cur.ip = ip;
	cur.sp = sp;
	stack_maps_read(&cur.maps, pid);
	/* Unwind rules are cached by address alone: kept only while the
	 * process and its mappings stay the same. */
	uint64_t sig = (uint64_t)pid;
	for (int i = 0; i < cur.maps.nmap; i++)
		sig = XXH3_64bits_withSeed(cur.maps.map[i].path, strlen(cur.maps.map[i].path),
					   sig ^ cur.maps.map[i].lo ^ (cur.maps.map[i].off << 1));
	if (sig != last)
		lu.flush_cache(addr_space, 0, 0);
	last = sig;
	int n = 0;
	unw_cursor_t c;
	if (lu.init_remote(&c, addr_space, NULL) == 0) {
		do {
			unw_word_t pc;
			if (lu.get_reg(&c, UNW_REG_IP, &pc) < 0 || pc == 0)
				break;
			pcs[n++] = pc;
		} while (n < max && lu.step(&c) > 0);
	}
	walk_end();
	return n;
}
