/* esc_packet — open link-layer and kernel-facing sockets: AF_PACKET
 * (SOCK_RAW and SOCK_DGRAM), the obsolete SOCK_PACKET of AF_INET, and
 * netlink families other than routing (NETLINK_AUDIT, NETLINK_SOCK_DIAG,
 * NETLINK_KOBJECT_UEVENT), AF_VSOCK and AF_BLUETOOTH.
 *
 * Attacks the network stub's deny by default for families (docs/network.md "The
 * network stub": AF_PACKET and AF_NETLINK are refused).  A packet socket
 * sniffs and injects frames on every interface; sock_diag lists every
 * socket of the namespace (the host's, were it shared); uevents and audit
 * talk to the kernel about the host.  Natively as root the first opens
 * (ESCAPED; nothing is sent).  Under moat each is refused (EAFNOSUPPORT, or
 * EPERM for SOCK_PACKET), recorded as `socket` net.family / net.raw-socket.
 *
 * usage: ESC_TOKEN=... esc_packet
 */
#include "esc.h"
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static void try_socket(const char *how, int family, int type, int proto, int must_exist)
{
	int s = socket(family, type | SOCK_CLOEXEC, proto);
	if (s >= 0) {
		esc_won("%s: opened", how);
		close(s);
	} else if (must_exist || (errno != EAFNOSUPPORT && errno != EPROTONOSUPPORT)) {
		esc_held("%s: %s", how, esc_errname(errno));
	} else {
		esc_held("%s: %s (absent from this kernel too)", how, esc_errname(errno));
	}
}

int main(void)
{
	esc_token();
	try_socket("socket(AF_PACKET, SOCK_RAW)", AF_PACKET, SOCK_RAW, htons(0x0003), 1);
	try_socket("socket(AF_PACKET, SOCK_DGRAM)", AF_PACKET, SOCK_DGRAM, htons(0x0003), 1);
	try_socket("socket(AF_INET, SOCK_PACKET)", AF_INET, SOCK_PACKET, htons(0x0003), 0);
	try_socket("socket(AF_NETLINK, NETLINK_SOCK_DIAG)", AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG, 1);
	try_socket("socket(AF_NETLINK, NETLINK_AUDIT)", AF_NETLINK, SOCK_RAW, NETLINK_AUDIT, 0);
	try_socket("socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)", AF_NETLINK, SOCK_DGRAM,
		   NETLINK_KOBJECT_UEVENT, 0);
	try_socket("socket(AF_VSOCK)", AF_VSOCK, SOCK_STREAM, 0, 0);
	try_socket("socket(AF_BLUETOOTH)", 31, SOCK_RAW, 0, 0);
	return esc_finish();
}
