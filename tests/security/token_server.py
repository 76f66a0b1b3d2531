#!/usr/bin/env python3
"""token_server.py — a host-side server for the socket escape attempts.

tests/security/run.sh starts it inside the attempt's pid namespace, before
the native run, and kills it after the moat run.  It hands $ESC_TOKEN to
every client that connects, so an attempt that reads the token from it has
reached a host socket.

    token_server.py tcp      READY            127.0.0.1, a free port (written to READY)
    token_server.py tcp-plain READY           as tcp, but it sends "plain" (a server an
                                              attempt may reach: no token)
    token_server.py abstract NAME READY       the abstract AF_UNIX name "\\0NAME"
    token_server.py path     PATH READY       an AF_UNIX socket file at PATH (mode 0777)
    token_server.py peercred PATH READY       as `path`, but the token goes only to a
                                              peer whose SO_PEERCRED uid is 0 (a
                                              root-only daemon: dbus, systemd) and
                                              others get "denied uid=U pid=P"
    token_server.py passcred PATH READY       as `peercred`, judged instead by the
                                              SCM_CREDENTIALS (SO_PASSCRED) of the
                                              client's first message (journald, udev)

    token_server.py dns      LOG READY        a name server on 127.0.0.2:53 (UDP) that appends
                                              every question's name to LOG and answers
                                              NXDOMAIN: run.sh's /etc/resolv.conf names it
                                              (in the attempt's mount namespace only), so a
                                              question that reaches "the host's resolver" is
                                              on record and never leaves loopback

READY is written (with the port for tcp, else "ok") once the socket listens.
"""
import os
import socket
import struct
import sys


def main():
    mode = sys.argv[1]
    token = (os.environ["ESC_TOKEN"] + "\n").encode()
    if mode == "tcp-plain":
        token = b"plain\n"
    if mode in ("tcp", "tcp-plain"):
        ready = sys.argv[2]
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        what = str(s.getsockname()[1])
    elif mode == "abstract":
        ready = sys.argv[3]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind("\0" + sys.argv[2])
        what = "ok"
    elif mode in ("path", "peercred", "passcred"):
        ready = sys.argv[3]
        path = sys.argv[2]
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        os.chmod(path, 0o777)  # DAC lets anyone connect: the peer's identity decides
        if mode == "passcred":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)  # inherited by accepted sockets
        what = "ok"
    elif mode == "dns":
        dns_server(sys.argv[2], sys.argv[3])
        return
    else:
        sys.exit("token_server.py: unknown mode " + mode)
    s.listen(16)
    with open(ready + ".tmp", "w") as f:
        f.write(what + "\n")
    os.rename(ready + ".tmp", ready)
    while True:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            msg = token
            if mode == "peercred":
                pid, uid, gid = struct.unpack("3i", c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
                if uid != 0:
                    msg = ("denied uid=%d pid=%d\n" % (uid, pid)).encode()
            elif mode == "passcred":
                _, anc, _, _ = c.recvmsg(64, socket.CMSG_SPACE(12))
                creds = [d for lvl, typ, d in anc if lvl == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS]
                if not creds:
                    msg = b"denied: no credentials\n"
                else:
                    pid, uid, gid = struct.unpack("3i", creds[0][:12])
                    if uid != 0:
                        msg = ("denied uid=%d pid=%d\n" % (uid, pid)).encode()
            c.sendall(msg)
        except OSError:
            pass
        finally:
            c.close()


def dns_server(log, ready):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.2", 53))
    with open(ready + ".tmp", "w") as f:
        f.write("ok\n")
    os.rename(ready + ".tmp", ready)
    while True:
        q, peer = s.recvfrom(4096)
        if len(q) < 17:
            continue
        labels, o = [], 12
        while o < len(q) and q[o] and len(labels) < 128:
            labels.append(q[o + 1:o + 1 + q[o]].decode("ascii", "replace"))
            o += 1 + q[o]
        with open(log, "a") as f:
            f.write(".".join(labels) + "\n")
        # NXDOMAIN, the question echoed: an upstream that saw the name.
        s.sendto(q[:2] + bytes([0x80 | (q[2] & 0x79), 0x83]) + b"\0\1\0\0\0\0\0\0" + q[12:o + 5], peer)


if __name__ == "__main__":
    main()
