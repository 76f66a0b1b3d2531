#!/usr/bin/python3
"""drivers/bash_driver.py under `moat run`, spoken to as `moat session`
speaks to it (docs/sessions.md, "The driver's messages"): every message
is checked for exactly the members the session process accepts.

    MOAT=./moat /usr/bin/python3 tests/sessions/test_bash_driver.py

One PASS/FAIL line per check, then `N passed, M failed`; exit 1 if any
failed.  Bounded by a watchdog; nothing here points at the network.
"""
import base64
import hashlib
import json
import os
import queue
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MOAT = os.path.abspath(os.environ.get("MOAT", os.path.join(ROOT, "moat")))
# The driver as the binary has it: drivers/files.py, then the driver.
DRIVER = [os.path.join(ROOT, "drivers", f) for f in ("files.py", "bash_driver.py")]
WATCHDOG = 90

passed, failed = [], []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"), flush=True)
    (passed if ok else failed).append(name)
    return ok


# The members of each message, as cli/session.c checks them.
SHAPES = {
    "ready": {"ev"},
    "stream": {"ev", "n", "name", "text"},
    "done": {"ev", "n", "status", "result", "error", "files"},
}
FILE_SHAPES = {
    "put": {"ev", "rid", "ok", "size"},
    "get": {"ev", "rid", "ok", "data", "size", "sha256", "format"},
    "list": {"ev", "rid", "ok", "entries"},
    "fail": {"ev", "rid", "ok", "error"},
}


class Driver:
    def __init__(self):
        src = "".join(open(f).read() for f in DRIVER)
        self.p = subprocess.Popen([MOAT, "run", "--", "python3", "-c", src],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, bufsize=0)
        self.q = queue.Queue()
        self.bad = []  # messages of a wrong shape
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            try:
                m = json.loads(line)
            except ValueError:
                self.bad.append(line)
                continue
            shape = SHAPES.get(m.get("ev"))
            if m.get("ev") == "file":
                pass  # checked by the caller, who knows the action
            elif shape is None or set(m) != shape or not isinstance(m.get("n", 0), int):
                self.bad.append(m)
            elif m["ev"] == "stream" and (m["name"] not in ("stdout", "stderr")
                                          or not isinstance(m["text"], str)):
                self.bad.append(m)
            elif m["ev"] == "done" and m["error"] is not None and \
                    set(m["error"]) != {"ename", "evalue", "traceback"}:
                self.bad.append(m)
            self.q.put(m)
        self.q.put(None)

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def get(self, timeout=10):
        return self.q.get(timeout=timeout)

    def cell(self, n, code, interrupt_after=None, timeout=15):
        """(stdout, stderr, done, seconds) of one cell."""
        t0 = time.monotonic()
        self.send({"op": "exec", "n": n, "code": code})
        if interrupt_after is not None:
            threading.Timer(interrupt_after,
                            lambda: self.send({"op": "interrupt", "n": n})).start()
        out, err = [], []
        while True:
            m = self.get(timeout)
            if m is None:
                return "".join(out), "".join(err), None, time.monotonic() - t0
            if m.get("ev") == "stream" and m.get("n") == n:
                (out if m["name"] == "stdout" else err).append(m["text"])
            elif m.get("ev") == "done" and m.get("n") == n:
                return "".join(out), "".join(err), m, time.monotonic() - t0
            else:
                self.bad.append(("out of turn", m))

    def file(self, rid, **kw):
        self.send(dict(op="file", rid=rid, **kw))
        m = self.get()
        return m


def main():
    dog = threading.Timer(WATCHDOG, lambda: (print("FAIL watchdog: over "
                                                   f"{WATCHDOG} s", flush=True), os._exit(1)))
    dog.daemon = True
    dog.start()
    t0 = time.monotonic()
    d = Driver()
    first = d.get(30)
    check("bash driver: starts in the sandbox and says ready", first == {"ev": "ready"},
          (first, d.p.stderr.read() if first is None else ""))
    if first != {"ev": "ready"}:
        return 1
    out, err, done, _ = d.cell(1, "x=3; echo \"x=$x\"; echo e >&2")
    check("bash driver: a cell's stdout and stderr, then done ok",
          out == "x=3\n" and err == "e\n" and done and done["status"] == "ok"
          and done["result"] is None and done["error"] is None, (out, err, done))
    out, err, done, _ = d.cell(2, "echo $x; false")
    check("bash driver: state kept; a failing cell is error BashError",
          out == "3\n" and done and done["status"] == "error" and
          done["error"]["ename"] == "BashError" and done["error"]["evalue"] == "exit status 1",
          (out, done))
    out, err, done, dt = d.cell(3, "sleep 20; echo no", interrupt_after=0.3)
    check("bash driver: interrupt ends the cell as interrupted, fast",
          done and done["status"] == "interrupted" and "no" not in out and dt < 2,
          (out, done, dt))
    out, err, done, dt = d.cell(4, "while :; do :; done", interrupt_after=0.3)
    check("bash driver: interrupt ends a loop of builtins",
          done and done["status"] == "interrupted" and dt < 2, (done, dt))
    got = []
    for n in range(101, 105):  # exec and interrupt back to back
        d.send({"op": "exec", "n": n, "code": "sleep 5; echo no"})
        d.send({"op": "interrupt", "n": n})
        t = time.monotonic()
        m = d.get(10)
        while m is not None and m.get("ev") != "done":
            m = d.get(10)
        got.append(((m or {}).get("status"), round(time.monotonic() - t, 2)))
    check("bash driver: an interrupt right behind its exec interrupts the cell",
          all(st == "interrupted" and dt < 2 for st, dt in got), got)
    out, err, done, _ = d.cell(5, "printf 'a,b\\n' > made.csv; yes | head -c 10 >/dev/null; "
                                  "sleep 0.1 & wait")
    want = hashlib.sha256(b"a,b\n").hexdigest()
    files = (done or {}).get("files") or []
    check("bash driver: files lists what the cell wrote, with its hash",
          any(f["path"].endswith("/made.csv") and f["size"] == 4 and f.get("sha256") == want
              for f in files), files)
    check("bash driver: no chatter of bash's on stderr (job numbers, tcsetattr)",
          err == "", err)
    out, err, done, _ = d.cell(6, "(sleep 0.3; echo late) &")
    try:
        m = d.get(1.0)
        check("bash driver: nothing is sent between cells", False, m)
    except queue.Empty:
        check("bash driver: nothing is sent between cells", True)
    out, err, done, _ = d.cell(7, "echo now")
    check("bash driver: output between cells comes with the next cell",
          out == "late\nnow\n", out)
    m = d.file(11, action="put", path="sub/in.txt",
               data=base64.b64encode(b"put data\n").decode())
    check("bash driver: file put", m and set(m) == FILE_SHAPES["put"] and m["ok"] and
          m["size"] == 9, m)
    out, err, done, _ = d.cell(8, "cat sub/in.txt")
    check("bash driver: a put file is read in a cell", out == "put data\n", out)
    m = d.file(12, action="get", path="made.csv")
    check("bash driver: file get", m and set(m) == FILE_SHAPES["get"] and m["ok"] and
          base64.b64decode(m["data"]) == b"a,b\n" and m["sha256"] == want, m)
    m = d.file(13, action="list", path=".")
    check("bash driver: file list", m and set(m) == FILE_SHAPES["list"] and
          {"made.csv", "sub"} <= {e["name"] for e in m["entries"]}, m)
    m = d.file(14, action="get", path="no/such/file")
    check("bash driver: a failed file request is ok false with an error",
          m and set(m) == FILE_SHAPES["fail"] and m["ok"] is False, m)
    out, err, done, _ = d.cell(9, "exit 4")
    check("bash driver: a cell that ends bash ends the driver, with bash's status",
          done is None and d.p.wait(10) == 4, (done, d.p.poll()))
    check("bash driver: every message had the members the session process accepts",
          not d.bad, d.bad[:5])

    d = Driver()
    d.get(30)
    d.p.stdin.close()
    try:
        code = d.p.wait(10)
    except subprocess.TimeoutExpired:
        d.p.kill()
        code = "still running"
    check("bash driver: its stdin's end ends it (and its sandbox)", code == 0, code)
    print(f"{len(passed)} passed, {len(failed)} failed ({time.monotonic() - t0:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a crash is a failure, said as one
        print(f"FAIL bash driver: the test crashed: {type(e).__name__}: {e}")
        sys.exit(1)
