# moat's bash session driver (docs/sessions.md, "The driver's messages").
# Runs inside the sandbox as `python3 -c SOURCE` (so: one file, standard
# library only, no use of its own path): cells come in on stdin, one JSON
# object a line; messages go out on the original stdout, one JSON object a
# line.
#
# One bash lives from the first cell to the last, so variables, functions,
# the working directory and `set` options last between cells.  How:
#
# - bash runs interactive (`-i --noediting`, no rc files, no history, no
#   job control, empty prompts) in a session and process group of its own.
#   Interactive, because an interactive bash that gets SIGINT abandons the
#   command it runs (a loop, a list, a function) and goes back to reading
#   its input, as Ctrl-C at a terminal does; a non-interactive one would
#   either die of it or carry on with the rest of the cell.
# - Its stdin is a pipe from this driver, that carries only two lines of
#   ours per cell.  The cell's code goes to a file in a private directory,
#   which the first line reads and `eval`s in a group whose stdin is
#   /dev/null and whose fds 1 and 2 are copies of bash's own (8 and 9, kept
#   from the start, closed inside the group): bash restores 1 and 2 after
#   the group, so an `exec >file` lasts for its cell only, and nothing in
#   the cell can read our lines.  The first line prints a start marker
#   on fd 1 between the read and the eval.
# - The second line prints an end-of-cell marker with the cell's exit
#   status on fd 1 and on fd 2: a random token, new for each driver,
#   followed by `:N:STATUS\n` (`:N:S\n` for the start).  The threads that
#   read the two pipes cut the streams there, so the `done` message comes
#   after every byte the cell wrote.  The token is written as two arguments
#   of printf, and our lines run with stderr on /dev/null, so a cell under
#   `set -x` does not print it whole.
# - Interrupt: SIGINT to bash's process group, so to bash and to the
#   cell's foreground programs (background ones, `cmd &`, ignore SIGINT as
#   without job control they always do).  bash abandons the cell and runs
#   the marker line; its status is then 130 and the cell says
#   `interrupted`.  The SIGINT waits for the cell's start marker (bash,
#   idle, would drop it and then run the whole cell), and is sent again
#   every 0.25 s until the cell ends, as a user presses Ctrl-C again: one
#   that lands between a fork and the child's exec is taken by the child's
#   copy of bash's handler, and bash then carries on.  The marker line is
#   sent again too (a SIGINT that cuts it while bash runs it loses it); a
#   marker of a cell that already ended is dropped.  A cell that traps or
#   ignores SIGINT is not stopped: the session's grace period then kills
#   and restarts the sandbox.
# - A cell that ends bash (`exit`, `set -e`, a signal) ends this driver
#   with bash's status: the session process sees its sandbox end and
#   starts a fresh one, as for Python's own exit.
# - Output that arrives between cells (from a background job) is kept
#   (up to 1 MiB) and sent as the next cell's.
# - Interactive bash's own chatter on stderr is dropped: "[1] PID" when a
#   cell starts a background job, and "bash: [PID: N (255)] tcsetattr:
#   ..." each time a program dies of a signal (it tries to restore a
#   terminal that is not there).
# - Files are as for Python: `files` in `done` (what the cell changed
#   below the starting directory) and the `file` requests (put, get, list).
# - A failing cell is `error`, ename "BashError", evalue "exit status N",
#   and its traceback is the last lines of its stderr and that status.
import codecs
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import tempfile
import threading
import time


def _driver():
    proto_fd = os.dup(1)
    cmd_fd = os.dup(0)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)  # nothing of ours may print on the protocol channel
    os.close(null)
    send = _sender(proto_fd)  # drivers/files.py

    token = secrets.token_hex(16)
    mark = ("moat-end-" + token).encode()
    tail_re = re.compile(rb":(-?\d{1,18}):(\d{1,3}|S)\n")
    tail_max = 1 + 19 + 1 + 3 + 1
    INIT = -1  # the start-up round's cell number

    where = {"dir": None, "file": None}

    def write_cell(code):
        """The cell's code into our private file; False if none can be had
        (the code then travels on bash's stdin, quoted)."""
        for _ in range(2):
            try:
                if where["dir"] is None:
                    where["dir"] = tempfile.mkdtemp(prefix="bashcell-")
                    where["file"] = os.path.join(where["dir"], "cell")
                with open(where["file"], "w", encoding="utf-8",
                          errors="surrogateescape") as f:
                    f.write(code)
                return True
            except OSError:  # a cell removed it, or no writable directory
                where["dir"] = None
        return False

    env = dict(os.environ)
    env.pop("HISTFILE", None)
    env.pop("PROMPT_COMMAND", None)
    env.pop("BASH_ENV", None)
    env.pop("ENV", None)
    env["PS1"] = env["PS2"] = ""
    bash_r, bash_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    bash = subprocess.Popen(
        ["bash", "--noprofile", "--norc", "--noediting", "+m", "+H", "-i"],
        stdin=bash_r, stdout=out_w, stderr=err_w, env=env,
        start_new_session=True, close_fds=True)
    for fd in (bash_r, out_w, err_w):
        os.close(fd)
    bash_in_lock = threading.Lock()

    def to_bash(text):
        data = text.encode()
        with bash_in_lock:
            view = memoryview(data)
            while view:
                try:
                    k = os.write(bash_w, view)
                except InterruptedError:
                    continue
                except OSError:  # bash is gone: its waiter ends us
                    return
                view = view[k:]

    # state["n"]: the running cell (INIT for the start-up round), or None
    # between cells; is_open[name]: the running cell's stream not yet
    # ended; "started": bash has begun the cell's line (its start marker
    # came), so a SIGINT now stops the cell and not bash's reading.
    state = {"n": None, "interrupted": False, "started": False, "rc": 0}
    state_lock = threading.Lock()
    queued = set()  # cells received, not begun
    early = set()  # of those, the ones already interrupted
    is_open = {"stdout": False, "stderr": False}
    ended = {"stdout": threading.Event(), "stderr": threading.Event()}
    pending = {"stdout": [], "stderr": []}
    pending_size = {"stdout": 0, "stderr": 0}
    err_tail = []  # the running cell's stderr, for the error's traceback
    PENDING_MAX = 1 << 20

    def emit(name, text):
        """Send text of stream name for the running cell, or keep it."""
        if not text:
            return
        with state_lock:
            n = state["n"]
            if n is not None and is_open[name]:
                if n == INIT:
                    return  # start-up chatter of bash's
                if name == "stderr":
                    err_tail.append(text)
                    if len(err_tail) > 64:
                        del err_tail[:32]
                send({"ev": "stream", "n": n, "name": name, "text": text})
                return
            if pending_size[name] < PENDING_MAX:
                text = text[:PENDING_MAX - pending_size[name]]
                pending[name].append(text)
                pending_size[name] += len(text)

    def sigint():
        try:
            os.killpg(bash.pid, signal.SIGINT)
        except OSError:
            pass

    def marker(name, n, what):
        with state_lock:
            if state["n"] != n or not is_open[name]:
                return  # a stale marker (sent twice after an interrupt)
            if what == b"S":
                state["started"] = True
                if state["interrupted"]:
                    sigint()  # the interrupt came before the cell began
                return
            is_open[name] = False
            if name == "stdout":
                state["rc"] = int(what)
            ended[name].set()

    # Lines an interactive bash without a terminal writes on its own: a
    # job's number and pid when it starts one in the background, and a
    # complaint whenever a program dies of a signal (`yes | head`), as it
    # tries to restore a terminal's settings on its stderr (fd 255).
    chatter = re.compile(rb"(bash: \[\d+: \d+ \(-?\d+\)\] tc[gs]etattr: [^\n]*|\[\d+\] \d+)\n\Z")
    chatter_starts = (b"bash: [", b"[")

    def scrubber():
        """A filter of stderr's bytes that drops bash's chatter lines;
        a line that may be one is held until its newline."""
        st = {"hold": b"", "bol": True}

        def feed(data, final=False):
            data, st["hold"] = st["hold"] + data, b""
            out = []
            while data:
                nl = data.find(b"\n")
                if nl < 0:
                    if (st["bol"] and not final and len(data) < 4096
                            and any(p.startswith(data) or data.startswith(p)
                                    for p in chatter_starts)):
                        st["hold"] = data
                    else:
                        out.append(data)
                        st["bol"] = False
                    break
                line, data = data[:nl + 1], data[nl + 1:]
                if not (st["bol"] and chatter.match(line)):
                    out.append(line)
                st["bol"] = True
            if final:
                st["bol"] = True  # the next cell starts a line of its own
            return b"".join(out)
        return feed

    def reader(fd, name):
        dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        scrub = scrubber() if name == "stderr" else (lambda data, final=False: data)

        def out(data, final=False):
            emit(name, dec.decode(scrub(data, final), final=final))

        buf = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except InterruptedError:
                continue
            if not chunk:
                out(buf, final=True)
                return
            buf += chunk
            while True:
                i = buf.find(mark)
                if i < 0:
                    # keep back a tail that may be the start of the marker
                    keep = 0
                    for k in range(min(len(mark) - 1, len(buf)), 0, -1):
                        if mark.startswith(buf[-k:]):
                            keep = k
                            break
                    out(buf[:len(buf) - keep])
                    buf = buf[len(buf) - keep:]
                    break
                after = buf[i + len(mark):]
                m = tail_re.match(after)
                if m is None and len(after) < tail_max and b"\n" not in after:
                    out(buf[:i])
                    buf = buf[i:]  # the rest of the marker is on its way
                    break
                if m is None:  # the token, but not our line: plain text
                    out(buf[:i + len(mark)])
                    buf = after
                    continue
                out(buf[:i], final=m.group(2) != b"S")
                marker(name, int(m.group(1)), m.group(2))
                buf = after[m.end():]

    for fd, name in ((out_r, "stdout"), (err_r, "stderr")):
        threading.Thread(target=reader, args=(fd, name), daemon=True).start()

    def marker_line(n):
        # "$?" is the status of the line before: the cell's group.
        # Its own stderr is /dev/null, for a cell that left `set -x` on:
        # the stderr marker goes to fd 9, the same pipe as fd 2.
        return ("{{ \\builtin printf '%s%s:%d:%d\\n' moat-end- {t} {n} \"$?\"; "
                "\\builtin printf '%s%s:%d:%d\\n' moat-end- {t} {n} 0 >&9; "
                "\\builtin unset __moat_cell; }} 2>/dev/null\n").format(t=token, n=n)

    def finish(code):
        try:
            os.killpg(bash.pid, signal.SIGKILL)
        except OSError:
            pass
        if where["dir"]:
            try:
                os.unlink(where["file"])
            except OSError:
                pass
            try:
                os.rmdir(where["dir"])
            except OSError:
                pass
        os._exit(code)

    def waiter():
        rc = bash.wait()
        # let the readers forward what bash wrote last (a background job
        # that holds the pipes open must not keep us waiting)
        for ev in ended.values():
            ev.wait(0.2)
        with send.lock:  # no message half written when we go
            finish(rc if rc >= 0 else 128 - rc)

    threading.Thread(target=waiter, daemon=True).start()

    def run_cell(n, code):
        """Start cell n in bash; returns when both its streams have ended."""
        with state_lock:
            state.update(n=n, interrupted=False, started=False, rc=0)
            queued.discard(n)
            interrupted_early = n in early
            early.discard(n)
            del err_tail[:]
            for name in ("stdout", "stderr"):
                is_open[name] = True
                ended[name].clear()
                held, pending[name], pending_size[name] = pending[name], [], 0
                if n != INIT and held:
                    send({"ev": "stream", "n": n, "name": name, "text": "".join(held)})
        if n == INIT:
            line = ("\\builtin set +o history +H +m; "
                    "\\builtin unset HISTFILE MAILCHECK PROMPT_COMMAND; "
                    "PS1= PS2= PS0=; exec 8>&1 9>&2\n")
        else:
            # The cell, read from our file (or, if no file could be
            # written, quoted here), then the start marker, then the eval.
            # The marker comes after the read: a SIGINT waits for it, and
            # one that cut the read (a builtin with a redirection of its
            # own) would leave bash reading its commands from our file.
            start = ("{{ \\builtin printf '%s%s:%d:S\\n' moat-end- {t} {n}; }} 2>/dev/null; "
                     .format(t=token, n=n))
            if write_cell(code):
                line = ("{ { IFS= \\builtin read -r -d '' __moat_cell <%s; } 2>/dev/null; %s"
                        "\\builtin eval \"$__moat_cell\"; } </dev/null 1>&8 2>&9 8>&- 9>&-\n"
                        % (shlex.quote(where["file"]), start))
            else:
                line = ("{ %s\\builtin eval %s; } </dev/null 1>&8 2>&9 8>&- 9>&-\n"
                        % (start, shlex.quote(code)))
        to_bash(line + marker_line(n))
        if interrupted_early:
            interrupt(n)
        for ev in ended.values():
            ev.wait()
        with state_lock:
            state["n"] = None
            return state["rc"], state["interrupted"], "".join(err_tail)

    def interrupt(n):
        with state_lock:
            if state["n"] != n and n in queued:
                early.add(n)  # for a cell not begun yet: when it begins
                return
            if state["n"] != n or n == INIT or not is_open["stdout"]:
                return
            first = not state["interrupted"]
            state["interrupted"] = True
            if state["started"]:
                sigint()  # else when the cell's start marker comes
        if not first:
            return

        def again():
            # Until the cell ends: SIGINT again (one that lands between a
            # fork and the child's exec is taken by the child's copy of
            # bash's handler: the program then runs on, and bash, back at
            # its prompt, waits for it before the rest of our marker line
            # after its first printf), and
            # the marker line again (one that a SIGINT cut while bash was
            # reading it is lost; a second marker is dropped).
            while True:
                time.sleep(0.25)
                with state_lock:
                    if state["n"] != n or not (is_open["stdout"] or is_open["stderr"]):
                        return
                    if state["started"]:
                        sigint()
                to_bash(marker_line(n))

        threading.Thread(target=again, daemon=True).start()

    # Files: what a cell changed, and the file requests (drivers/files.py,
    # as the Python driver has them); our cell file's directory is not the
    # cell's.
    scan, changed, file_op = _file_ops(os.getcwd(), send, lambda d: d == where["dir"])

    cells = []
    cells_cv = threading.Condition()

    def control():
        for msg in _requests(cmd_fd):  # drivers/files.py
            if msg.get("op") == "exec":
                n = msg.get("n")
                if isinstance(n, int) and not isinstance(n, bool):
                    with state_lock:
                        queued.add(n)
                with cells_cv:
                    cells.append(msg)
                    cells_cv.notify()
            elif msg.get("op") == "file" and isinstance(msg.get("rid"), int):
                threading.Thread(target=file_op, args=(msg,), daemon=True).start()
            elif msg.get("op") == "interrupt":
                n = msg.get("n")
                if isinstance(n, int) and not isinstance(n, bool):
                    interrupt(n)
        finish(0)  # the session closed us

    threading.Thread(target=control, daemon=True).start()

    run_cell(INIT, "")  # bash is up and set up
    send({"ev": "ready"})
    while True:
        with cells_cv:
            while not cells:
                cells_cv.wait()
            msg = cells.pop(0)
        n, code = msg.get("n"), msg.get("code")
        if not isinstance(n, int) or isinstance(n, bool) or n == INIT or not isinstance(code, str):
            with state_lock:
                queued.discard(n) if isinstance(n, int) else None
                early.discard(n) if isinstance(n, int) else None
            continue
        before = scan()
        rc, interrupted, err = run_cell(n, code)
        if rc == 0:
            status, error = "ok", None
        else:
            tb = [line for line in err.splitlines() if line.strip()][-20:]
            tb = [line[:2000] for line in tb] + [f"exit status {rc}"]
            if interrupted:
                status = "interrupted"
                error = {"ename": "KeyboardInterrupt", "evalue": f"exit status {rc}",
                         "traceback": tb}
            else:
                status = "error"
                error = {"ename": "BashError", "evalue": f"exit status {rc}", "traceback": tb}
        send({"ev": "done", "n": n, "status": status, "result": None, "error": error,
              "files": changed(before, scan())})


_driver()
