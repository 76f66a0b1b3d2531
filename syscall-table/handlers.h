/* Every handler the table names.  Each lives in its module's sys_*.c
 * file; this header is the one place the table learns their names. */
#ifndef MOAT_HANDLERS_H
#define MOAT_HANDLERS_H

#include "core/call.h"

#define H(name) struct verdict name(struct call *c)

/* clang-format off */
/* fs-emulation/sys_open.c */
H(sys_open); H(sys_openat); H(sys_openat2); H(sys_creat);
/* fs-emulation/sys_stat.c */
H(sys_stat); H(sys_lstat); H(sys_newfstatat); H(sys_statx);
H(sys_access); H(sys_faccessat); H(sys_faccessat2);
H(sys_readlink); H(sys_readlinkat); H(sys_statfs); H(sys_fstatfs); H(sys_fstat);
/* fs-emulation/sys_dir.c */
H(sys_getcwd); H(sys_chdir); H(sys_fchdir); H(sys_chroot);
H(sys_mount); H(sys_umount2);
H(sys_mkdir); H(sys_mkdirat); H(sys_rmdir);
H(sys_mknod); H(sys_mknodat);
/* fs-emulation/sys_link.c */
H(sys_unlink); H(sys_unlinkat);
H(sys_rename); H(sys_renameat); H(sys_renameat2);
H(sys_symlink); H(sys_symlinkat); H(sys_link); H(sys_linkat);
/* fs-emulation/sys_attr.c */
H(sys_chmod); H(sys_fchmodat);
H(sys_chown); H(sys_lchown); H(sys_fchownat);
H(sys_truncate); H(sys_utimensat); H(sys_utime); H(sys_utimes);
H(sys_futimesat);
H(sys_xattr);            /* path xattr calls: ENOTSUP for now */
/* fd metadata changes: a read-only mount stays read-only through its fds */
H(sys_fchmod); H(sys_fchown); H(sys_fsetxattr); H(sys_fremovexattr);
H(sys_inotify_add_watch);
/* fs-emulation/sys_lock.c: locks on read-only host files are the sandbox's own */
H(sys_flock);
H(fs_fcntl_lock);        /* fcntl's F_GETLK/F_SETLK(W)/F_OFD_*, from sys_fcntl */
H(sys_fadvise64);        /* POSIX_FADV_DONTNEED: not on the host's page cache */
H(sys_rwf_nowait);       /* preadv2/pwritev2 with RWF_NOWAIT: refused */
/* fs-emulation/sys_exec.c: at the exec's ptrace stop (TRACE), not notified */
H(sys_execve); H(sys_execveat);

/* net-stub/sys_socket.c, sys_connect.c, sys_sendmsg.c */
H(sys_socket); H(sys_socketpair); H(sys_connect); H(sys_bind); H(sys_sockname); H(sys_listen); H(sys_setsockopt);
H(sys_sendto); H(sys_sendmsg); H(sys_sendmmsg);

/* interposer/sys_proc.c: signals, pids, identity */
H(sys_kill); H(sys_tkill); H(sys_tgkill);
H(sys_rt_sigqueueinfo); H(sys_rt_tgsigqueueinfo);
H(sys_pid_arg0);         /* calls whose arg0 is a pid: own or sandbox only */
H(sys_priority);         /* getpriority/setpriority(which, who) */
H(sys_pidfd_open);
H(sys_prlimit64);         /* another process's limits: performed by moat */
H(sys_clone);            /* clone with namespace flags: denied */
H(sys_umask);
H(sys_ioctl);            /* a request outside the allowlist */
H(sys_seccomp);          /* seccomp with a listener: denied */
H(sys_fcntl);            /* F_SETOWN/F_SETOWN_EX: sandbox owners only */
H(sys_capget);           /* capget(hdr->pid): own or sandbox only */
H(sys_clock);            /* a CPU clock of another pid: sandbox only */
H(sys_clone3);           /* ENOSYS: glibc falls back to clone */
H(sys_setid);            /* setuid and the rest: ids read again after */
H(sys_ipc_shared);       /* SysV IPC, mq_open without an IPC namespace of its own */

/* interposer/sys_uname.c: the sandbox's own nodename, uptime, processes */
H(sys_uname); H(sys_sysinfo);
/* clang-format on */

#undef H
#endif
