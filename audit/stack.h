/* The calling code's stack, for audit records (rule 10: file, network and
 * exec denials carry it). */
#ifndef MOAT_STACK_H
#define MOAT_STACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define STACK_FRAME_LEN 160

/* Objects below `dir` (a directory the sandbox can write: moat's scratch,
 * a --persist directory, a writable --bind source) are never parsed for
 * unwind rules or symbols.  Up to 16. */
void stack_distrust(const char *dir);
/* The ids the stack walker runs as when moat is root: the sandbox's (it
 * opens what the sandbox could read, and nothing more). */
void stack_walker_ids(uid_t uid, gid_t gid);
/* At moat's start, before any sandbox exists: when the caller's
 * LD_LIBRARY_PATH is set, map libunwind now.  The walker maps it otherwise
 * (dlopen, at the run's first stack), and ld.so would then search the
 * caller's directories while the sandbox runs, one of which it may write
 * (an empty element is moat's cwd, often a --bind): its library would run
 * as root, outside.  Without LD_LIBRARY_PATH the search is the system's
 * own (ld.so.cache, /lib, /usr/lib), which no sandbox writes. */
void stack_unwinder_early(void);
/* The loop reaped `pid`: true (and forgotten) when it was the walker. */
bool stack_walker_reaped(pid_t pid);
#define STACK_MAX 16

/* The innermost frames of thread `tid` (of process `pid`), which waits in
 * a syscall made at `ip`: "name+0xoff (object+0xoff)" each, or
 * "object+0xoff" where no symbol holds the address (a static function of
 * a stripped binary: the nearest exported name would be a wrong one).  Returns the number
 * written (0 when the thread cannot be read: gone, or not in a call). */
int stack_capture(pid_t pid, pid_t tid, uint64_t ip, char frames[][STACK_FRAME_LEN], int max);
/* The same for a thread blocked in any syscall (one the kernel runs:
 * poll, recv): its pc and sp from /proc/TID/syscall.  A thread still
 * running is waited for in 0.1 ms steps, wait_us at most; 0 when it still
 * runs then. */
int stack_capture_blocked(pid_t pid, pid_t tid, char frames[][STACK_FRAME_LEN], int max,
			  unsigned wait_us);
/* The same from a ptrace stop, whose stack pointer the caller has. */
int stack_capture_sp(pid_t pid, pid_t tid, uint64_t ip, uint64_t sp, char frames[][STACK_FRAME_LEN],
		     int max);

#endif
