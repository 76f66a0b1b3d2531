"""Servers and clients inside one sandbox, over its loopback: an HTTP server
on 127.0.0.1:0 fetched with urllib, a redis-like line protocol over TCP
(IPv4 and IPv6), a UDP ping-pong, and readiness through poll and epoll.
Prints the same lines natively and under moat (tests/compat/run.sh)."""
import http.server
import select
import socket
import threading
import urllib.request


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        body = b"hello from inside\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
threading.Thread(target=srv.serve_forever, daemon=True).start()
port = srv.server_address[1]
print("http", port > 0, urllib.request.urlopen("http://127.0.0.1:%d/x" % port).read())
srv.shutdown()


def kv_server(ls):
    store = {}
    c, peer = ls.accept()
    f = c.makefile("rwb")
    for line in f:
        cmd = line.decode().split()
        if cmd[0] == "PING":
            f.write(b"+PONG\r\n")
        elif cmd[0] == "SET":
            store[cmd[1]] = cmd[2]
            f.write(b"+OK\r\n")
        elif cmd[0] == "GET":
            f.write(("$%s\r\n" % store.get(cmd[1], "-1")).encode())
        elif cmd[0] == "QUIT":
            f.write(b"+BYE\r\n")
            f.flush()
            break
        f.flush()
    c.shutdown(socket.SHUT_RDWR)
    c.close()


for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, 0))
    ls.listen(4)
    t = threading.Thread(target=kv_server, args=(ls,))
    t.start()
    c = socket.create_connection((host, ls.getsockname()[1]))
    print("kv peer matches", c.getpeername()[:2] == ls.getsockname()[:2])
    f = c.makefile("rwb")
    for cmd in (b"PING", b"SET a 42", b"GET a", b"GET b", b"QUIT"):
        f.write(cmd + b"\r\n")
        f.flush()
        print("kv", fam.name, cmd.decode(), f.readline().strip().decode())
    print("kv eof", c.recv(10))
    t.join()
    ls.close()

# UDP ping-pong, with poll and epoll readiness
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.connect(u.getsockname())
p = select.poll()
p.register(u, select.POLLIN)
print("udp poll before", p.poll(0))
v.send(b"ping")
print("udp poll after", [(fd == u.fileno(), ev) for fd, ev in p.poll(1000)])
data, addr = u.recvfrom(100)
print("udp got", data, addr == v.getsockname())
ep = select.epoll()
ep.register(v, select.EPOLLIN)
u.sendto(b"pong", addr)
print("udp epoll", [(fd == v.fileno(), ev) for fd, ev in ep.poll(1)])
print("udp got", v.recv(100))
# nothing listens on a loopback port nobody bound
s = socket.socket()
print("refused", s.connect_ex(("127.0.0.1", 1)))
