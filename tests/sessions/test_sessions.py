#!/usr/bin/python3
"""`moat session` through its Python client (clients/python/moat_session.py).

    MOAT=./moat /usr/bin/python3 tests/sessions/test_sessions.py [TEST ...]

One PASS/FAIL line per check, then `N passed, M failed`; exit 1 if any
failed.  Each test has a time limit: past it, it fails, every `moat
session` it started is killed (so its waiting calls end) and the next test
runs; a watchdog ends the whole run if even that hangs.  Nothing here
points at the network.
"""
import base64
import hashlib
import os
import re
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
from moat_session import Server, Session, SessionError  # noqa: E402

MOAT = os.path.abspath(os.environ.get("MOAT", os.path.join(ROOT, "moat")))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WATCHDOG = 300  # seconds for the whole run

passed, failed = [], []
servers = []  # every Server started: killed when a test runs out of time
servers_lock = threading.Lock()


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"), flush=True)
    (passed if ok else failed).append(name)
    return ok


def server(*args):
    srv = Server(MOAT, args=args)
    with servers_lock:
        servers.append(srv)
    return srv


def session(srv=None, **kw):
    """A session on srv (else on a server of its own)."""
    if srv is None:
        srv = server()
    return Session(server=srv, **kw)


def timed(f, *a, **kw):
    t = time.monotonic()
    r = f(*a, **kw)
    return r, time.monotonic() - t


def brief(e):
    """A cell's reply, short, for a failure's detail."""
    r = dict(e.reply)
    for k in ("outputs",):
        if r.get(k):
            r[k] = f"[{len(r[k])} outputs]"
    if e.stdout:
        r["stdout"] = e.stdout[-300:]
    if e.stderr:
        r["stderr"] = e.stderr[-300:]
    return str(r)[:1500]


TESTS = []


def test(limit):
    def reg(f):
        TESTS.append((f.__name__[len("test_"):], f, limit))
        return f
    return reg


# ---------------------------------------------------------------- python


@test(60)
def test_state():
    with session() as s:
        e = s.run("x = 6 * 7\nimport math\ndef f(k):\n    return k + x")
        check("state: a cell that defines names runs", e.status == "ok" and e.result is None,
              brief(e))
        e = s.run("f(math.floor(0.5)) + 0")
        check("state: variables, imports and functions survive across cells",
              e.status == "ok" and e.text == "42", brief(e))
        e = s.run("[x, 'x' * 3]")
        check("state: the last expression's value is its repr as text/plain",
              e.text == "[42, 'xxx']" and e.result.get("text/plain") == e.text, brief(e))
        check("state: execution_count counts the cells", e.execution_count == 3, brief(e))
        e = s.run("y = 1")
        check("state: no value when the last statement is not an expression",
              e.status == "ok" and e.result is None and e.text is None, brief(e))


@test(60)
def test_streams():
    with session() as s:
        seen = []
        e = s.run("import sys, subprocess, os\n"
                  "print('from print')\n"
                  "print('to stderr', file=sys.stderr)\n"
                  "subprocess.run(['echo', 'from a subprocess'])\n"
                  "subprocess.run('echo sub-err >&2', shell=True)\n"
                  "os.write(1, b'from fd 1\\n')\n",
                  on_stream=lambda name, text: seen.append((name, text)))
        check("streams: print, a subprocess's echo and fd 1 reach stdout",
              e.status == "ok" and e.stdout == "from print\nfrom a subprocess\nfrom fd 1\n",
              brief(e))
        check("streams: stderr apart, from Python and from a subprocess",
              e.stderr == "to stderr\nsub-err\n", brief(e))
        check("streams: each chunk came as an event while the cell ran",
              "".join(t for n, t in seen if n == "stdout") == e.stdout and
              "".join(t for n, t in seen if n == "stderr") == e.stderr, seen)
        e = s.run("print('x' * 300000)")
        check("streams: a large output arrives whole", e.stdout == "x" * 300000 + "\n",
              f"{len(e.stdout)} chars")


@test(60)
def test_exception():
    with session() as s:
        e = s.run("def g():\n    raise ValueError('bad value 17')\nz = 1\ng()")
        err = e.error
        check("exception: status error with ename and evalue",
              e.status == "error" and err is not None and err.ename == "ValueError"
              and err.evalue == "bad value 17", brief(e))
        tb = "\n".join(err.traceback) if err else ""
        check("exception: the traceback shows the cell's lines",
              "<cell" in tb and "raise ValueError('bad value 17')" in tb and
              tb.rstrip().endswith("ValueError: bad value 17"), tb)
        e = s.run("z + 1")
        check("exception: the session goes on (names made before the error kept)",
              e.text == "2" and not e.restarted, brief(e))
        e = s.run("def broken(:\n    pass")
        check("exception: a syntax error is an error too",
              e.status == "error" and e.error and e.error.ename == "SyntaxError", brief(e))


@test(60)
def test_timeout():
    with session() as s:
        s.run("keep = 'still here'")
        e, dt = timed(s.run, "while True: pass", timeout=1)
        check("timeout: an endless loop returns status timeout",
              e.status == "timeout" and not e.restarted, brief(e))
        check("timeout: within the timeout + 1.5 s", dt <= 2.5, f"{dt:.2f} s")
        check("timeout: the error is a KeyboardInterrupt",
              e.error is not None and e.error.ename == "KeyboardInterrupt", brief(e))
        e = s.run("keep")
        check("timeout: the next cell sees the earlier variables",
              e.status == "ok" and e.text == "'still here'" and not e.restarted, brief(e))


@test(60)
def test_killed():
    with session() as s:
        s.run("old = 1")
        e, dt = timed(s.run, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                             "while True: pass", timeout=1)
        check("killed: a cell that ignores SIGINT is killed after the grace",
              e.status == "killed" and e.restarted, brief(e))
        check("killed: within the timeout + the grace (2 s) + 3 s", dt <= 6, f"{dt:.2f} s")
        e = s.run("1 + 1")
        check("killed: the next cell runs", e.status == "ok" and e.text == "2", brief(e))
        e = s.run("old")
        check("killed: the old state is gone (a fresh interpreter)",
              e.status == "error" and e.error and e.error.ename == "NameError", brief(e))


@test(60)
def test_memory():
    with session(memory_limit="256M") as s:
        s.run("before = 5")
        e = s.run("b = bytearray(600 * 1024 * 1024)", timeout=30)
        check("memory: past the memory limit, verdict ML and a restart",
              e.verdict == "ML" and e.restarted and e.status in ("killed", "error"), brief(e))
        e = s.run("sum(range(10))")
        check("memory: the next cell runs", e.status == "ok" and e.text == "45", brief(e))
        e = s.run("small = bytearray(50 * 1024 * 1024)\nlen(small)")
        check("memory: a cell within the limit runs", e.text == str(50 * 1024 * 1024),
              brief(e))


@test(60)
def test_plot():
    with session() as s:
        shown = []
        e = s.run("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])",
                  on_display=shown.append)
        pngs = e.pngs()
        check("plot: an open figure comes back as image/png",
              e.status == "ok" and len(pngs) == 1, brief(e))
        check("plot: the image/png decodes to a PNG",
              bool(pngs) and pngs[0].startswith(PNG_MAGIC) and len(pngs[0]) > 1000,
              pngs[0][:16] if pngs else None)
        check("plot: it came as a display event too",
              len(shown) == 1 and base64.b64decode(shown[0]["image/png"]) == pngs[0], shown)
        e = s.run("1")
        check("plot: the figure was closed (no image on the next cell)", e.pngs() == [],
              brief(e))


@test(60)
def test_interrupt():
    with session() as s:
        s.run("kept = 'yes'")
        t = threading.Timer(0.5, s.interrupt)
        t.start()
        e, dt = timed(s.run, "import time\ntime.sleep(30)")
        t.join()
        check("interrupt: from another thread, status interrupted",
              e.status == "interrupted" and e.error and e.error.ename == "KeyboardInterrupt",
              brief(e))
        check("interrupt: fast (within 1.5 s of the interrupt)", dt <= 2.0, f"{dt:.2f} s")
        e = s.run("kept")
        check("interrupt: the state is kept", e.text == "'yes'" and not e.restarted, brief(e))
        r = s.interrupt()
        check("interrupt: with no cell running, ok at once", r.get("ok") is True, r)


@test(90)
def test_interrupt_early():
    # An interrupt (or a timeout) that comes before the driver has begun
    # the cell still interrupts it: the cell says interrupted (timeout),
    # and the state is kept.
    with session() as s:
        s.run("kept = 'yes'")
        got = []
        for _ in range(4):
            rid, q = s.server.start("exec", {"session": s.id,
                                             "code": "import time\ntime.sleep(3)"})
            s.interrupt()
            r, dt = timed(s.server.wait, rid, q, timeout=30)
            got.append((r.get("status"), r.get("restarted"), round(dt, 2)))
        check("interrupt: sent right after the exec, the cell is interrupted, state kept",
              all(st == "interrupted" and not rs and dt < 2 for st, rs, dt in got), got)
        got = []
        for _ in range(4):
            e, dt = timed(s.run, "import time\ntime.sleep(3)", timeout=0.001)
            got.append((e.status, e.restarted, round(dt, 2)))
        check("timeout: a timeout shorter than the cell's start, status timeout, state kept",
              all(st == "timeout" and not rs and dt < 2 for st, rs, dt in got), got)
        e = s.run("kept")
        check("interrupt: the state is there after early interrupts",
              e.text == "'yes'", brief(e))


@test(60)
def test_busy():
    with session() as s:
        res = {}
        t = threading.Thread(target=lambda: res.update(e=s.run("import time\ntime.sleep(1.5)")))
        t.start()
        time.sleep(0.5)
        try:
            s.run("1")
            check("busy: a second exec while a cell runs is refused", False, "it ran")
        except SessionError as err:
            check("busy: a second exec while a cell runs is refused",
                  "busy" in str(err), str(err))
        t.join(10)
        check("busy: the first cell ends normally", res.get("e") is not None and
              res["e"].status == "ok", res)


@test(60)
def test_files():
    with session() as s:
        r = s.upload("data/in.txt", "uploaded 123\n")
        check("files: upload", r.get("ok") is True, r)
        e = s.run("open('data/in.txt').read()")
        check("files: an uploaded file is read in a cell", e.text == "'uploaded 123\\n'",
              brief(e))
        e = s.run("open('out.csv', 'w').write('a,b\\n1,2\\n')")
        want = hashlib.sha256(b"a,b\n1,2\n").hexdigest()
        fc = e.reply.get("files_changed") or []
        check("files: a file the cell wrote is listed with its size and hash",
              any(f.get("path", "").endswith("/out.csv") and f.get("size") == 8 and
                  f.get("sha256") == want for f in fc), fc)
        data, r = s.download("out.csv")
        check("files: and downloads", data == b"a,b\n1,2\n", (data, r))


@test(60)
def test_late_output():
    # Output after the cell's end (a thread, a background process) is not a
    # protocol error: the session and its state live on.
    with session() as s:
        s.run("import threading, time\nlate = 'kept'\n"
              "threading.Thread(target=lambda: (time.sleep(0.3), print('late line'))).start()")
        time.sleep(1.0)
        e = s.run("late")
        check("late output: a thread's print after its cell ended keeps the session",
              e.status == "ok" and e.text == "'kept'", brief(e))


# ------------------------------------------------------- untrusted channel

# The cell finds the driver's protocol fd: a pipe or socket open for
# writing that is neither fd 1 nor 2 nor a copy of them.
FIND_FD = """\
import os, stat, fcntl
def _proto_fd():
    mine = {os.fstat(1).st_ino, os.fstat(2).st_ino}
    for fd in range(3, 256):
        try:
            st = os.fstat(fd)
            mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
        except OSError:
            continue
        if (stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)) and \\
                mode != os.O_RDONLY and st.st_ino not in mine:
            return fd
    raise RuntimeError("no protocol fd found")
"""

GARBAGE = [
    ("a line that is not JSON", "os.write(_proto_fd(), b'this is not json\\n')"),
    ("a forged done with a wrong n",
     "os.write(_proto_fd(), b'{\"ev\": \"done\", \"n\": 99999, \"status\": \"ok\", "
     "\"result\": null, \"error\": null, \"files\": []}\\n')"),
    ("a line past --max-message", "os.write(_proto_fd(), b'{\"ev\": \"' + b'x' * (2 << 20))\n"
     "os.write(_proto_fd(), b'\"}\\n')"),
    ("a stream of a wrong kind",
     "os.write(_proto_fd(), b'{\"ev\": \"stream\", \"n\": 1, \"name\": \"stdin\", "
     "\"text\": 3}\\n')"),
]


@test(90)
def test_protocol():
    srv = server("--max-message", str(1 << 20))
    with session(srv) as bystander, session(srv) as s:
        bystander.run("mine = 'untouched'")
        for what, code in GARBAGE:
            e = s.run(FIND_FD + "import time\n" + code + "\ntime.sleep(5)", timeout=20)
            check(f"protocol: {what} ends the cell with MoatProtocolError",
                  e.status == "error" and e.error is not None and
                  e.error.ename == "MoatProtocolError" and e.restarted, brief(e))
            e = s.run("2 + 3")
            check(f"protocol: after {what}, the session works again",
                  e.status == "ok" and e.text == "5", brief(e))
        e = bystander.run("mine")
        check("protocol: another session of the same process is untouched",
              e.text == "'untouched'" and not e.restarted, brief(e))
        check("protocol: the session process lives on", srv.alive, srv.stderr_tail())


# ------------------------------------------------------------------ bash


@test(60)
def test_bash():
    try:
        s = session(language="bash")
    except SessionError as err:
        check("bash: a bash session starts", False, str(err))
        return
    with s:
        e = s.run("v=17; cd /tmp; f() { echo \"f:$1\"; }; echo set")
        check("bash: a cell runs", e.status == "ok" and e.stdout == "set\n", brief(e))
        e = s.run("echo \"$v $PWD\"; f x; echo err >&2")
        check("bash: variables, functions and the cwd survive across cells",
              e.status == "ok" and e.stdout == "17 /tmp\nf:x\n" and e.stderr == "err\n",
              brief(e))
        e = s.run("echo before; ls /nonexistent-dir-of-moat")
        check("bash: a failing command is status error, BashError and its exit status",
              e.status == "error" and e.error and e.error.ename == "BashError" and
              e.error.evalue == "exit status 2" and e.stdout == "before\n" and
              "nonexistent" in e.stderr, brief(e))
        e, dt = timed(s.run, "while :; do :; done", timeout=1)
        check("bash: an endless loop returns timeout and keeps the shell",
              e.status == "timeout" and not e.restarted and dt <= 2.5, f"{dt:.2f} s {brief(e)}")
        t = threading.Timer(0.5, s.interrupt)
        t.start()
        e, dt = timed(s.run, "sleep 30; echo not-reached")
        t.join()
        check("bash: interrupt stops a program and the rest of the cell",
              e.status == "interrupted" and "not-reached" not in e.stdout and dt <= 2.0,
              f"{dt:.2f} s {brief(e)}")
        e = s.run("echo $v")
        check("bash: the shell's state is kept after both", e.stdout == "17\n", brief(e))
        s.run("(sleep 0.3; echo late) &")
        time.sleep(1.0)
        e = s.run("echo $v")
        check("bash: a background job's late output goes to the next cell, state kept",
              e.status == "ok" and e.stdout == "late\n17\n" and not e.restarted, brief(e))


# ------------------------------------------------------------- many at once


@test(120)
def test_many():
    srv = server()
    n = 20
    res = [None] * n

    def one(i):
        try:
            with Session(server=srv, timeout=60) as s:
                e = s.run(f"k = {i}\nsum(range(10**6)) + k * k")
                res[i] = e.text
        except Exception as err:  # reported below
            res[i] = repr(err)

    t0 = time.monotonic()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(100)
    want = [str(sum(range(10**6)) + i * i) for i in range(n)]
    bad = [(i, r) for i, r in enumerate(res) if r != want[i]]
    check(f"many: {n} sessions at once on one process all return their own correct value",
          not bad, bad[:5])
    print(f"     ({n} sessions created and run in {time.monotonic() - t0:.1f} s)")
    check("many: none left after their close", srv.list() == [], srv.list())


# ------------------------------------------------------- nothing left behind


def proc_table():
    """pid -> (ppid, start time) of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rindex(")") + 2:].split()
        out[int(d)] = (int(rest[1]), rest[19])
    return out


def family(root):
    """(pid, start time) of root and every process below it."""
    table = proc_table()
    kids = {}
    for pid, (ppid, _) in table.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = set(), [root]
    while todo:
        p = todo.pop()
        if p in table:
            out.add((p, table[p][1]))
            todo.extend(kids.get(p, []))
    return out


SCRATCH = re.compile(r"^(/tmp/moat-[0-9a-f]{8,}|/dev/shm/moat-skel-[A-Za-z0-9]{6})(/|$)")


def dirs_of(procs):
    """The scratch and skeleton directories the processes hold open."""
    out = set()
    for pid, _ in procs:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                m = SCRATCH.match(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                continue
            if m:
                out.add(m.group(1))
    return out


def left(procs, dirs, wait):
    """What is still there of procs and dirs after up to wait seconds."""
    deadline = time.monotonic() + wait
    while True:
        table = proc_table()
        alive = {(p, st) for p, st in procs if p in table and table[p][1] == st}
        # a zombie no one reaps is not a live sandbox process
        alive = {(p, st) for p, st in alive if not _zombie(p)}
        there = {d for d in dirs if os.path.exists(d)}
        if (not alive and not there) or time.monotonic() > deadline:
            return alive, there
        time.sleep(0.1)


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        return s[s.rindex(")") + 2] == "Z"
    except OSError:
        return True


def cgroups_of(procs):
    """The cgroup directories (moat-PID-...) of the moat runs among procs."""
    prefixes = tuple(f"moat-{pid}-" for pid, _ in procs)
    out = set()
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        for d in list(dirs):
            if d.startswith(prefixes):
                out.add(os.path.join(root, d))
                dirs.remove(d)
        if root.count("/") > 8:
            dirs[:] = []
    return out


def busy_sessions(srv):
    """Two sessions with a cell each; the family of the process."""
    a = Session(server=srv)
    b = Session(server=srv)
    a.run("x = 1")
    b.run("import os\nos.getpid()")
    return a, b


@test(90)
def test_cleanup_close():
    srv = server()
    a, b = busy_sessions(srv)
    procs = family(srv.proc.pid)
    dirs = dirs_of(procs)
    cgs = cgroups_of(procs)
    runs = sum(1 for p, _ in procs if p != srv.proc.pid)
    check("cleanup: the sessions' processes and directories are seen while they live",
          runs >= 4 and len(dirs) >= 4, f"{runs} processes, dirs {sorted(dirs)}")
    r = a.close()
    check("cleanup: close replies with the verdict", r.get("verdict") == "OK", r)
    b.close()
    code = srv.close()
    check("cleanup: the session process exits 0 when its stdin ends", code == 0, code)
    alive, there = left(procs, dirs | cgs, 5)
    check("cleanup: after close, no process of the sessions is left", not alive, alive)
    check("cleanup: after close, no scratch, skeleton or cgroup directory is left",
          not there, there)


@test(90)
def test_cleanup_kill():
    srv = server()
    a, b = busy_sessions(srv)
    res = {}

    def long_cell():
        t = time.monotonic()
        try:
            res["e"] = a.run("import time\ntime.sleep(60)")
        except SessionError as err:
            res["err"] = str(err)
        res["dt"] = time.monotonic() - t

    t = threading.Thread(target=long_cell)
    t.start()
    time.sleep(0.5)
    procs = family(srv.proc.pid)
    dirs = dirs_of(procs)
    cgs = cgroups_of(procs)
    os.kill(srv.proc.pid, signal.SIGKILL)
    t.join(10)
    check("cleanup: a call waiting on a killed session process raises SessionError at once",
          "err" in res and res["dt"] < 3, res)
    try:
        b.run("1")
        check("cleanup: a new call on a dead process raises SessionError", False, "it ran")
    except SessionError:
        check("cleanup: a new call on a dead process raises SessionError", True)
    alive, there = left(procs - {(srv.proc.pid, s) for p, s in procs if p == srv.proc.pid},
                        dirs | cgs, 10)
    check("cleanup: after SIGKILL of the session process, no process of its sessions is left",
          not alive, alive)
    check("cleanup: after SIGKILL, no scratch, skeleton or cgroup directory is left",
          not there, there)


# ---------------------------------------------------------------- example


@test(90)
def test_agent_loop():
    out = os.path.join("/tmp", f"moat-agent-test-{os.getpid()}")
    try:
        p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "agent_loop.py"),
                            "--moat", MOAT, out], capture_output=True, text=True, timeout=80)
        png = os.path.join(out, "agent_plot.png")
        ok = p.returncode == 0 and os.path.exists(png)
        with open(png, "rb") if ok else open(os.devnull, "rb") as f:
            head = f.read(8)
        check("example: agent_loop.py goes round the loop and writes a PNG",
              ok and head == PNG_MAGIC and "KeyError" in p.stdout,
              f"exit {p.returncode}: {(p.stdout + p.stderr)[-800:]}")
    finally:
        subprocess.run(["rm", "-rf", out])


# ------------------------------------------------------------------- main


def run_one(name, f, limit):
    box = {}

    def body():
        try:
            f()
        except Exception as err:  # a test's own crash is its failure
            box["err"] = f"{type(err).__name__}: {err}"

    t0 = time.monotonic()
    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(limit)
    if t.is_alive():
        check(f"{name}: finished within {limit} s", False, "timed out")
        with servers_lock:
            for srv in servers:
                srv.kill()  # its waiting calls end
        t.join(10)
    elif "err" in box:
        check(f"{name}: ran to its end", False, box["err"])
    with servers_lock:
        doomed = list(servers)
        servers.clear()
    for srv in doomed:
        if srv.alive:
            srv.close(timeout=15)
    print(f"     ({name}: {time.monotonic() - t0:.1f} s)", flush=True)


def main(argv):
    if not os.access(MOAT, os.X_OK):
        print(f"FAIL setup: no moat binary at {MOAT} (make moat)")
        return 1
    dog = threading.Timer(WATCHDOG, lambda: (print(f"FAIL watchdog: the run took over "
                                                   f"{WATCHDOG} s", flush=True),
                                             [s.kill() for s in servers], os._exit(1)))
    dog.daemon = True
    dog.start()
    names = set(argv)
    unknown = names - {n for n, _, _ in TESTS}
    if unknown:
        print(f"FAIL setup: no test named {' '.join(sorted(unknown))}")
        return 1
    t0 = time.monotonic()
    for name, f, limit in TESTS:
        if not names or name in names:
            run_one(name, f, limit)
    print(f"{len(passed)} passed, {len(failed)} failed ({time.monotonic() - t0:.1f} s)")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
