"""A client of `moat session` (docs/sessions.md): live interpreters in moat
sandboxes, driven from Python.  Standard library only.

    from moat_session import Session
    with Session(moat="./moat", memory_limit="1G") as s:
        s.run("import math\\nx = math.pi")
        e = s.run("x * 2")
        print(e.text)                 # 6.283185307179586
        e = s.run("import matplotlib.pyplot as plt; plt.plot([1, 2, 3])")
        open("plot.png", "wb").write(e.pngs()[0])

A Session starts its own `moat session` process, or shares one given as
`server=` (a Server, which owns the process, numbers the requests and
hands each reply and event to the call that waits for it).  Every call
raises SessionError when the process answers `ok: false`, when it dies
(the call never hangs on a dead process), or when a reply does not come
in time.
"""
import base64
import itertools
import json
import os
import queue
import subprocess
import threading
import time

__all__ = ["Session", "Server", "Execution", "ExecError", "SessionError"]

_EOF = object()  # put in every waiting queue when the process's stdout ends


class SessionError(Exception):
    """A request failed: its `error`, or the session process is gone."""

    def __init__(self, message, reply=None):
        super().__init__(message)
        self.reply = reply


class Server:
    """One `moat session` process, shared by any number of Sessions.

    moat: path of the moat binary; args: more arguments of `moat session`
    (e.g. ["--grace", "1"]); stderr: "capture" (kept, its end shown in
    errors; the default), "inherit", or "devnull".
    """

    STDERR_KEEP = 64 * 1024

    def __init__(self, moat="moat", args=(), stderr="capture", env=None):
        self.moat = moat
        err = {"capture": subprocess.PIPE, "inherit": None,
               "devnull": subprocess.DEVNULL}[stderr]
        self.proc = subprocess.Popen([moat, "session", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=err, env=env,
                                     bufsize=0)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # the queues, the state
        self._write_lock = threading.Lock()
        self._queues = {}  # request id -> queue of its events and reply
        self._dead = None  # why the process is gone, once it is
        self._stderr = bytearray()
        self.unrouted = []  # lines with no waiting request (kept, at most 100)
        self._reader = threading.Thread(target=self._read, name="moat-session-reader",
                                        daemon=True)
        self._reader.start()
        if err is subprocess.PIPE:
            threading.Thread(target=self._drain_stderr, name="moat-session-stderr",
                             daemon=True).start()

    # -- the process's output -------------------------------------------------

    def _read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if not isinstance(msg, dict):
                self._unrouted(line)
                continue
            with self._lock:
                q = self._queues.get(_key(msg.get("id")))
            if q is None:
                self._unrouted(msg)
            else:
                q.put(msg)
        # EOF: the process is gone (or going); wake every waiting call
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        with self._lock:
            self._dead = f"moat session exited (status {code})"
            waiting = list(self._queues.values())
        for q in waiting:
            q.put(_EOF)

    def _unrouted(self, item):
        with self._lock:
            if len(self.unrouted) < 100:
                self.unrouted.append(item)

    def _drain_stderr(self):
        while True:
            chunk = self.proc.stderr.read1(65536) if hasattr(self.proc.stderr, "read1") \
                else os.read(self.proc.stderr.fileno(), 65536)
            if not chunk:
                return
            with self._lock:
                self._stderr += chunk
                del self._stderr[:-self.STDERR_KEEP]

    def stderr_tail(self, n=2000):
        """The end of what the process wrote on stderr (when captured)."""
        with self._lock:
            return self._stderr[-n:].decode("utf-8", "replace")

    def _death(self):
        tail = self.stderr_tail().strip()
        return self._dead + (f": {tail}" if tail else "")

    @property
    def alive(self):
        return self._dead is None and self.proc.poll() is None

    # -- requests -------------------------------------------------------------

    def start(self, op, fields=None):
        """Send one request (op and the fields); (id, queue) for wait()."""
        rid = next(self._ids)
        q = queue.Queue()
        with self._lock:
            dead = self._dead is not None
            if not dead:
                self._queues[rid] = q
        if dead:
            raise SessionError(self._death())
        req = {"id": rid, "op": op}
        req.update({k: v for k, v in (fields or {}).items() if v is not None})
        data = (json.dumps(req) + "\n").encode()
        try:
            with self._write_lock:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as e:
            self._forget(rid)
            with self._lock:
                dead = self._dead
            raise SessionError(self._death() if dead else f"moat session: {e}") from None
        return rid, q

    def wait(self, rid, q, timeout=None, on_event=None):
        """The reply to request rid; events before it go to on_event."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise SessionError(f"no reply to request {rid} in {timeout:g} s")
                try:
                    msg = q.get(timeout=left)
                except queue.Empty:
                    continue  # the deadline check above raises
                if msg is _EOF:
                    raise SessionError(self._death())
                if "event" in msg:
                    if on_event is not None:
                        on_event(msg)
                    continue
                return msg
        finally:
            self._forget(rid)

    def _forget(self, rid):
        with self._lock:
            self._queues.pop(rid, None)

    def call(self, op, fields=None, wait=None, on_event=None):
        """Send a request and return its reply (a dict); SessionError when
        the reply says `ok: false`, or none came within wait seconds."""
        rid, q = self.start(op, fields)
        reply = self.wait(rid, q, timeout=wait, on_event=on_event)
        if not reply.get("ok"):
            raise SessionError(str(reply.get("error") or f"{op} failed"), reply)
        return reply

    def list(self, timeout=30):
        """The live sessions: [{"session", "language", "busy", "execution_count"}]."""
        return self.call("list", wait=timeout).get("sessions", [])

    def close(self, timeout=30):
        """End the process: its stdin closes, it closes every session and
        exits; killed if it has not within timeout.  Its exit status."""
        with self._write_lock:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._reader.join(timeout=5)
        return code

    def kill(self):
        """SIGKILL the process (it leaves no session behind: docs/sessions.md)."""
        try:
            self.proc.kill()
        except OSError:
            pass
        return self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _key(rid):
    """A JSON id as a dict key (ids we send are ints)."""
    return rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None


class ExecError:
    """A cell's error: ename, evalue, traceback (a list of lines)."""

    def __init__(self, d):
        self.ename = str(d.get("ename", ""))
        self.evalue = str(d.get("evalue", ""))
        tb = d.get("traceback") or []
        self.traceback = [str(line) for line in tb] if isinstance(tb, list) else [str(tb)]

    def __str__(self):
        return "\n".join(self.traceback) if self.traceback else f"{self.ename}: {self.evalue}"

    def __repr__(self):
        return f"ExecError({self.ename!r}, {self.evalue!r})"


class Execution:
    """What one cell did (the exec reply, plus its streamed output)."""

    def __init__(self, reply, stdout="", stderr="", displays=()):
        self.reply = reply
        self.status = reply.get("status")
        self.execution_count = reply.get("execution_count")
        result = reply.get("result")
        self.result = result if isinstance(result, dict) else None
        outputs = reply.get("outputs")
        self.outputs = outputs if isinstance(outputs, list) else list(displays)
        err = reply.get("error")
        self.error = ExecError(err) if isinstance(err, dict) else None
        self.stdout = stdout
        self.stderr = stderr
        self.duration_ms = reply.get("duration_ms")
        self.verdict = reply.get("verdict")
        self.restarted = bool(reply.get("restarted", False))

    @property
    def text(self):
        """The last expression's text/plain, or None."""
        return self.result.get("text/plain") if self.result else None

    @property
    def ok(self):
        return self.status == "ok"

    def pngs(self):
        """The decoded bytes of every image/png output, in order."""
        return [base64.b64decode(o["image/png"]) for o in self.outputs
                if isinstance(o, dict) and isinstance(o.get("image/png"), str)]

    def __repr__(self):
        what = self.text if self.ok else (self.error and f"{self.error.ename}: {self.error.evalue}")
        return (f"<Execution {self.execution_count} {self.status} verdict={self.verdict}"
                f"{' restarted' if self.restarted else ''}: {what!r}>")


class Session:
    """One interpreter in a sandbox of its own.

    moat: the moat binary (ignored with server=); language: "python" or
    "bash"; timeout: the default timeout of a cell, in seconds (None: no
    limit); server: a Server to share; create_options: the create
    request's fields (memory_limit="256M", env={...}, binds=[{"src",
    "dst", "rw"}] or [(src, dst, rw)], allow_net=["host:port"],
    run_args=[...]).  reply_margin: how long past a cell's timeout a
    reply may take (the grace period, the restart of a killed
    interpreter) before the call gives up.
    """

    def __init__(self, moat="moat", language="python", timeout=None, server=None,
                 create_timeout=120, reply_margin=60, server_args=(), **create_options):
        self._own = server is None
        self.server = Server(moat, args=server_args) if server is None else server
        self.timeout = timeout
        self.reply_margin = reply_margin
        self.language = language
        self.closed = False
        binds = create_options.get("binds")
        if binds is not None:
            create_options["binds"] = [
                b if isinstance(b, dict) else
                {"src": b[0], "dst": b[1], "rw": bool(b[2]) if len(b) > 2 else False}
                for b in binds]
        try:
            reply = self.server.call("create", dict(create_options, language=language),
                                     wait=create_timeout)
        except BaseException:
            if self._own:
                self.server.kill()
            raise
        self.id = reply.get("session")
        self.started_ms = reply.get("started_ms")
        self.create_reply = reply

    def run(self, code, timeout=None, on_stream=None, on_display=None):
        """Run one cell; its Execution.  on_stream(name, text) and
        on_display(data) are called as the events come."""
        t = self.timeout if timeout is None else timeout
        out, err, displays = [], [], []

        def event(msg):
            kind = msg.get("event")
            if kind == "stream":
                text = msg.get("text", "")
                (err if msg.get("name") == "stderr" else out).append(text)
                if on_stream is not None:
                    on_stream(msg.get("name"), text)
            elif kind == "display":
                data = msg.get("data")
                displays.append(data)
                if on_display is not None:
                    on_display(data)

        wait = None if t is None else t + self.reply_margin
        reply = self.server.call("exec", {"session": self.id, "code": code, "timeout": t},
                                 wait=wait, on_event=event)
        return Execution(reply, "".join(out), "".join(err), displays)

    def upload(self, path, data, tar=False, timeout=120):
        """Write bytes (a str is UTF-8) to path in the sandbox (relative:
        from the session's starting directory); tar=True unpacks data, a
        tar archive, into the directory path.  The reply."""
        if isinstance(data, str):
            data = data.encode()
        return self.server.call("put_file", {"session": self.id, "path": path,
                                             "data": base64.b64encode(data).decode(),
                                             "format": "tar" if tar else None}, wait=timeout)

    def download(self, path, timeout=120):
        """(bytes, reply) of path in the sandbox; a directory comes as a tar
        (reply["format"] == "tar").  The bytes are checked against the
        reply's sha256."""
        import hashlib
        reply = self.server.call("get_file", {"session": self.id, "path": path}, wait=timeout)
        data = base64.b64decode(reply.get("data", ""))
        if reply.get("sha256") and hashlib.sha256(data).hexdigest() != reply["sha256"]:
            raise SessionError(f"get_file {path}: the data does not match its sha256", reply)
        return data, reply

    def list_files(self, path=".", timeout=60):
        """The entries of a directory in the sandbox: [{name, type, size, mtime}]."""
        return self.server.call("list_files", {"session": self.id, "path": path},
                                wait=timeout).get("entries", [])

    def interrupt(self):
        """Interrupt the running cell (its run() says `interrupted`)."""
        return self.server.call("interrupt", {"session": self.id}, wait=30)

    def close(self, timeout=60):
        """End the interpreter and its sandbox; the close reply."""
        if self.closed:
            return None
        self.closed = True
        try:
            return self.server.call("close", {"session": self.id}, wait=timeout)
        finally:
            if self._own:
                self.server.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.close()
        except SessionError:
            if exc[0] is None:
                raise
