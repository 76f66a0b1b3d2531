"""pty_run.py CMD... — run CMD with fds 0-2 on a fresh pty that is no
session's controlling terminal (openpty opens it O_NOCTTY and the child
keeps our session), as a program that drives a tool through a pty does.
Copies the pty's output to stdout (\r\n as \n) and exits with CMD's code
(128+N for a signal).  Used by run.sh's run_pty (esc_ctty_race)."""
import os
import pty
import subprocess
import sys

m, s = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=s, stdout=s, stderr=s)
os.close(s)
out = bytearray()
while True:
    try:
        d = os.read(m, 65536)
    except OSError:  # EIO: every slave fd is closed
        break
    if not d:
        break
    out += d
rc = p.wait()
sys.stdout.write(out.decode(errors="replace").replace("\r\n", "\n"))
sys.exit(rc if rc >= 0 else 128 - rc)
