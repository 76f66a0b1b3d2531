/* notify_rt: the bare seccomp user-notification round trip, the floor under
 * every supervised call.
 *
 *     notify_rt [N]      (N = 20000 calls per mode)
 *
 * For each mode (plain, then SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP when the
 * kernel has it) a child installs NO_NEW_PRIVS and a filter that sends
 * getppid to USER_NOTIF (everything else allowed), with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER, and passes the listener to the parent over
 * a socketpair (SCM_RIGHTS).  The parent answers every notification at once
 * (NOTIF_RECV, then NOTIF_SEND with val = 0), blocking in RECV, no poll; the
 * child times N getppid calls in 5 batches.  Prints, per mode:
 *
 *     notify_rt <median ns> ns/call            (plain wake-up)
 *     notify_rt_sync <median ns> ns/call       (SYNC_WAKE_UP; "n/a" if absent)
 *
 * Runs natively only: a sandbox refuses a seccomp filter with a listener.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define BATCHES 5
#define STOP_MARK 0x6d6f6174UL /* getppid(STOP_MARK): the child is done */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int send_fd(int sock, int fd)
{
    char byte = 'f';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
    if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return fd;
}

static void child(int sock, long n)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        perror("notify_rt: PR_SET_NO_NEW_PRIVS");
        _exit(1);
    }
    int lfd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                      SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (lfd < 0) {
        perror("notify_rt: seccomp(NEW_LISTENER)");
        _exit(1);
    }
    if (send_fd(sock, lfd) != 0)
        _exit(1);
    close(lfd);
    char go;
    if (read(sock, &go, 1) != 1)
        _exit(1);
    for (int i = 0; i < 200; i++) /* warm up */
        syscall(SYS_getppid);
    double per[BATCHES];
    long per_batch = n / BATCHES > 0 ? n / BATCHES : 1;
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now_ns();
        for (long i = 0; i < per_batch; i++)
            syscall(SYS_getppid);
        per[b] = (now_ns() - t0) / per_batch;
    }
    if (write(sock, per, sizeof(per)) != (ssize_t)sizeof(per))
        _exit(1);
    syscall(SYS_getppid, STOP_MARK);
    _exit(0);
}

/* One mode: returns the median ns per round trip, -1 if the mode is not
 * available, -2 on failure. */
static double measure(long n, int sync_wake)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        perror("notify_rt: socketpair");
        return -2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("notify_rt: fork");
        return -2;
    }
    if (pid == 0) {
        close(sv[0]);
        child(sv[1], n);
    }
    close(sv[1]);
    double result = -2;
    int lfd = recv_fd(sv[0]);
    if (lfd < 0) {
        fprintf(stderr, "notify_rt: no listener from the child\n");
        goto out;
    }
    if (sync_wake &&
        ioctl(lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) != 0) {
        result = -1; /* kernel < 6.6 */
        goto out;
    }
    if (write(sv[0], "g", 1) != 1)
        goto out;
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    for (;;) {
        memset(&req, 0, sizeof(req));
        if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
            if (errno == EINTR)
                continue;
            perror("notify_rt: NOTIF_RECV");
            goto out;
        }
        memset(&resp, 0, sizeof(resp));
        resp.id = req.id;
        resp.val = 0;
        resp.error = 0;
        resp.flags = 0;
        if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0 && errno != ENOENT) {
            perror("notify_rt: NOTIF_SEND");
            goto out;
        }
        if (req.data.args[0] == STOP_MARK)
            break;
    }
    double per[BATCHES];
    size_t got = 0;
    while (got < sizeof(per)) {
        ssize_t r = read(sv[0], (char *)per + got, sizeof(per) - got);
        if (r <= 0)
            goto out;
        got += r;
    }
    qsort(per, BATCHES, sizeof(double), cmp_double);
    result = per[BATCHES / 2];
out:
    if (lfd >= 0)
        close(lfd);
    close(sv[0]);
    if (result < 0)
        kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    if (result >= 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        result = -2;
    return result;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    if (n < BATCHES)
        n = BATCHES;
    int rc = 0;
    double plain = measure(n, 0);
    if (plain >= 0)
        printf("notify_rt %.1f ns/call\n", plain);
    else {
        printf("notify_rt n/a ns/call\n");
        rc = 1;
    }
    double sync = measure(n, 1);
    if (sync >= 0)
        printf("notify_rt_sync %.1f ns/call\n", sync);
    else
        printf("notify_rt_sync n/a ns/call\n");
    if (sync == -2)
        rc = 1;
    return rc;
}
