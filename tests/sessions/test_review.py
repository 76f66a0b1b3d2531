#!/usr/bin/python3
"""Regressions of the attacker review of moat session (docs/security.md,
class 8), each through the JSON-lines protocol itself (standard library).

    MOAT=./moat python3 tests/sessions/test_review.py

- a verdict survives a long run report (300 files written, then ML);
- display outputs past --max-message are left out of the reply, counted;
- a session's moat run ends when the session process is SIGKILLed while a
  cell holds the GIL (the lifeline), leaving no process.
Prints PASS/FAIL lines; exits 1 if any failed."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

MOAT = os.path.abspath(os.environ.get("MOAT", "./moat"))
failed = []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failed.append(name)


class Proc:
    def __init__(self, *args):
        self.p = subprocess.Popen([MOAT, "session", "--idle-timeout", "0", *args],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  bufsize=1)
        self.n = 0

    def call(self, **req):
        self.n += 1
        req["id"] = self.n
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("moat session ended")
            r = json.loads(line)
            if r.get("id") == self.n and "event" not in r:
                return r

    def send(self, **req):
        self.n += 1
        req["id"] = self.n
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()

    def end(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(c) for c in f.read().split()]
        except OSError:
            kids = []
        out += kids
        todo += kids
    return out


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def test_long_report():
    s = Proc()
    name = s.call(op="create", memory_limit="200M")["session"]
    r = s.call(op="exec", session=name,
               code="for i in range(300): open(f'/tmp/f{i:04}', 'w').write('x')\n"
                    "b = bytearray(600 << 20)")
    check("a verdict survives a long run report (300 files, then ML)",
          r.get("verdict") == "ML" and r.get("restarted") is True, r)
    s.end()


def test_display_bound():
    s = Proc("--max-message", str(4 << 20))
    name = s.call(op="create")["session"]
    r = s.call(op="exec", session=name,
               code="for i in range(12): display(type('X', (), {'__repr__': "
                    "lambda self: 'x' * (1 << 20)})())")
    kept = sum(len(o.get("text/plain", "")) for o in r.get("outputs", []))
    check("display outputs past --max-message are left out of the reply and counted",
          r.get("status") == "ok" and r.get("outputs_omitted", 0) >= 8 and kept <= 4 << 20,
          {k: v for k, v in r.items() if k != "outputs"})
    s.end()


def test_lifeline():
    s = Proc()
    name = s.call(op="create")["session"]
    s.send(op="exec", session=name, code="sum(range(10 ** 13))")  # holds the GIL
    time.sleep(1)
    kids = descendants(s.p.pid)
    os.kill(s.p.pid, signal.SIGKILL)
    s.p.wait()
    deadline = time.time() + 10
    while time.time() < deadline and any(alive(k) for k in kids):
        time.sleep(0.2)
    left = [k for k in kids if alive(k)]
    check("SIGKILL of the session process ends its sandbox, a cell holding the GIL",
          kids and not left, f"children {kids}, alive {left}")
    for k in left:  # not ours to leave behind, whatever the verdict
        try:
            os.kill(k, signal.SIGKILL)
        except ProcessLookupError:
            pass


def main():
    timer = threading.Timer(180, lambda: (print("FAIL review: timed out"), os._exit(1)))
    timer.daemon = True
    timer.start()
    for t in (test_long_report, test_display_bound, test_lifeline):
        t0 = time.time()
        try:
            t()
        except Exception as e:  # a test that cannot run fails
            check(t.__name__, False, repr(e))
        print(f"     ({t.__name__}: {time.time() - t0:.1f} s)")
    sys.exit(1 if failed else 0)


main()
