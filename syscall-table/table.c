/* The x86_64 syscall table, one line per syscall (see table.h).
 *
 * Columns: name, argument kinds, class, disposition.  The disposition is
 * written with one of the five macros below, so each line says in one word
 * where the call goes and, for the supervised ones, who answers it:
 *
 *   KERNEL               allowed in the BPF filter
 *   KERNEL_IF(cond, h)   allowed when the register condition holds, else h
 *   SUPERVISE(h)         user notification, the handler performs the call
 *   TRACE(h)             SECCOMP_RET_TRACE: h decides at the ptrace stop
 *   DENY(errno)          user notification, audited and refused
 *
 * Every number <asm/unistd_64.h> (6.1) defines has a line; tests/unit/
 * test_table.c checks that against the header.  Numbers the 6.1 headers
 * lack but newer kernels have are written as literals at the end.  A number
 * without a line reaches the supervisor (the filter's default action) and
 * gets ENOSYS and an audit record. */
#include <fcntl.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <asm/unistd_64.h>
#include <sys/ioctl.h>
#include <asm/termbits.h> /* struct termios2, for TCGETS2 and friends */
#include <linux/fs.h>

#include "syscall-table/handlers.h"
#include "syscall-table/table.h"

/* The only macro level: each expands to designated initializers, so a line
 * names only the columns it uses and the rest stay zero. */
#ifndef F_CREATED_QUERY /* Linux 6.12: was the fd's file made by its open? */
#define F_CREATED_QUERY (1024 + 4)
#endif

#define KERNEL .disp = SC_KERNEL
#define KERNEL_IF(c, h) .disp = SC_KERNEL_IF, .cond = (c), .handler = (h)
#define SUPERVISE(h) .disp = SC_SUPERVISE, .handler = (h)
#define TRACE(h) .disp = SC_TRACE, .handler = (h)
#define DENY(e) .disp = SC_DENY, .err = (e)

/* One line per syscall is the point. */
/* clang-format off */
const struct sc_entry sc_table[SC_NR_MAX] = {
	[__NR_read] = { "read", { A_FD, A_BUF, A_SIZE }, SC_FILE, KERNEL },
	[__NR_write] = { "write", { A_FD, A_BUF, A_SIZE }, SC_FILE, KERNEL },
	[__NR_open] = { "open", { A_PATH, A_OFLAGS, A_MODE }, SC_FILE, SUPERVISE(sys_open) },
	[__NR_close] = { "close", { A_FD }, SC_FILE, KERNEL },
	[__NR_stat] = { "stat", { A_PATH, A_PTR }, SC_FILE, SUPERVISE(sys_stat) },
	[__NR_fstat] = { "fstat", { A_FD, A_PTR }, SC_FILE, SUPERVISE(sys_fstat) },
	[__NR_lstat] = { "lstat", { A_PATH, A_PTR }, SC_FILE, SUPERVISE(sys_lstat) },
	[__NR_poll] = { "poll", { A_PTR, A_UINT, A_INT }, SC_FILE, KERNEL },
	[__NR_lseek] = { "lseek", { A_FD, A_OFF, A_INT }, SC_FILE, KERNEL },
	[__NR_mmap] = { "mmap", { A_PTR, A_SIZE, A_PROT, A_MAPFLAGS, A_FD, A_OFF }, SC_MEMORY, KERNEL },
	[__NR_mprotect] = { "mprotect", { A_PTR, A_SIZE, A_PROT }, SC_MEMORY, KERNEL },
	[__NR_munmap] = { "munmap", { A_PTR, A_SIZE }, SC_MEMORY, KERNEL },
	[__NR_brk] = { "brk", { A_PTR }, SC_MEMORY, KERNEL },
	[__NR_rt_sigaction] = { "rt_sigaction", { A_SIG, A_PTR, A_PTR, A_SIZE }, SC_SIGNAL, KERNEL },
	[__NR_rt_sigprocmask] = { "rt_sigprocmask", { A_INT, A_PTR, A_PTR, A_SIZE }, SC_SIGNAL, KERNEL },
	[__NR_rt_sigreturn] = { "rt_sigreturn", { A_NONE }, SC_SIGNAL, KERNEL },
	[__NR_ioctl] = { "ioctl", { A_FD, A_IOCTL, A_HEX }, SC_FILE, KERNEL_IF(COND_IOCTL_ALLOWED, sys_ioctl) },
	[__NR_pread64] = { "pread64", { A_FD, A_BUF, A_SIZE, A_OFF }, SC_FILE, KERNEL },
	[__NR_pwrite64] = { "pwrite64", { A_FD, A_BUF, A_SIZE, A_OFF }, SC_FILE, KERNEL },
	[__NR_readv] = { "readv", { A_FD, A_PTR, A_INT }, SC_FILE, KERNEL },
	[__NR_writev] = { "writev", { A_FD, A_PTR, A_INT }, SC_FILE, KERNEL },
	[__NR_access] = { "access", { A_PATH, A_INT }, SC_FILE, SUPERVISE(sys_access) },
	[__NR_pipe] = { "pipe", { A_PTR }, SC_IPC, KERNEL },
	[__NR_select] = { "select", { A_INT, A_PTR, A_PTR, A_PTR, A_PTR }, SC_FILE, KERNEL },
	[__NR_sched_yield] = { "sched_yield", { A_NONE }, SC_PROCESS, KERNEL },
	[__NR_mremap] = { "mremap", { A_PTR, A_SIZE, A_SIZE, A_HEX, A_PTR }, SC_MEMORY, KERNEL },
	[__NR_msync] = { "msync", { A_PTR, A_SIZE, A_HEX }, SC_MEMORY, KERNEL },
	[__NR_mincore] = { "mincore", { A_PTR, A_SIZE, A_PTR }, SC_MEMORY, KERNEL },
	[__NR_madvise] = { "madvise", { A_PTR, A_SIZE, A_INT }, SC_MEMORY, KERNEL },
	/* SysV IPC: the IPC namespace is the host's, so any key would reach
	 * host objects. */
	[__NR_shmget] = { "shmget", { A_HEX, A_SIZE, A_HEX }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_shmat] = { "shmat", { A_INT, A_PTR, A_HEX }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_shmctl] = { "shmctl", { A_INT, A_INT, A_PTR }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_dup] = { "dup", { A_FD }, SC_FILE, KERNEL },
	[__NR_dup2] = { "dup2", { A_FD, A_FD }, SC_FILE, KERNEL },
	[__NR_pause] = { "pause", { A_NONE }, SC_SIGNAL, KERNEL },
	[__NR_nanosleep] = { "nanosleep", { A_PTR, A_PTR }, SC_TIME, KERNEL },
	[__NR_getitimer] = { "getitimer", { A_INT, A_PTR }, SC_TIME, KERNEL },
	[__NR_alarm] = { "alarm", { A_UINT }, SC_TIME, KERNEL },
	[__NR_setitimer] = { "setitimer", { A_INT, A_PTR, A_PTR }, SC_TIME, KERNEL },
	[__NR_getpid] = { "getpid", { A_NONE }, SC_PROCESS, KERNEL },
	[__NR_sendfile] = { "sendfile", { A_FD, A_FD, A_PTR, A_SIZE }, SC_FILE, KERNEL },
	[__NR_socket] = { "socket", { A_FAMILY, A_SOCKTYPE, A_INT }, SC_NET, KERNEL_IF(COND_SOCKET_PLAIN, sys_socket) },
	[__NR_connect] = { "connect", { A_FD, A_SOCKADDR, A_UINT }, SC_NET, SUPERVISE(sys_connect) },
	[__NR_accept] = { "accept", { A_FD, A_PTR, A_PTR }, SC_NET, KERNEL },
	[__NR_sendto] = { "sendto", { A_FD, A_BUF, A_SIZE, A_HEX, A_SOCKADDR, A_UINT }, SC_NET, KERNEL_IF(COND_NO_ADDR, sys_sendto) },
	[__NR_recvfrom] = { "recvfrom", { A_FD, A_BUF, A_SIZE, A_HEX, A_PTR, A_PTR }, SC_NET, KERNEL },
	[__NR_sendmsg] = { "sendmsg", { A_FD, A_MSGHDR, A_HEX }, SC_NET, SUPERVISE(sys_sendmsg) },
	[__NR_recvmsg] = { "recvmsg", { A_FD, A_PTR, A_HEX }, SC_NET, KERNEL },
	[__NR_shutdown] = { "shutdown", { A_FD, A_INT }, SC_NET, KERNEL },
	[__NR_bind] = { "bind", { A_FD, A_SOCKADDR, A_UINT }, SC_NET, SUPERVISE(sys_bind) },
	/* Listening on a socket of the host world would open a host port. */
	[__NR_listen] = { "listen", { A_FD, A_INT }, SC_NET, SUPERVISE(sys_listen) },
	[__NR_getsockname] = { "getsockname", { A_FD, A_PTR, A_PTR }, SC_NET, SUPERVISE(sys_sockname) },
	[__NR_getpeername] = { "getpeername", { A_FD, A_PTR, A_PTR }, SC_NET, SUPERVISE(sys_sockname) },
	[__NR_socketpair] = { "socketpair", { A_FAMILY, A_SOCKTYPE, A_INT, A_PTR }, SC_NET, KERNEL_IF(COND_AF_UNIX, sys_socketpair) },
	[__NR_setsockopt] = { "setsockopt", { A_FD, A_INT, A_INT, A_PTR, A_UINT }, SC_NET, KERNEL_IF(COND_SOCKOPT_ALLOWED, sys_setsockopt) },
	[__NR_getsockopt] = { "getsockopt", { A_FD, A_INT, A_INT, A_PTR, A_PTR }, SC_NET, KERNEL },
	[__NR_clone] = { "clone", { A_CLONE, A_PTR, A_PTR, A_PTR, A_HEX }, SC_PROCESS, KERNEL_IF(COND_NO_NS_FLAGS, sys_clone) },
	[__NR_fork] = { "fork", { A_NONE }, SC_PROCESS, KERNEL },
	[__NR_vfork] = { "vfork", { A_NONE }, SC_PROCESS, KERNEL },
	[__NR_execve] = { "execve", { A_PATH, A_ARGV, A_ARGV }, SC_PROCESS, TRACE(sys_execve) },
	[__NR_exit] = { "exit", { A_INT }, SC_PROCESS, KERNEL },
	[__NR_wait4] = { "wait4", { A_PID, A_PTR, A_HEX, A_PTR }, SC_PROCESS, KERNEL },
	[__NR_kill] = { "kill", { A_PID, A_SIG }, SC_SIGNAL, SUPERVISE(sys_kill) },
	[__NR_uname] = { "uname", { A_PTR }, SC_SYSTEM, SUPERVISE(sys_uname) }, /* nodename: the sandbox's */
	[__NR_semget] = { "semget", { A_HEX, A_INT, A_HEX }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_semop] = { "semop", { A_INT, A_PTR, A_SIZE }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_semctl] = { "semctl", { A_INT, A_INT, A_INT, A_HEX }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_shmdt] = { "shmdt", { A_PTR }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_msgget] = { "msgget", { A_HEX, A_HEX }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_msgsnd] = { "msgsnd", { A_INT, A_PTR, A_SIZE, A_HEX }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_msgrcv] = { "msgrcv", { A_INT, A_PTR, A_SIZE, A_INT, A_HEX }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_msgctl] = { "msgctl", { A_INT, A_INT, A_PTR }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_fcntl] = { "fcntl", { A_FD, A_INT, A_HEX }, SC_FILE, KERNEL_IF(COND_FCNTL_ALLOWED, sys_fcntl) },
	[__NR_flock] = { "flock", { A_FD, A_INT }, SC_FILE, SUPERVISE(sys_flock) },
	[__NR_fsync] = { "fsync", { A_FD }, SC_FILE, KERNEL },
	[__NR_fdatasync] = { "fdatasync", { A_FD }, SC_FILE, KERNEL },
	[__NR_truncate] = { "truncate", { A_PATH, A_OFF }, SC_FILE, SUPERVISE(sys_truncate) },
	[__NR_ftruncate] = { "ftruncate", { A_FD, A_OFF }, SC_FILE, KERNEL },
	[__NR_getdents] = { "getdents", { A_FD, A_PTR, A_UINT }, SC_FILE, KERNEL },
	[__NR_getcwd] = { "getcwd", { A_BUF, A_SIZE }, SC_FILE, SUPERVISE(sys_getcwd) },
	[__NR_chdir] = { "chdir", { A_PATH }, SC_FILE, SUPERVISE(sys_chdir) },
	[__NR_fchdir] = { "fchdir", { A_FD }, SC_FILE, SUPERVISE(sys_fchdir) },
	[__NR_rename] = { "rename", { A_PATH, A_PATH }, SC_FILE, SUPERVISE(sys_rename) },
	[__NR_mkdir] = { "mkdir", { A_PATH, A_MODE }, SC_FILE, SUPERVISE(sys_mkdir) },
	[__NR_rmdir] = { "rmdir", { A_PATH }, SC_FILE, SUPERVISE(sys_rmdir) },
	[__NR_creat] = { "creat", { A_PATH, A_MODE }, SC_FILE, SUPERVISE(sys_creat) },
	[__NR_link] = { "link", { A_PATH, A_PATH }, SC_FILE, SUPERVISE(sys_link) },
	[__NR_unlink] = { "unlink", { A_PATH }, SC_FILE, SUPERVISE(sys_unlink) },
	[__NR_symlink] = { "symlink", { A_PATH, A_PATH }, SC_FILE, SUPERVISE(sys_symlink) },
	[__NR_readlink] = { "readlink", { A_PATH, A_BUF, A_SIZE }, SC_FILE, SUPERVISE(sys_readlink) },
	[__NR_chmod] = { "chmod", { A_PATH, A_MODE }, SC_FILE, SUPERVISE(sys_chmod) },
	[__NR_fchmod] = { "fchmod", { A_FD, A_MODE }, SC_FILE, SUPERVISE(sys_fchmod) },
	[__NR_chown] = { "chown", { A_PATH, A_UID, A_UID }, SC_FILE, SUPERVISE(sys_chown) },
	[__NR_fchown] = { "fchown", { A_FD, A_UID, A_UID }, SC_FILE, SUPERVISE(sys_fchown) },
	[__NR_lchown] = { "lchown", { A_PATH, A_UID, A_UID }, SC_FILE, SUPERVISE(sys_lchown) },
	[__NR_umask] = { "umask", { A_MODE }, SC_FILE, SUPERVISE(sys_umask) },
	[__NR_gettimeofday] = { "gettimeofday", { A_PTR, A_PTR }, SC_TIME, KERNEL },
	[__NR_getrlimit] = { "getrlimit", { A_INT, A_PTR }, SC_PROCESS, KERNEL },
	[__NR_getrusage] = { "getrusage", { A_INT, A_PTR }, SC_PROCESS, KERNEL },
	[__NR_sysinfo] = { "sysinfo", { A_PTR }, SC_SYSTEM, SUPERVISE(sys_sysinfo) }, /* uptime, procs: the sandbox's */
	[__NR_times] = { "times", { A_PTR }, SC_TIME, KERNEL },
	[__NR_ptrace] = { "ptrace", { A_INT, A_PID, A_PTR, A_PTR }, SC_PROCESS, DENY(EPERM) },
	[__NR_getuid] = { "getuid", { A_NONE }, SC_IDENTITY, KERNEL },
	[__NR_syslog] = { "syslog", { A_INT, A_BUF, A_INT }, SC_SYSTEM, DENY(EPERM) },
	[__NR_getgid] = { "getgid", { A_NONE }, SC_IDENTITY, KERNEL },
	[__NR_setuid] = { "setuid", { A_UID }, SC_IDENTITY, SUPERVISE(sys_setid) },
	[__NR_setgid] = { "setgid", { A_UID }, SC_IDENTITY, SUPERVISE(sys_setid) },
	[__NR_geteuid] = { "geteuid", { A_NONE }, SC_IDENTITY, KERNEL },
	[__NR_getegid] = { "getegid", { A_NONE }, SC_IDENTITY, KERNEL },
	[__NR_setpgid] = { "setpgid", { A_PID, A_PID }, SC_PROCESS, KERNEL },
	[__NR_getppid] = { "getppid", { A_NONE }, SC_PROCESS, KERNEL },
	[__NR_getpgrp] = { "getpgrp", { A_NONE }, SC_PROCESS, KERNEL },
	[__NR_setsid] = { "setsid", { A_NONE }, SC_PROCESS, KERNEL },
	[__NR_setreuid] = { "setreuid", { A_UID, A_UID }, SC_IDENTITY, SUPERVISE(sys_setid) },
	[__NR_setregid] = { "setregid", { A_UID, A_UID }, SC_IDENTITY, SUPERVISE(sys_setid) },
	[__NR_getgroups] = { "getgroups", { A_INT, A_PTR }, SC_IDENTITY, KERNEL },
	[__NR_setgroups] = { "setgroups", { A_INT, A_PTR }, SC_IDENTITY, SUPERVISE(sys_setid) },
	[__NR_setresuid] = { "setresuid", { A_UID, A_UID, A_UID }, SC_IDENTITY, SUPERVISE(sys_setid) },
	[__NR_getresuid] = { "getresuid", { A_PTR, A_PTR, A_PTR }, SC_IDENTITY, KERNEL },
	[__NR_setresgid] = { "setresgid", { A_UID, A_UID, A_UID }, SC_IDENTITY, SUPERVISE(sys_setid) },
	[__NR_getresgid] = { "getresgid", { A_PTR, A_PTR, A_PTR }, SC_IDENTITY, KERNEL },
	[__NR_getpgid] = { "getpgid", { A_PID }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_setfsuid] = { "setfsuid", { A_UID }, SC_IDENTITY, SUPERVISE(sys_setid) },
	[__NR_setfsgid] = { "setfsgid", { A_UID }, SC_IDENTITY, SUPERVISE(sys_setid) },
	[__NR_getsid] = { "getsid", { A_PID }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_capget] = { "capget", { A_PTR, A_PTR }, SC_IDENTITY, SUPERVISE(sys_capget) }, /* the pid is in memory */
	[__NR_capset] = { "capset", { A_PTR, A_PTR }, SC_IDENTITY, KERNEL },
	[__NR_rt_sigpending] = { "rt_sigpending", { A_PTR, A_SIZE }, SC_SIGNAL, KERNEL },
	[__NR_rt_sigtimedwait] = { "rt_sigtimedwait", { A_PTR, A_PTR, A_PTR, A_SIZE }, SC_SIGNAL, KERNEL },
	[__NR_rt_sigqueueinfo] = { "rt_sigqueueinfo", { A_PID, A_SIG, A_PTR }, SC_SIGNAL, SUPERVISE(sys_rt_sigqueueinfo) },
	[__NR_rt_sigsuspend] = { "rt_sigsuspend", { A_PTR, A_SIZE }, SC_SIGNAL, KERNEL },
	[__NR_sigaltstack] = { "sigaltstack", { A_PTR, A_PTR }, SC_SIGNAL, KERNEL },
	[__NR_utime] = { "utime", { A_PATH, A_PTR }, SC_FILE, SUPERVISE(sys_utime) },
	[__NR_mknod] = { "mknod", { A_PATH, A_MODE, A_HEX }, SC_FILE, SUPERVISE(sys_mknod) },
	[__NR_uselib] = { "uselib", { A_PATH }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_personality] = { "personality", { A_HEX }, SC_PROCESS, KERNEL },
	[__NR_ustat] = { "ustat", { A_HEX, A_PTR }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_statfs] = { "statfs", { A_PATH, A_PTR }, SC_FILE, SUPERVISE(sys_statfs) },
	[__NR_fstatfs] = { "fstatfs", { A_FD, A_PTR }, SC_FILE, SUPERVISE(sys_fstatfs) },
	[__NR_sysfs] = { "sysfs", { A_INT, A_HEX, A_HEX }, SC_SYSTEM, DENY(ENOSYS) }, /* the host's fs types; obsolete */
	[__NR_getpriority] = { "getpriority", { A_INT, A_INT }, SC_PROCESS, SUPERVISE(sys_priority) },
	[__NR_setpriority] = { "setpriority", { A_INT, A_INT, A_INT }, SC_PROCESS, SUPERVISE(sys_priority) },
	[__NR_sched_setparam] = { "sched_setparam", { A_PID, A_PTR }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_sched_getparam] = { "sched_getparam", { A_PID, A_PTR }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_sched_setscheduler] = { "sched_setscheduler", { A_PID, A_INT, A_PTR }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_sched_getscheduler] = { "sched_getscheduler", { A_PID }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_sched_get_priority_max] = { "sched_get_priority_max", { A_INT }, SC_PROCESS, KERNEL },
	[__NR_sched_get_priority_min] = { "sched_get_priority_min", { A_INT }, SC_PROCESS, KERNEL },
	[__NR_sched_rr_get_interval] = { "sched_rr_get_interval", { A_PID, A_PTR }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_mlock] = { "mlock", { A_PTR, A_SIZE }, SC_MEMORY, KERNEL },
	[__NR_munlock] = { "munlock", { A_PTR, A_SIZE }, SC_MEMORY, KERNEL },
	[__NR_mlockall] = { "mlockall", { A_HEX }, SC_MEMORY, KERNEL },
	[__NR_munlockall] = { "munlockall", { A_NONE }, SC_MEMORY, KERNEL },
	[__NR_vhangup] = { "vhangup", { A_NONE }, SC_SYSTEM, DENY(EPERM) },
	[__NR_modify_ldt] = { "modify_ldt", { A_INT, A_PTR, A_SIZE }, SC_MEMORY, DENY(ENOSYS) },
	[__NR_pivot_root] = { "pivot_root", { A_PATH, A_PATH }, SC_SYSTEM, DENY(EPERM) },
	[__NR__sysctl] = { "_sysctl", { A_PTR }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_prctl] = { "prctl", { A_INT, A_HEX, A_HEX, A_HEX, A_HEX }, SC_PROCESS, KERNEL },
	[__NR_arch_prctl] = { "arch_prctl", { A_HEX, A_HEX }, SC_PROCESS, KERNEL },
	[__NR_adjtimex] = { "adjtimex", { A_PTR }, SC_TIME, DENY(EPERM) },
	[__NR_setrlimit] = { "setrlimit", { A_INT, A_PTR }, SC_PROCESS, KERNEL },
	[__NR_chroot] = { "chroot", { A_PATH }, SC_FILE, SUPERVISE(sys_chroot) },
	[__NR_sync] = { "sync", { A_NONE }, SC_FILE, KERNEL },
	[__NR_acct] = { "acct", { A_PATH }, SC_SYSTEM, DENY(EPERM) },
	[__NR_settimeofday] = { "settimeofday", { A_PTR, A_PTR }, SC_TIME, DENY(EPERM) },
	[__NR_mount] = { "mount", { A_PATH, A_PATH, A_STR, A_HEX, A_PTR }, SC_FILE, SUPERVISE(sys_mount) },
	[__NR_umount2] = { "umount2", { A_PATH, A_HEX }, SC_FILE, SUPERVISE(sys_umount2) },
	[__NR_swapon] = { "swapon", { A_PATH, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	[__NR_swapoff] = { "swapoff", { A_PATH }, SC_SYSTEM, DENY(EPERM) },
	[__NR_reboot] = { "reboot", { A_HEX, A_HEX, A_HEX, A_PTR }, SC_SYSTEM, DENY(EPERM) },
	[__NR_sethostname] = { "sethostname", { A_BUF, A_SIZE }, SC_SYSTEM, DENY(EPERM) },
	[__NR_setdomainname] = { "setdomainname", { A_BUF, A_SIZE }, SC_SYSTEM, DENY(EPERM) },
	[__NR_iopl] = { "iopl", { A_INT }, SC_SYSTEM, DENY(EPERM) },
	[__NR_ioperm] = { "ioperm", { A_HEX, A_HEX, A_INT }, SC_SYSTEM, DENY(EPERM) },
	[__NR_create_module] = { "create_module", { A_STR, A_SIZE }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_init_module] = { "init_module", { A_PTR, A_SIZE, A_STR }, SC_SYSTEM, DENY(EPERM) },
	[__NR_delete_module] = { "delete_module", { A_STR, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	[__NR_get_kernel_syms] = { "get_kernel_syms", { A_PTR }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_query_module] = { "query_module", { A_STR, A_INT, A_PTR, A_SIZE, A_PTR }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_quotactl] = { "quotactl", { A_HEX, A_PATH, A_INT, A_PTR }, SC_SYSTEM, DENY(EPERM) },
	/* Never implemented on x86_64, or long removed: the kernel says ENOSYS. */
	[__NR_nfsservctl] = { "nfsservctl", { A_NONE }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_getpmsg] = { "getpmsg", { A_NONE }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_putpmsg] = { "putpmsg", { A_NONE }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_afs_syscall] = { "afs_syscall", { A_NONE }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_tuxcall] = { "tuxcall", { A_NONE }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_security] = { "security", { A_NONE }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_gettid] = { "gettid", { A_NONE }, SC_PROCESS, KERNEL },
	[__NR_readahead] = { "readahead", { A_FD, A_OFF, A_SIZE }, SC_FILE, KERNEL },
	[__NR_setxattr] = { "setxattr", { A_PATH, A_STR, A_BUF, A_SIZE, A_HEX }, SC_FILE, SUPERVISE(sys_xattr) },
	[__NR_lsetxattr] = { "lsetxattr", { A_PATH, A_STR, A_BUF, A_SIZE, A_HEX }, SC_FILE, SUPERVISE(sys_xattr) },
	[__NR_fsetxattr] = { "fsetxattr", { A_FD, A_STR, A_BUF, A_SIZE, A_HEX }, SC_FILE, SUPERVISE(sys_fsetxattr) },
	[__NR_getxattr] = { "getxattr", { A_PATH, A_STR, A_BUF, A_SIZE }, SC_FILE, SUPERVISE(sys_xattr) },
	[__NR_lgetxattr] = { "lgetxattr", { A_PATH, A_STR, A_BUF, A_SIZE }, SC_FILE, SUPERVISE(sys_xattr) },
	[__NR_fgetxattr] = { "fgetxattr", { A_FD, A_STR, A_BUF, A_SIZE }, SC_FILE, KERNEL },
	[__NR_listxattr] = { "listxattr", { A_PATH, A_BUF, A_SIZE }, SC_FILE, SUPERVISE(sys_xattr) },
	[__NR_llistxattr] = { "llistxattr", { A_PATH, A_BUF, A_SIZE }, SC_FILE, SUPERVISE(sys_xattr) },
	[__NR_flistxattr] = { "flistxattr", { A_FD, A_BUF, A_SIZE }, SC_FILE, KERNEL },
	[__NR_removexattr] = { "removexattr", { A_PATH, A_STR }, SC_FILE, SUPERVISE(sys_xattr) },
	[__NR_lremovexattr] = { "lremovexattr", { A_PATH, A_STR }, SC_FILE, SUPERVISE(sys_xattr) },
	[__NR_fremovexattr] = { "fremovexattr", { A_FD, A_STR }, SC_FILE, SUPERVISE(sys_fremovexattr) },
	[__NR_tkill] = { "tkill", { A_PID, A_SIG }, SC_SIGNAL, SUPERVISE(sys_tkill) },
	[__NR_time] = { "time", { A_PTR }, SC_TIME, KERNEL },
	[__NR_futex] = { "futex", { A_PTR, A_INT, A_UINT, A_PTR, A_PTR, A_UINT }, SC_IPC, KERNEL },
	[__NR_sched_setaffinity] = { "sched_setaffinity", { A_PID, A_SIZE, A_PTR }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_sched_getaffinity] = { "sched_getaffinity", { A_PID, A_SIZE, A_PTR }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_set_thread_area] = { "set_thread_area", { A_PTR }, SC_PROCESS, KERNEL },
	[__NR_io_setup] = { "io_setup", { A_UINT, A_PTR }, SC_FILE, DENY(ENOSYS) }, /* host-wide aio-max-nr */
	[__NR_io_destroy] = { "io_destroy", { A_HEX }, SC_FILE, KERNEL },
	[__NR_io_getevents] = { "io_getevents", { A_HEX, A_INT, A_INT, A_PTR, A_PTR }, SC_FILE, KERNEL },
	[__NR_io_submit] = { "io_submit", { A_HEX, A_INT, A_PTR }, SC_FILE, KERNEL },
	[__NR_io_cancel] = { "io_cancel", { A_HEX, A_PTR, A_PTR }, SC_FILE, KERNEL },
	[__NR_get_thread_area] = { "get_thread_area", { A_PTR }, SC_PROCESS, KERNEL },
	[__NR_lookup_dcookie] = { "lookup_dcookie", { A_HEX, A_BUF, A_SIZE }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_epoll_create] = { "epoll_create", { A_INT }, SC_FILE, KERNEL },
	[__NR_epoll_ctl_old] = { "epoll_ctl_old", { A_NONE }, SC_FILE, DENY(ENOSYS) },
	[__NR_epoll_wait_old] = { "epoll_wait_old", { A_NONE }, SC_FILE, DENY(ENOSYS) },
	[__NR_remap_file_pages] = { "remap_file_pages", { A_PTR, A_SIZE, A_HEX, A_SIZE, A_HEX }, SC_MEMORY, KERNEL },
	[__NR_getdents64] = { "getdents64", { A_FD, A_PTR, A_UINT }, SC_FILE, KERNEL },
	[__NR_set_tid_address] = { "set_tid_address", { A_PTR }, SC_PROCESS, KERNEL },
	[__NR_restart_syscall] = { "restart_syscall", { A_NONE }, SC_SIGNAL, KERNEL },
	[__NR_semtimedop] = { "semtimedop", { A_INT, A_PTR, A_SIZE, A_PTR }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_fadvise64] = { "fadvise64", { A_FD, A_OFF, A_OFF, A_INT }, SC_FILE, KERNEL_IF(COND_FADV_KEEPS, sys_fadvise64) },
	[__NR_timer_create] = { "timer_create", { A_INT, A_PTR, A_PTR }, SC_TIME, KERNEL_IF(COND_CLOCK_OWN, sys_clock) },
	[__NR_timer_settime] = { "timer_settime", { A_INT, A_HEX, A_PTR, A_PTR }, SC_TIME, KERNEL },
	[__NR_timer_gettime] = { "timer_gettime", { A_INT, A_PTR }, SC_TIME, KERNEL },
	[__NR_timer_getoverrun] = { "timer_getoverrun", { A_INT }, SC_TIME, KERNEL },
	[__NR_timer_delete] = { "timer_delete", { A_INT }, SC_TIME, KERNEL },
	[__NR_clock_settime] = { "clock_settime", { A_INT, A_PTR }, SC_TIME, DENY(EPERM) },
	/* A CPU clock names a pid (clockid = ~pid << 3 | type): the caller's
	 * own run in the kernel, another's only inside the sandbox. */
	[__NR_clock_gettime] = { "clock_gettime", { A_INT, A_PTR }, SC_TIME, KERNEL_IF(COND_CLOCK_OWN, sys_clock) },
	[__NR_clock_getres] = { "clock_getres", { A_INT, A_PTR }, SC_TIME, KERNEL_IF(COND_CLOCK_OWN, sys_clock) },
	[__NR_clock_nanosleep] = { "clock_nanosleep", { A_INT, A_HEX, A_PTR, A_PTR }, SC_TIME, KERNEL_IF(COND_CLOCK_OWN, sys_clock) },
	[__NR_exit_group] = { "exit_group", { A_INT }, SC_PROCESS, KERNEL },
	[__NR_epoll_wait] = { "epoll_wait", { A_FD, A_PTR, A_INT, A_INT }, SC_FILE, KERNEL },
	[__NR_epoll_ctl] = { "epoll_ctl", { A_FD, A_INT, A_FD, A_PTR }, SC_FILE, KERNEL },
	[__NR_tgkill] = { "tgkill", { A_PID, A_PID, A_SIG }, SC_SIGNAL, SUPERVISE(sys_tgkill) },
	[__NR_utimes] = { "utimes", { A_PATH, A_PTR }, SC_FILE, SUPERVISE(sys_utimes) },
	[__NR_vserver] = { "vserver", { A_NONE }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_mbind] = { "mbind", { A_PTR, A_SIZE, A_INT, A_PTR, A_UINT, A_HEX }, SC_MEMORY, KERNEL },
	[__NR_set_mempolicy] = { "set_mempolicy", { A_INT, A_PTR, A_UINT }, SC_MEMORY, KERNEL },
	[__NR_get_mempolicy] = { "get_mempolicy", { A_PTR, A_PTR, A_UINT, A_PTR, A_HEX }, SC_MEMORY, KERNEL },
	/* POSIX message queues by name live in the host's mqueue namespace;
	 * queues the sandbox cannot open cannot be used by fd either. */
	[__NR_mq_open] = { "mq_open", { A_STR, A_OFLAGS, A_MODE, A_PTR }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_mq_unlink] = { "mq_unlink", { A_STR }, SC_IPC, KERNEL_IF(COND_OWN_IPC, sys_ipc_shared) },
	[__NR_mq_timedsend] = { "mq_timedsend", { A_FD, A_BUF, A_SIZE, A_UINT, A_PTR }, SC_IPC, KERNEL },
	[__NR_mq_timedreceive] = { "mq_timedreceive", { A_FD, A_BUF, A_SIZE, A_PTR, A_PTR }, SC_IPC, KERNEL },
	[__NR_mq_notify] = { "mq_notify", { A_FD, A_PTR }, SC_IPC, KERNEL },
	[__NR_mq_getsetattr] = { "mq_getsetattr", { A_FD, A_PTR, A_PTR }, SC_IPC, KERNEL },
	[__NR_kexec_load] = { "kexec_load", { A_HEX, A_HEX, A_PTR, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	/* Only the caller's own children can be waited for. */
	[__NR_waitid] = { "waitid", { A_INT, A_PID, A_PTR, A_HEX, A_PTR }, SC_PROCESS, KERNEL },
	[__NR_add_key] = { "add_key", { A_STR, A_STR, A_BUF, A_SIZE, A_INT }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_request_key] = { "request_key", { A_STR, A_STR, A_STR, A_INT }, SC_SYSTEM, DENY(ENOSYS) },
	[__NR_keyctl] = { "keyctl", { A_INT, A_HEX, A_HEX, A_HEX, A_HEX }, SC_SYSTEM, DENY(ENOSYS) },
	/* ioprio_*(which, who, ...): the pid is arg1, as in *priority. */
	[__NR_ioprio_set] = { "ioprio_set", { A_INT, A_INT, A_HEX }, SC_PROCESS, SUPERVISE(sys_priority) },
	[__NR_ioprio_get] = { "ioprio_get", { A_INT, A_INT }, SC_PROCESS, SUPERVISE(sys_priority) },
	[__NR_inotify_init] = { "inotify_init", { A_NONE }, SC_FILE, KERNEL },
	[__NR_inotify_add_watch] = { "inotify_add_watch", { A_FD, A_PATH, A_HEX }, SC_FILE, SUPERVISE(sys_inotify_add_watch) },
	[__NR_inotify_rm_watch] = { "inotify_rm_watch", { A_FD, A_INT }, SC_FILE, KERNEL },
	[__NR_migrate_pages] = { "migrate_pages", { A_PID, A_UINT, A_PTR, A_PTR }, SC_MEMORY, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_openat] = { "openat", { A_DIRFD, A_PATH, A_OFLAGS, A_MODE }, SC_FILE, SUPERVISE(sys_openat) },
	[__NR_mkdirat] = { "mkdirat", { A_DIRFD, A_PATH, A_MODE }, SC_FILE, SUPERVISE(sys_mkdirat) },
	[__NR_mknodat] = { "mknodat", { A_DIRFD, A_PATH, A_MODE, A_HEX }, SC_FILE, SUPERVISE(sys_mknodat) },
	[__NR_fchownat] = { "fchownat", { A_DIRFD, A_PATH, A_UID, A_UID, A_ATFLAGS }, SC_FILE, SUPERVISE(sys_fchownat) },
	[__NR_futimesat] = { "futimesat", { A_DIRFD, A_PATH, A_PTR }, SC_FILE, SUPERVISE(sys_futimesat) },
	[__NR_newfstatat] = { "newfstatat", { A_DIRFD, A_PATH, A_PTR, A_ATFLAGS }, SC_FILE, SUPERVISE(sys_newfstatat) },
	[__NR_unlinkat] = { "unlinkat", { A_DIRFD, A_PATH, A_ATFLAGS }, SC_FILE, SUPERVISE(sys_unlinkat) },
	[__NR_renameat] = { "renameat", { A_DIRFD, A_PATH, A_DIRFD, A_PATH }, SC_FILE, SUPERVISE(sys_renameat) },
	[__NR_linkat] = { "linkat", { A_DIRFD, A_PATH, A_DIRFD, A_PATH, A_ATFLAGS }, SC_FILE, SUPERVISE(sys_linkat) },
	[__NR_symlinkat] = { "symlinkat", { A_PATH, A_DIRFD, A_PATH }, SC_FILE, SUPERVISE(sys_symlinkat) },
	[__NR_readlinkat] = { "readlinkat", { A_DIRFD, A_PATH, A_BUF, A_SIZE }, SC_FILE, SUPERVISE(sys_readlinkat) },
	[__NR_fchmodat] = { "fchmodat", { A_DIRFD, A_PATH, A_MODE }, SC_FILE, SUPERVISE(sys_fchmodat) },
	[__NR_faccessat] = { "faccessat", { A_DIRFD, A_PATH, A_INT }, SC_FILE, SUPERVISE(sys_faccessat) },
	[__NR_pselect6] = { "pselect6", { A_INT, A_PTR, A_PTR, A_PTR, A_PTR, A_PTR }, SC_FILE, KERNEL },
	[__NR_ppoll] = { "ppoll", { A_PTR, A_UINT, A_PTR, A_PTR, A_SIZE }, SC_FILE, KERNEL },
	[__NR_unshare] = { "unshare", { A_CLONE }, SC_PROCESS, DENY(EPERM) },
	[__NR_set_robust_list] = { "set_robust_list", { A_PTR, A_SIZE }, SC_PROCESS, KERNEL },
	[__NR_get_robust_list] = { "get_robust_list", { A_PID, A_PTR, A_PTR }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_splice] = { "splice", { A_FD, A_PTR, A_FD, A_PTR, A_SIZE, A_HEX }, SC_FILE, KERNEL },
	[__NR_tee] = { "tee", { A_FD, A_FD, A_SIZE, A_HEX }, SC_FILE, KERNEL },
	[__NR_sync_file_range] = { "sync_file_range", { A_FD, A_OFF, A_OFF, A_HEX }, SC_FILE, KERNEL },
	[__NR_vmsplice] = { "vmsplice", { A_FD, A_PTR, A_UINT, A_HEX }, SC_FILE, KERNEL },
	[__NR_move_pages] = { "move_pages", { A_PID, A_UINT, A_PTR, A_PTR, A_PTR, A_HEX }, SC_MEMORY, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_utimensat] = { "utimensat", { A_DIRFD, A_PATH, A_PTR, A_ATFLAGS }, SC_FILE, SUPERVISE(sys_utimensat) },
	[__NR_epoll_pwait] = { "epoll_pwait", { A_FD, A_PTR, A_INT, A_INT, A_PTR, A_SIZE }, SC_FILE, KERNEL },
	[__NR_signalfd] = { "signalfd", { A_FD, A_PTR, A_SIZE }, SC_SIGNAL, KERNEL },
	[__NR_timerfd_create] = { "timerfd_create", { A_INT, A_HEX }, SC_TIME, KERNEL },
	[__NR_eventfd] = { "eventfd", { A_UINT }, SC_IPC, KERNEL },
	[__NR_fallocate] = { "fallocate", { A_FD, A_HEX, A_OFF, A_OFF }, SC_FILE, KERNEL },
	[__NR_timerfd_settime] = { "timerfd_settime", { A_FD, A_HEX, A_PTR, A_PTR }, SC_TIME, KERNEL },
	[__NR_timerfd_gettime] = { "timerfd_gettime", { A_FD, A_PTR }, SC_TIME, KERNEL },
	[__NR_accept4] = { "accept4", { A_FD, A_PTR, A_PTR, A_HEX }, SC_NET, KERNEL },
	[__NR_signalfd4] = { "signalfd4", { A_FD, A_PTR, A_SIZE, A_HEX }, SC_SIGNAL, KERNEL },
	[__NR_eventfd2] = { "eventfd2", { A_UINT, A_HEX }, SC_IPC, KERNEL },
	[__NR_epoll_create1] = { "epoll_create1", { A_HEX }, SC_FILE, KERNEL },
	[__NR_dup3] = { "dup3", { A_FD, A_FD, A_HEX }, SC_FILE, KERNEL },
	[__NR_pipe2] = { "pipe2", { A_PTR, A_HEX }, SC_IPC, KERNEL },
	[__NR_inotify_init1] = { "inotify_init1", { A_HEX }, SC_FILE, KERNEL },
	[__NR_preadv] = { "preadv", { A_FD, A_PTR, A_INT, A_OFF, A_OFF }, SC_FILE, KERNEL },
	[__NR_pwritev] = { "pwritev", { A_FD, A_PTR, A_INT, A_OFF, A_OFF }, SC_FILE, KERNEL },
	[__NR_rt_tgsigqueueinfo] = { "rt_tgsigqueueinfo", { A_PID, A_PID, A_SIG, A_PTR }, SC_SIGNAL, SUPERVISE(sys_rt_tgsigqueueinfo) },
	[__NR_perf_event_open] = { "perf_event_open", { A_PTR, A_PID, A_INT, A_FD, A_HEX }, SC_SYSTEM, DENY(EACCES) },
	[__NR_recvmmsg] = { "recvmmsg", { A_FD, A_PTR, A_UINT, A_HEX, A_PTR }, SC_NET, KERNEL },
	[__NR_fanotify_init] = { "fanotify_init", { A_HEX, A_HEX }, SC_FILE, DENY(EPERM) },
	[__NR_fanotify_mark] = { "fanotify_mark", { A_FD, A_HEX, A_HEX, A_DIRFD, A_PATH }, SC_FILE, DENY(EPERM) },
	[__NR_prlimit64] = { "prlimit64", { A_PID, A_INT, A_PTR, A_PTR }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_prlimit64) },
	[__NR_name_to_handle_at] = { "name_to_handle_at", { A_DIRFD, A_PATH, A_PTR, A_PTR, A_ATFLAGS }, SC_FILE, DENY(EOPNOTSUPP) },
	[__NR_open_by_handle_at] = { "open_by_handle_at", { A_FD, A_PTR, A_OFLAGS }, SC_FILE, DENY(EPERM) },
	[__NR_clock_adjtime] = { "clock_adjtime", { A_INT, A_PTR }, SC_TIME, DENY(EPERM) },
	[__NR_syncfs] = { "syncfs", { A_FD }, SC_FILE, KERNEL },
	[__NR_sendmmsg] = { "sendmmsg", { A_FD, A_PTR, A_UINT, A_HEX }, SC_NET, SUPERVISE(sys_sendmmsg) },
	[__NR_setns] = { "setns", { A_FD, A_CLONE }, SC_PROCESS, DENY(EPERM) },
	[__NR_getcpu] = { "getcpu", { A_PTR, A_PTR, A_PTR }, SC_PROCESS, KERNEL },
	[__NR_process_vm_readv] = { "process_vm_readv", { A_PID, A_PTR, A_UINT, A_PTR, A_UINT, A_HEX }, SC_PROCESS, DENY(EPERM) },
	[__NR_process_vm_writev] = { "process_vm_writev", { A_PID, A_PTR, A_UINT, A_PTR, A_UINT, A_HEX }, SC_PROCESS, DENY(EPERM) },
	[__NR_kcmp] = { "kcmp", { A_PID, A_PID, A_INT, A_HEX, A_HEX }, SC_PROCESS, DENY(EPERM) },
	[__NR_finit_module] = { "finit_module", { A_FD, A_STR, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	[__NR_sched_setattr] = { "sched_setattr", { A_PID, A_PTR, A_HEX }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_sched_getattr] = { "sched_getattr", { A_PID, A_PTR, A_UINT, A_HEX }, SC_PROCESS, KERNEL_IF(COND_PID_SELF, sys_pid_arg0) },
	[__NR_renameat2] = { "renameat2", { A_DIRFD, A_PATH, A_DIRFD, A_PATH, A_RENAMEFLAGS }, SC_FILE, SUPERVISE(sys_renameat2) },
	/* A filter with a listener of its own would answer before moat's. */
	[__NR_seccomp] = { "seccomp", { A_UINT, A_HEX, A_PTR }, SC_PROCESS, KERNEL_IF(COND_SECCOMP_NO_LISTENER, sys_seccomp) },
	[__NR_getrandom] = { "getrandom", { A_BUF, A_SIZE, A_HEX }, SC_SYSTEM, KERNEL },
	[__NR_memfd_create] = { "memfd_create", { A_STR, A_HEX }, SC_MEMORY, KERNEL },
	[__NR_kexec_file_load] = { "kexec_file_load", { A_FD, A_FD, A_SIZE, A_STR, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	[__NR_bpf] = { "bpf", { A_INT, A_PTR, A_UINT }, SC_SYSTEM, DENY(EPERM) },
	[__NR_execveat] = { "execveat", { A_DIRFD, A_PATH, A_ARGV, A_ARGV, A_ATFLAGS }, SC_PROCESS, TRACE(sys_execveat) },
	[__NR_userfaultfd] = { "userfaultfd", { A_HEX }, SC_MEMORY, DENY(EPERM) },
	[__NR_membarrier] = { "membarrier", { A_INT, A_HEX, A_INT }, SC_MEMORY, KERNEL },
	[__NR_mlock2] = { "mlock2", { A_PTR, A_SIZE, A_HEX }, SC_MEMORY, KERNEL },
	[__NR_copy_file_range] = { "copy_file_range", { A_FD, A_PTR, A_FD, A_PTR, A_SIZE, A_HEX }, SC_FILE, KERNEL },
	/* RWF_NOWAIT tells whether the host's page cache holds a page. */
	[__NR_preadv2] = { "preadv2", { A_FD, A_PTR, A_INT, A_OFF, A_OFF, A_HEX }, SC_FILE, KERNEL_IF(COND_NO_RWF_NOWAIT, sys_rwf_nowait) },
	[__NR_pwritev2] = { "pwritev2", { A_FD, A_PTR, A_INT, A_OFF, A_OFF, A_HEX }, SC_FILE, KERNEL_IF(COND_NO_RWF_NOWAIT, sys_rwf_nowait) },
	[__NR_pkey_mprotect] = { "pkey_mprotect", { A_PTR, A_SIZE, A_PROT, A_INT }, SC_MEMORY, KERNEL },
	[__NR_pkey_alloc] = { "pkey_alloc", { A_HEX, A_HEX }, SC_MEMORY, KERNEL },
	[__NR_pkey_free] = { "pkey_free", { A_INT }, SC_MEMORY, KERNEL },
	[__NR_statx] = { "statx", { A_DIRFD, A_PATH, A_ATFLAGS, A_HEX, A_PTR }, SC_FILE, SUPERVISE(sys_statx) },
	[__NR_io_pgetevents] = { "io_pgetevents", { A_HEX, A_INT, A_INT, A_PTR, A_PTR, A_PTR }, SC_FILE, KERNEL },
	[__NR_rseq] = { "rseq", { A_PTR, A_UINT, A_HEX, A_HEX }, SC_PROCESS, KERNEL },
	/* A pidfd only comes from pidfd_open (supervised) or CLONE_PIDFD. */
	[__NR_pidfd_send_signal] = { "pidfd_send_signal", { A_FD, A_SIG, A_PTR, A_HEX }, SC_SIGNAL, KERNEL },
	[__NR_io_uring_setup] = { "io_uring_setup", { A_UINT, A_PTR }, SC_SYSTEM, DENY(EPERM) },
	[__NR_io_uring_enter] = { "io_uring_enter", { A_FD, A_UINT, A_UINT, A_HEX, A_PTR, A_SIZE }, SC_SYSTEM, DENY(EPERM) },
	[__NR_io_uring_register] = { "io_uring_register", { A_FD, A_UINT, A_PTR, A_UINT }, SC_SYSTEM, DENY(EPERM) },
	[__NR_open_tree] = { "open_tree", { A_DIRFD, A_PATH, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	[__NR_move_mount] = { "move_mount", { A_DIRFD, A_PATH, A_DIRFD, A_PATH, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	[__NR_fsopen] = { "fsopen", { A_STR, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	[__NR_fsconfig] = { "fsconfig", { A_FD, A_UINT, A_STR, A_PTR, A_INT }, SC_SYSTEM, DENY(EPERM) },
	[__NR_fsmount] = { "fsmount", { A_FD, A_HEX, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	[__NR_fspick] = { "fspick", { A_DIRFD, A_PATH, A_HEX }, SC_SYSTEM, DENY(EPERM) },
	[__NR_pidfd_open] = { "pidfd_open", { A_PID, A_HEX }, SC_PROCESS, SUPERVISE(sys_pidfd_open) },
	/* clone3 keeps its flags in memory, out of the filter's reach;
	 * ENOSYS makes glibc fall back to clone, whose flags are in a register
	 * (sys_clone3: an expected probe, not a denial). */
	[__NR_clone3] = { "clone3", { A_PTR, A_SIZE }, SC_PROCESS, SUPERVISE(sys_clone3) },
	[__NR_close_range] = { "close_range", { A_FD, A_FD, A_HEX }, SC_FILE, KERNEL },
	[__NR_openat2] = { "openat2", { A_DIRFD, A_PATH, A_OPENHOW, A_SIZE }, SC_FILE, SUPERVISE(sys_openat2) },
	[__NR_pidfd_getfd] = { "pidfd_getfd", { A_FD, A_FD, A_HEX }, SC_PROCESS, DENY(EPERM) },
	[__NR_faccessat2] = { "faccessat2", { A_DIRFD, A_PATH, A_INT, A_ATFLAGS }, SC_FILE, SUPERVISE(sys_faccessat2) },
	[__NR_process_madvise] = { "process_madvise", { A_FD, A_PTR, A_SIZE, A_INT, A_HEX }, SC_MEMORY, KERNEL },
	[__NR_epoll_pwait2] = { "epoll_pwait2", { A_FD, A_PTR, A_INT, A_PTR, A_PTR, A_SIZE }, SC_FILE, KERNEL },
	[__NR_mount_setattr] = { "mount_setattr", { A_DIRFD, A_PATH, A_HEX, A_PTR, A_SIZE }, SC_SYSTEM, DENY(EPERM) },
	[__NR_quotactl_fd] = { "quotactl_fd", { A_FD, A_HEX, A_INT, A_PTR }, SC_SYSTEM, DENY(EPERM) },
	[__NR_landlock_create_ruleset] = { "landlock_create_ruleset", { A_PTR, A_SIZE, A_HEX }, SC_PROCESS, KERNEL },
	[__NR_landlock_add_rule] = { "landlock_add_rule", { A_FD, A_INT, A_PTR, A_HEX }, SC_PROCESS, KERNEL },
	[__NR_landlock_restrict_self] = { "landlock_restrict_self", { A_FD, A_HEX }, SC_PROCESS, KERNEL },
	[__NR_memfd_secret] = { "memfd_secret", { A_HEX }, SC_MEMORY, KERNEL },
	[__NR_process_mrelease] = { "process_mrelease", { A_FD, A_HEX }, SC_MEMORY, KERNEL },
	[__NR_futex_waitv] = { "futex_waitv", { A_PTR, A_UINT, A_HEX, A_PTR, A_INT }, SC_IPC, KERNEL },
	[__NR_set_mempolicy_home_node] = { "set_mempolicy_home_node", { A_PTR, A_SIZE, A_HEX, A_HEX }, SC_MEMORY, KERNEL },

	/* Newer than the 6.1 headers; numbers from the kernel's syscall_64.tbl. */
	[451] = { "cachestat", { A_FD, A_PTR, A_PTR, A_HEX }, SC_FILE, DENY(ENOSYS) },                /* 6.5; the host's page cache */
	[452] = { "fchmodat2", { A_DIRFD, A_PATH, A_MODE, A_ATFLAGS }, SC_FILE, SUPERVISE(sys_fchmodat) }, /* 6.6 */
	[453] = { "map_shadow_stack", { A_PTR, A_SIZE, A_HEX }, SC_MEMORY, KERNEL },               /* 6.6 */
	[454] = { "futex_wake", { A_PTR, A_HEX, A_INT, A_HEX }, SC_IPC, KERNEL },                    /* 6.7 */
	[455] = { "futex_wait", { A_PTR, A_HEX, A_HEX, A_HEX, A_PTR, A_INT }, SC_IPC, KERNEL },      /* 6.7 */
	[456] = { "futex_requeue", { A_PTR, A_HEX, A_INT, A_INT }, SC_IPC, KERNEL },                 /* 6.7 */
	[457] = { "statmount", { A_PTR, A_PTR, A_SIZE, A_HEX }, SC_SYSTEM, DENY(ENOSYS) },          /* 6.8 */
	[458] = { "listmount", { A_PTR, A_PTR, A_SIZE, A_HEX }, SC_SYSTEM, DENY(ENOSYS) },          /* 6.8 */
	[459] = { "lsm_get_self_attr", { A_UINT, A_PTR, A_PTR, A_HEX }, SC_SYSTEM, DENY(ENOSYS) }, /* 6.8 */
	[460] = { "lsm_set_self_attr", { A_UINT, A_PTR, A_SIZE, A_HEX }, SC_SYSTEM, DENY(ENOSYS) }, /* 6.8 */
	[461] = { "lsm_list_modules", { A_PTR, A_PTR, A_HEX }, SC_SYSTEM, DENY(ENOSYS) },          /* 6.8 */
	[462] = { "mseal", { A_PTR, A_SIZE, A_HEX }, SC_MEMORY, KERNEL },                           /* 6.10 */
};
/* clang-format on */

/* ioctl requests that only touch the caller's own terminal or file: termios,
 * window size, foreground group (a new session has no controlling tty, so
 * TIOCSPGRP reaches nothing outside), readiness, fd flags, pty unlocking.
 * Left out on purpose: TIOCSTI (injects input into a shared terminal),
 * TIOCLINUX, TIOCSCTTY, TIOCCONS, TIOCSETD, and every network ioctl. */
/* fcntl commands that only touch the fd or its open file.  Not here:
 * F_SETOWN and F_SETOWN_EX, which aim SIGIO/SIGURG at a process (rule 9);
 * the record locks, which reach the inode's lock table, the host's for a
 * host file (sys_lock.c); F_SETLEASE, which makes every other opener of the
 * file wait, moat's loop and the host's programs too; F_NOTIFY (dnotify),
 * which reports others' reads of a host directory (served only on the
 * sandbox's own directories).  All checked by the supervisor. */
/* clang-format off */
const unsigned sc_fcntl_allowed[] = {
	F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL,
	F_GETOWN, F_SETSIG, F_GETSIG, F_GETOWN_EX, F_GETLEASE, F_DUPFD_CLOEXEC,
	F_SETPIPE_SZ, F_GETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS, F_GET_RW_HINT,
	F_SET_RW_HINT, F_GET_FILE_RW_HINT, F_SET_FILE_RW_HINT, F_CREATED_QUERY,
};
/* clang-format on */
const unsigned sc_fcntl_nallowed = sizeof sc_fcntl_allowed / sizeof sc_fcntl_allowed[0];

/* TCP, UDP and netlink options concern the socket alone. */
const int sc_sockopt_levels[] = { 6 /* IPPROTO_TCP */, 17 /* IPPROTO_UDP */,
				  270 /* SOL_NETLINK */ };
const unsigned sc_sockopt_nlevels = sizeof sc_sockopt_levels / sizeof sc_sockopt_levels[0];

/* Options of the socket itself (buffers, timeouts, reuse, keepalive,
 * filters — SO_ATTACH_FILTER's program is read by the kernel from the
 * caller, so it must run there), and of its IP header.  Not here: the
 * interface options and multicast membership, which reach the host's
 * interfaces and network from a socket of the host's namespace. */
/* clang-format off */
const struct sc_sockopt sc_sockopt_allowed[] = {
	{ 1, 2 /* SO_REUSEADDR */ }, { 1, 5 /* SO_DONTROUTE */ }, { 1, 6 /* SO_BROADCAST */ },
	{ 1, 7 /* SO_SNDBUF */ }, { 1, 8 /* SO_RCVBUF */ }, { 1, 9 /* SO_KEEPALIVE */ },
	{ 1, 10 /* SO_OOBINLINE */ }, { 1, 11 /* SO_NO_CHECK */ }, { 1, 12 /* SO_PRIORITY */ },
	{ 1, 13 /* SO_LINGER */ }, { 1, 15 /* SO_REUSEPORT */ }, { 1, 16 /* SO_PASSCRED */ },
	{ 1, 18 /* SO_RCVLOWAT */ }, { 1, 19 /* SO_SNDLOWAT */ }, { 1, 20 /* SO_RCVTIMEO_OLD */ },
	{ 1, 21 /* SO_SNDTIMEO_OLD */ }, { 1, 26 /* SO_ATTACH_FILTER */ }, { 1, 27 /* SO_DETACH_FILTER */ },
	{ 1, 29 /* SO_TIMESTAMP_OLD */ }, { 1, 34 /* SO_PASSSEC */ }, { 1, 35 /* SO_TIMESTAMPNS_OLD */ },
	{ 1, 37 /* SO_TIMESTAMPING_OLD */ }, { 1, 40 /* SO_RXQ_OVFL */ }, { 1, 42 /* SO_PEEK_OFF */ },
	{ 1, 46 /* SO_BUSY_POLL */ }, { 1, 49 /* SO_INCOMING_CPU */ }, { 1, 51 /* SO_ATTACH_REUSEPORT_CBPF */ },
	{ 1, 60 /* SO_ZEROCOPY */ }, { 1, 63 /* SO_TIMESTAMP_NEW */ }, { 1, 64 /* SO_TIMESTAMPNS_NEW */ },
	{ 1, 65 /* SO_TIMESTAMPING_NEW */ }, { 1, 66 /* SO_RCVTIMEO_NEW */ }, { 1, 67 /* SO_SNDTIMEO_NEW */ },
	{ 0, 1 /* IP_TOS */ }, { 0, 2 /* IP_TTL */ }, { 0, 4 /* IP_OPTIONS */ }, { 0, 6 /* IP_RECVOPTS */ },
	{ 0, 7 /* IP_RETOPTS */ }, { 0, 8 /* IP_PKTINFO */ }, { 0, 10 /* IP_MTU_DISCOVER */ },
	{ 0, 11 /* IP_RECVERR */ }, { 0, 12 /* IP_RECVTTL */ }, { 0, 13 /* IP_RECVTOS */ },
	{ 0, 15 /* IP_FREEBIND */ }, { 0, 24 /* IP_BIND_ADDRESS_NO_PORT */ },
	{ 41, 16 /* IPV6_UNICAST_HOPS */ }, { 41, 23 /* IPV6_MTU_DISCOVER */ },
	{ 41, 25 /* IPV6_RECVERR */ }, { 41, 26 /* IPV6_V6ONLY */ }, { 41, 49 /* IPV6_RECVPKTINFO */ },
	{ 41, 66 /* IPV6_RECVTCLASS */ }, { 41, 67 /* IPV6_TCLASS */ },
};
/* clang-format on */
const unsigned sc_sockopt_nallowed = sizeof sc_sockopt_allowed / sizeof sc_sockopt_allowed[0];

const unsigned long sc_ioctl_allowed[] = {
	TCGETS,    TCSETS,     TCSETSW,     TCSETSF,         TCGETA,     TCSETA,
	TCSETAW,   TCSETAF,    TCSBRK,      TCFLSH, /* not TCXONC: it stops output of a terminal
						       moat shares */
	TIOCGPGRP, TIOCSPGRP,  TIOCOUTQ,    TIOCGWINSZ,      TIOCSWINSZ, TIOCGSID,
	TIOCMGET,  FIONREAD,   FIONBIO,     FIOCLEX,         FIONCLEX,   FIOASYNC,
	TIOCGPTN,  TIOCSPTLCK, TIOCGPTPEER, TIOCNOTTY,       TCGETS2,    TCSETS2,
	TCSETSW2,  TCSETSF2,   FIGETBSZ,    FS_IOC_GETFLAGS, FICLONE,    FICLONERANGE,
};
const unsigned sc_ioctl_nallowed = sizeof(sc_ioctl_allowed) / sizeof(sc_ioctl_allowed[0]);

const struct sc_entry *sc_lookup(long nr)
{
	if (nr < 0 || nr >= SC_NR_MAX || !sc_table[nr].name)
		return NULL;
	return &sc_table[nr];
}

const char *sc_name(long nr)
{
	const struct sc_entry *e = sc_lookup(nr);

	return e ? e->name : NULL;
}

int sc_by_name(const char *name)
{
	if (!name)
		return -1;
	for (int nr = 0; nr < SC_NR_MAX; nr++)
		if (sc_table[nr].name && strcmp(sc_table[nr].name, name) == 0)
			return nr;
	return -1;
}

const char *sc_class_name(unsigned cls)
{
	static const char *const names[SC_NCLASS] = {
		[SC_FILE] = "file",     [SC_NET] = "net",           [SC_PROCESS] = "process",
		[SC_MEMORY] = "memory", [SC_SIGNAL] = "signal",     [SC_TIME] = "time",
		[SC_IPC] = "ipc",       [SC_IDENTITY] = "identity", [SC_SYSTEM] = "system",
	};

	return cls < SC_NCLASS ? names[cls] : "unknown";
}

const char *sc_disp_name(unsigned disp)
{
	static const char *const names[] = {
		[SC_KERNEL] = "kernel", [SC_KERNEL_IF] = "kernel_if", [SC_SUPERVISE] = "supervise",
		[SC_TRACE] = "trace",   [SC_DENY] = "deny",
	};

	return disp < sizeof(names) / sizeof(names[0]) ? names[disp] : "unknown";
}
