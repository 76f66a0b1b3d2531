/* Internals of the synthetic /proc, shared by its walk and serving
 * (proc.c) and its generators, the contents of its files (procfs_gen.c).
 * Not for use outside fs-emulation/.  vfs.h declares what the rest of
 * moat calls: procfs_walk_step and procfs_open (proc.c), procfs_sysinfo
 * (procfs_gen.c). */
#ifndef MOAT_PROCFS_H
#define MOAT_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "fs-emulation/vfs.h"

struct task;

/* A /proc-relative dir ("." / "123" / "123/fd" / "123/task/124") split
 * into the pid it is about and the rest. */
struct procfs_dir {
	pid_t pid;       /* 0: not under a pid */
	pid_t tid;       /* under task/TID */
	const char *sub; /* "" / "fd" / "fdinfo" / "task" / "sys/kernel"... */
};

/* What the sandbox is shown for host path `host` (a file an fd or a
 * mapping names), written to out (`len` bytes): its virtual path, the
 * name itself where it names no host place, or a neutral name (proc.c). */
void procfs_shown_path(struct vfs *v, const char *host, char *out, size_t len);

/* ---- generators (procfs_gen.c) ----
 *
 * Each writes the whole file to `out` (an open_memstream the caller owns
 * and closes) and returns 0, or -errno: -ENOENT for a name that is no
 * file of that directory or a process that is gone. */

/* A file outside the pid directories: `sub` is "" (the top), "sys/kernel",
 * "sys/kernel/random" or "sys/vm"; `name` the file in it. */
int procfs_gen_top(const struct vfs *v, const char *sub, const char *name, FILE *out);
/* File `name` of /proc/PID (or of /proc/PID/task/TID: d->tid), read by
 * task `t` (NULL: unknown; environ and auxv are then refused). */
/* /proc/PID/pagemap: the kernel's own file of that process, opened with
 * the caller's ids for a caller that may read the process's private files
 * (a snapshot would be the whole address space).  An fd, or -errno. */
int procfs_open_pagemap(struct task *t, const struct procfs_dir *d);
/* /proc/PID/net/NAME (tcp, tcp6, udp, udp6, unix, if_inet6, dev, route):
 * the kernel's file of process `pid`'s network namespace, the sandbox's
 * own (shown only with v->proc_net). */
int procfs_gen_net(struct vfs *v, pid_t pid, const char *name, FILE *out);
int procfs_gen_pid(struct vfs *v, struct task *t, const struct procfs_dir *d, const char *name,
		   FILE *out);
/* /proc/PID/fdinfo/`name`: the kernel's own (position, flags, counters;
 * no path). */
int procfs_gen_fdinfo(pid_t pid, bool own, const char *name, FILE *out);

#endif
