/* esc_ipc_host — System V IPC and POSIX message queues shared with the host.
 *
 * SysV keys and ids and mqueue names live in an IPC namespace, not in the
 * file system: a sandbox in the host's would find the host's shared memory
 * (a database's buffers), message queues and semaphores by key, read and
 * write them, or remove them.  The runner plants, as the host (`plant`,
 * before the native run):
 *
 *   a shared memory segment of key KEY holding the token,
 *   a message queue of key KEY holding the token as a message,
 *   a POSIX message queue /moat-esc-NAME holding the token;
 *
 * and we look for each.  ESCAPED for each we find (and read the token
 * from).  moat as root gives the sandbox an IPC namespace of its own, where
 * none of them is (ENOENT); without root SysV IPC and mq_open answer ENOSYS,
 * audited.  Natively they are the host's: ESCAPED.
 *
 * usage: esc_ipc_host plant|try KEY
 */
#include "esc.h"
#include <mqueue.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/shm.h>

struct tokmsg {
	long type;
	char text[256];
};

static void mq_name(char *buf, size_t cap, key_t key)
{
	snprintf(buf, cap, "/moat-esc-%x", (unsigned)key);
}

static int plant(key_t key)
{
	const char *t = esc_token();
	int shm = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0666);
	if (shm < 0)
		return perror("shmget"), 1;
	char *p = shmat(shm, NULL, 0);
	if (p == (void *)-1)
		return perror("shmat"), 1;
	snprintf(p, 4096, "%s", t);
	shmdt(p);
	int q = msgget(key, IPC_CREAT | IPC_EXCL | 0666);
	struct tokmsg m = { .type = 1 };
	snprintf(m.text, sizeof m.text, "%s", t);
	if (q < 0 || msgsnd(q, &m, strlen(m.text) + 1, 0) < 0)
		return perror("msgget/msgsnd"), 1;
	char n[64];
	mq_name(n, sizeof n, key);
	struct mq_attr a = { .mq_maxmsg = 4, .mq_msgsize = 256 };
	mqd_t mq = mq_open(n, O_CREAT | O_EXCL | O_WRONLY, 0666, &a);
	if (mq < 0 || mq_send(mq, t, strlen(t), 0) < 0)
		return perror("mq_open/mq_send"), 1;
	printf("planted\n");
	return 0;
}

static void try_shm(key_t key)
{
	int shm = shmget(key, 0, 0);
	if (shm < 0) {
		esc_held("shmget(key %#x): %s", (unsigned)key, esc_errname(errno));
		return;
	}
	char *p = shmat(shm, NULL, SHM_RDONLY);
	if (p == (void *)-1) {
		esc_won("shmget found the host's segment (shmat: %s)", esc_errname(errno));
		return;
	}
	if (esc_is_token(p, strnlen(p, 4096)))
		esc_won("read the host's shared memory segment");
	else
		esc_won("shmget found a segment of the host's key");
	shmdt(p);
}

static void try_msg(key_t key)
{
	int q = msgget(key, 0);
	if (q < 0) {
		esc_held("msgget(key %#x): %s", (unsigned)key, esc_errname(errno));
		return;
	}
	struct tokmsg m;
	ssize_t n = msgrcv(q, &m, sizeof m.text, 0, IPC_NOWAIT | MSG_COPY);
	if (n < 0) /* MSG_COPY needs CONFIG_CHECKPOINT_RESTORE */
		n = msgrcv(q, &m, sizeof m.text, 0, IPC_NOWAIT);
	if (n > 0 && esc_is_token(m.text, strnlen(m.text, (size_t)n)))
		esc_won("read the host's message queue");
	else
		esc_won("msgget found a queue of the host's key");
}

static void try_mq(key_t key)
{
	char n[64];
	mq_name(n, sizeof n, key);
	mqd_t mq = mq_open(n, O_RDONLY | O_NONBLOCK);
	if (mq < 0) {
		esc_held("mq_open(%s): %s", n, esc_errname(errno));
		return;
	}
	char buf[300];
	ssize_t r = mq_receive(mq, buf, sizeof buf, NULL);
	if (r > 0 && esc_is_token(buf, (size_t)r))
		esc_won("read the host's POSIX message queue %s", n);
	else
		esc_won("mq_open found the host's queue %s", n);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		esc_usage("esc_ipc_host plant|try KEY");
	key_t key = (key_t)strtol(argv[2], NULL, 0);
	if (key == IPC_PRIVATE)
		esc_usage("KEY must not be 0");
	if (strcmp(argv[1], "plant") == 0)
		return plant(key);
	try_shm(key);
	try_msg(key);
	try_mq(key);
	return esc_finish();
}
