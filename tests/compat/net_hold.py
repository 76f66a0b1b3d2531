"""A server inside the sandbox that stays up until told: TCP on
127.0.0.1:0 and UDP on 127.0.0.1:0; writes its ports to DIR/ports, then
waits for DIR/stop.  tests/compat/run.sh (case net-private) tries to reach
them from the host meanwhile."""
import os
import socket
import sys
import time

d = sys.argv[1]
t = socket.socket()
t.bind(("127.0.0.1", 0))
t.listen(4)
t.setblocking(False)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
u.setblocking(False)
with open(os.path.join(d, "ports.tmp"), "w") as f:
    f.write("%d %d\n" % (t.getsockname()[1], u.getsockname()[1]))
os.rename(os.path.join(d, "ports.tmp"), os.path.join(d, "ports"))
got = []
for _ in range(300):
    if os.path.exists(os.path.join(d, "stop")):
        break
    try:
        got.append("tcp from %s" % (t.accept()[1],))
    except BlockingIOError:
        pass
    try:
        got.append("udp %r" % (u.recvfrom(100),))
    except BlockingIOError:
        pass
    time.sleep(0.05)
print("reached from outside:", got)
