/* Internals of the stack capture (stack.h), shared by its four files:
 * stack.c (the entry points, the mappings of the thread's process and
 * which objects moat parses), stack_walker.c (the contained process the
 * walks run in), stack_unwind.c (libunwind, in that process) and
 * stack_symbols.c (the names of the frames, in moat).  Not for use
 * outside audit/. */
#ifndef MOAT_STACK_INTERNAL_H
#define MOAT_STACK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The file mappings of a process, from /proc/PID/maps. */
#define STACK_MAX_MAPS 1024
struct stack_maps {
	struct {
		uint64_t lo, hi, off;
		char *path;
	} map[STACK_MAX_MAPS];
	int nmap;
};

/* ---- stack.c ---- */

/* Read the file mappings of process `pid` into *m (at most
 * STACK_MAX_MAPS; none when it is gone).  The paths are malloc'd:
 * stack_maps_free releases them. */
void stack_maps_read(struct stack_maps *m, pid_t pid);
/* The index of the mapping that holds `ip`, or -1. */
int stack_map_of(const struct stack_maps *m, uint64_t ip);
void stack_maps_free(struct stack_maps *m);
/* May moat parse the object at `path` (for unwind rules or symbols)?
 * Only the host's system files, outside every directory the sandbox can
 * write (stack_distrust). */
bool stack_trusted(const char *path);

/* ---- stack_walker.c, the contained walker ---- */

/* The return addresses of thread `tid` of process `pid`, stopped at `ip`
 * with stack pointer `sp`: at most `max` (<= STACK_MAX) written to pcs,
 * innermost first, by the walker process (started on first use, and
 * again after one died or stalled).  Their number; 0 on any trouble. */
int stack_walk_contained(pid_t pid, pid_t tid, uint64_t ip, uint64_t sp, uint64_t *pcs, int max);

/* ---- stack_unwind.c, in the walker ---- */

/* Map libunwind (dlopen), in the walker before its filter forbids it.
 * 0, or -1: no libunwind on this host (walks then fail, and the run goes
 * on without stacks). */
int stack_unwind_load(void);
/* Make libunwind's address space, once, in the walker.  0, or -1. */
int stack_unwind_init(void);
/* Unwind thread `tid` of process `pid` from `ip` and `sp`: the program
 * counters of its frames, innermost first, in pcs (at most `max`, but at
 * least the first).  Their number. */
int stack_unwind(pid_t pid, pid_t tid, uint64_t ip, uint64_t sp, uint64_t *pcs, int max);

/* ---- stack_symbols.c, in moat ---- */

/* The frame at `ip` of a process whose mappings are `m`, for the audit:
 * "name+0x14 (libc.so.6+0x10e1b4)", "libc.so.6+0x10e1b4" or "0x7f00...",
 * written to buf (`len` bytes). */
void stack_frame_name(const struct stack_maps *m, uint64_t ip, char *buf, size_t len);

#endif
