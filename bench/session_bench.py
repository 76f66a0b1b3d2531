#!/usr/bin/python3
"""Sessions (issue 14), measured: python3 bench/session_bench.py [MOAT]

- how long a session takes to be ready (create's request to its reply);
- how long a `1+1` cell takes, from request to reply;
- the memory an idle session holds;
- beside them, what a cell costs when each one is a `moat run python3 -c`.

Prints a markdown table with the issue's targets; never fails (it reports).
Standard library only."""
import json
import os
import statistics
import subprocess
import sys
import time

MOAT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MOAT", "./moat"))
CREATES, CELLS, IDLE = 10, 200, 5


class Server:
    def __init__(self):
        self.p = subprocess.Popen([MOAT, "session", "--idle-timeout", "0"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
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

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def rss_kb(pid):
    """Resident memory of pid and its descendants (KiB)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            pass
    return total


def ms(v):
    return f"{v:.1f} ms"


def main():
    rows = []
    try:
        srv = Server()
        creates, names = [], []
        for _ in range(CREATES):
            t0 = time.perf_counter()
            r = srv.call(op="create")
            creates.append((time.perf_counter() - t0) * 1000)
            if not r.get("ok"):
                raise RuntimeError(r.get("error"))
            names.append(r["session"])
        s = names[0]
        srv.call(op="exec", session=s, code="1+1")  # the first cell imports ast
        cells = []
        for _ in range(CELLS):
            t0 = time.perf_counter()
            r = srv.call(op="exec", session=s, code="1+1")
            cells.append((time.perf_counter() - t0) * 1000)
            if r.get("result", {}).get("text/plain") != "2":
                raise RuntimeError(f"1+1 gave {r}")
        for name in names[1:]:
            srv.call(op="close", session=name)
        base = rss_kb(srv.p.pid)
        idle = [srv.call(op="create")["session"] for _ in range(IDLE)]
        time.sleep(0.5)
        per_idle = (rss_kb(srv.p.pid) - base) / IDLE / 1024
        for name in idle + [s]:
            srv.call(op="close", session=name)
        srv.close()
        percell = []
        for _ in range(10):
            t0 = time.perf_counter()
            subprocess.run([MOAT, "run", "--", "python3", "-c", "print(1+1)"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            percell.append((time.perf_counter() - t0) * 1000)
        c, e, pc = statistics.median(creates), statistics.median(cells), statistics.median(percell)
        rows = [
            ("session create (python ready to run)", ms(c), "≤ 150 ms (stretch 50)",
             "ok" if c <= 150 else "MISS"),
            ("`1+1` cell round trip", ms(e), "≤ 5 ms (stretch 2)", "ok" if e <= 5 else "MISS"),
            ("memory of an idle python session (RSS of moat run and the driver)",
             f"{per_idle:.1f} MiB", "reported", ""),
            ("a cell as `moat run -- python3 -c` instead", ms(pc), "",
             f"{pc / e:.0f}× the session's cell"),
        ]
    except Exception as ex:  # a bench reports; it does not fail the build
        print(f"\n## Sessions (issue 14)\n\nnot measured: {ex}")
        return
    print("\n## Sessions (issue 14; medians: "
          f"{CREATES} creates, {CELLS} cells, {IDLE} idle sessions)\n")
    print("| | moat | target | |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


main()
