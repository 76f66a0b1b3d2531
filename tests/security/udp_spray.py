#!/usr/bin/env python3
"""udp_spray.py SECONDS — the outside party of esc_udp_autobind.

For SECONDS, every 100 ms: send $ESC_TOKEN to 127.0.0.1:PORT for every UDP
socket of the host's network namespace (/proc/net/udp, IPv4) that a process
of this pid namespace holds (its inode among /proc/*/fd) — the attempt's
own sockets, never another program's."""
import os
import socket
import sys
import time


def our_inodes():
    found = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                link = os.readlink("/proc/%s/fd/%s" % (pid, fd))
                if link.startswith("socket:["):
                    found.add(link[8:-1])
        except OSError:
            pass
    return found


end = time.time() + float(sys.argv[1])
tok = (os.environ["ESC_TOKEN"] + "\n").encode()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while time.time() < end:
    mine = our_inodes()
    for line in open("/proc/net/udp").readlines()[1:]:
        f = line.split()
        if f[9] in mine:
            try:
                s.sendto(tok, ("127.0.0.1", int(f[1].split(":")[1], 16)))
            except OSError:
                pass
    time.sleep(0.1)
