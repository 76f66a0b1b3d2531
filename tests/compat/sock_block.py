"""Blocking socket calls the supervisor performs (connect to a full backlog,
sendmsg into a full buffer) must not stop the rest of the sandbox: while
they wait, other calls are still answered.  Deterministic output."""
import os
import socket
import sys
import threading
import time

d = sys.argv[1]
path = os.path.join(d, "srv")
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(0)
done = []


def conn(i):
    c = socket.socket(socket.AF_UNIX)
    c.connect(path)
    done.append(i)


for i in range(3):
    threading.Thread(target=conn, args=(i,), daemon=True).start()
time.sleep(0.5)
print("connects finished while the backlog is full:", len(done) <= 2)
print("stat answered meanwhile:", os.stat(d).st_mode != 0)
for _ in range(3):
    srv.accept()
for _ in range(100):
    if len(done) == 3:
        break
    time.sleep(0.05)
print("all connected after accepts:", sorted(done))

a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
sent = []
t = threading.Thread(target=lambda: sent.append(sum(a.sendmsg([b"y" * 4000]) for _ in range(1000))))
t.start()
time.sleep(0.3)
print("stat answered while sendmsg waits:", os.stat(d).st_mode != 0)
got = 0
while got < 4000 * 1000:
    got += len(b.recv(65536))
t.join()
print("sent", sent[0], "received", got)
