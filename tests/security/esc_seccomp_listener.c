/* esc_seccomp_listener — install our own seccomp filter with a listener,
 * answer every openat with SECCOMP_USER_NOTIF_FLAG_CONTINUE, then open the
 * secret.
 *
 * Attacks rule 8 (a seccomp filter with a listener is refused).  Of two
 * filters both answering USER_NOTIF, the kernel notifies the one installed
 * last — ours — and our CONTINUE sends openat straight to the kernel, so the
 * supervisor's listener never hears of it.  Under moat the install must fail;
 * if it did not, the open must still not reach the secret.
 *
 * usage: ESC_TOKEN=... esc_seccomp_listener /var/tmp/moat-sec.XXXXXX/secret
 */
#include "esc.h"
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static int listener = -1;
static volatile int notified;

static void *answer(void *unused)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	for (;;) {
		memset(&req, 0, sizeof req);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return NULL;
		}
		__atomic_add_fetch(&notified, 1, __ATOMIC_SEQ_CST);
		memset(&resp, 0, sizeof resp);
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

int main(int argc, char **argv)
{
	const char *secret = esc_secret_arg(argc, argv);

	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		esc_held("prctl(PR_SET_NO_NEW_PRIVS): %s", esc_errname(errno));
		return esc_finish();
	}
	listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (listener < 0) {
		esc_held("seccomp(SET_MODE_FILTER, NEW_LISTENER): %s", esc_errname(errno));
		return esc_finish();
	}
	fprintf(stderr, "# our listener is fd %d\n", listener);

	pthread_t t;
	if (pthread_create(&t, NULL, answer, NULL) != 0)
		esc_usage("pthread_create failed");

	int r = esc_open_at_has_token(AT_FDCWD, secret);
	int seen = __atomic_load_n(&notified, __ATOMIC_SEQ_CST);
	if (r == 1 && seen > 0)
		esc_won("openat CONTINUEd by our own listener (%d notifications) read the token", seen);
	else if (r == 1)
		esc_won("listener installed; openat read the token (without passing our listener)");
	else
		esc_held("listener installed (rule 8 not enforced!) but open %s: %s", secret,
			 r == 0 ? "not the secret" : esc_errname(-r));
	return esc_finish();
}
