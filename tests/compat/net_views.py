"""net-views: what the sandbox sees of its own network.

A listener on 127.0.0.1 and one on ::1 (Java's own IPv6 server socket,
which the JVM only offers when /proc/net/if_inet6 names an IPv6
interface), then `ss -ltn` and `netstat -ltn` (from /proc/net/tcp{,6} when
NETLINK_SOCK_DIAG is refused) must list both ports, and the Java server
must answer a client on ::1.  Prints the same lines natively and under moat.
"""
import os
import socket
import subprocess
import sys
import tempfile

s4 = socket.socket()
s4.bind(("127.0.0.1", 0))
s4.listen()
p4 = s4.getsockname()[1]

java = r"""
import java.net.*;
import java.io.*;
public class V6 {
    public static void main(String[] a) throws Exception {
        ServerSocket srv = new ServerSocket(0, 5, InetAddress.getByName("::1"));
        int port = srv.getLocalPort();
        System.out.println("java listens on " + srv.getInetAddress().getHostAddress());
        System.out.println("PORT " + port);
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        Socket c = new Socket(InetAddress.getByName("::1"), port);
        Socket s = srv.accept();
        c.getOutputStream().write("hello over ::1\n".getBytes());
        c.close();
        System.out.println("java read: " + new BufferedReader(new InputStreamReader(s.getInputStream())).readLine());
    }
}
"""
d = tempfile.mkdtemp()

# AF_UNIX names as bound: getsockname, getpeername, a connect to what
# getsockname said, a reply to recvfrom's sender (LTP bind04/bind05)
os.chdir(d)
rel = socket.socket(socket.AF_UNIX)
rel.bind("rel.sock")
print("unix getsockname (relative) as bound:", rel.getsockname() == "rel.sock")
srv = socket.socket(socket.AF_UNIX)
srv.bind(os.path.join(d, "abs.sock"))
srv.listen()
print("unix getsockname (absolute) as bound:", srv.getsockname() == os.path.join(d, "abs.sock"))
cli = socket.socket(socket.AF_UNIX)
cli.connect(srv.getsockname())
acc, _ = srv.accept()
print("unix getpeername as bound:", cli.getpeername() == os.path.join(d, "abs.sock"))
u1 = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
u1.bind(os.path.join(d, "d1"))
u2 = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
u2.bind(os.path.join(d, "d2"))
u2.sendto(b"ping", os.path.join(d, "d1"))
data, sender = u1.recvfrom(16)
u1.sendto(b"pong", sender)
print("unix datagram reply to the sender:", data, u2.recvfrom(16)[0])
for s in (rel, srv, cli, acc, u1, u2):
    s.close()
sys.stdout.flush()
with open(os.path.join(d, "V6.java"), "w") as f:
    f.write(java)
j = subprocess.Popen(["java", "-Xshare:off", os.path.join(d, "V6.java")], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
print(j.stdout.readline().strip())
p6 = int(j.stdout.readline().split()[1])
sys.stdout.flush()


def listed(cmd, port):
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    return any(line.split()[3 if cmd[0] == "ss" else 3].endswith(":%d" % port)
               for line in out.splitlines()[1:] if len(line.split()) > 4)


for cmd in (["ss", "-ltn"], ["netstat", "-ltn"]):
    print(cmd[0], "sees 127.0.0.1 listener:", listed(cmd, p4))
    print(cmd[0], "sees ::1 listener:", listed(cmd, p6))
ifs = open("/proc/net/if_inet6").read().split()
print("if_inet6 has lo ::1:", "00000000000000000000000000000001" in ifs)
sys.stdout.flush()
j.stdin.write("go\n")
j.stdin.flush()
print(j.stdout.read().strip())
print("java exit", j.wait())
