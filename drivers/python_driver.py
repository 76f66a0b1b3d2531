# moat's Python session driver (docs/sessions.md), after drivers/files.py
# (the Makefile builds the two into one text).  Runs inside the
# sandbox as `python3 -c SOURCE`: cells come in on stdin, one JSON object a
# line; messages go out on the original stdout, one JSON object a line.
# The cell's own fds 1 and 2 are pipes this driver reads and forwards as
# `stream` messages, and its stdin is /dev/null.  Standard library only.
# Imports are few and light: each is paid by every session's start (under
# moat, a module is several supervised calls); ast, traceback, linecache
# and base64 wait for the first cell that needs them.
import builtins
import codecs
import io
import json
import os
import queue
import signal
import sys
import threading
import types


def _driver():
    proto_fd = os.dup(1)
    cmd_fd = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    send = _sender(proto_fd)  # drivers/files.py

    # Output that comes between cells (a thread's, a background
    # process's) is held and sent as the next cell's: a stream is between
    # cells from its end marker to the next cell's start ("ended").
    state = {"n": 0, "marker": b"", "running": False, "late": [],
             "ended": {1: True, 2: True}}
    state_lock = threading.Lock()
    drained = {1: threading.Event(), 2: threading.Event()}

    # fds 1 and 2: pipes whose reader threads forward what they get.
    def reader(fd_r, fd, name):
        dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        buf = b""
        while True:
            if not buf:
                try:
                    chunk = os.read(fd_r, 65536)
                except InterruptedError:
                    continue
                if not chunk:
                    return
                buf = chunk
            with state_lock:
                marker, n, ended = state["marker"], state["n"], state["ended"][fd]
            if ended:
                text = dec.decode(buf)
                buf = b""
                with state_lock:
                    if state["ended"][fd]:  # still between cells
                        state["late"].append((name, text))
                        continue
                    n = state["n"]  # a cell started meanwhile: its output
                if text:
                    send({"ev": "stream", "n": n, "name": name, "text": text})
                continue
            found = marker in buf
            if found:
                i = buf.index(marker)
                part, buf = buf[:i], buf[i + len(marker):]
            else:
                # keep back a tail that may be the start of the marker
                part, tail = buf, b""
                for k in range(min(len(marker) - 1, len(buf)), 0, -1):
                    if marker.startswith(buf[-k:]):
                        part, tail = buf[:-k], buf[-k:]
                        break
                buf = b""
            text = dec.decode(part, final=found)
            if text:
                send({"ev": "stream", "n": n, "name": name, "text": text})
            if found:
                with state_lock:
                    state["ended"][fd] = True
                drained[fd].set()
            elif tail:
                more = os.read(fd_r, 65536)  # the marker's rest, or more output
                if not more:
                    return
                buf = tail + more

    writer = {}  # our own copies of the pipes' write ends
    for fd, name in ((1, "stdout"), (2, "stderr")):
        r, w = os.pipe()
        os.dup2(w, fd)
        writer[fd] = w
        threading.Thread(target=reader, args=(r, fd, name), daemon=True).start()
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", write_through=True)

    # The cells' own __main__: the driver's names are not theirs.
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    ns = main.__dict__
    sys.argv = [""]
    if not sys.path or sys.path[0] != "":
        sys.path.insert(0, "")

    def bundle(obj):
        """Jupyter's representations of obj: MIME type -> string."""
        import base64
        data = {"text/plain": repr(obj)}
        for meth, mime, binary in (("_repr_html_", "text/html", False),
                                   ("_repr_svg_", "image/svg+xml", False),
                                   ("_repr_png_", "image/png", True),
                                   ("_repr_markdown_", "text/markdown", False),
                                   ("_repr_latex_", "text/latex", False),
                                   ("_repr_json_", "application/json", False)):
            f = getattr(obj, meth, None)
            if not callable(f):
                continue
            try:
                v = f()
            except Exception:
                continue
            if v is None:
                continue
            if binary and isinstance(v, bytes):
                data[mime] = base64.b64encode(v).decode()
            elif mime == "application/json" and not isinstance(v, str):
                try:
                    data[mime] = json.dumps(v)
                except (TypeError, ValueError):
                    pass
            elif isinstance(v, str):
                data[mime] = v
        return data

    def display(*objs):
        for obj in objs:
            send({"ev": "display", "n": state["n"], "data": bundle(obj)})

    ns["display"] = display

    def show_figures(*args, **kwargs):
        """Every open matplotlib figure as image/png, then closed."""
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        import base64
        for num in plt.get_fignums():
            fig = plt.figure(num)
            out = io.BytesIO()
            try:
                fig.savefig(out, format="png", bbox_inches="tight")
            except Exception as e:  # a broken figure is the cell's error, not ours
                print(f"moat: figure {num} could not be drawn: {e!r}", file=sys.stderr)
                continue
            send({"ev": "display", "n": state["n"],
                  "data": {"image/png": base64.b64encode(out.getvalue()).decode(),
                           "text/plain": repr(fig)}})
        plt.close("all")

    # matplotlib draws with Agg, and plt.show() shows the figures as
    # display outputs: pyplot's show is replaced as it is imported (an
    # import hook; importing matplotlib here would cost every session).
    class ShowLoader:
        def __init__(self, inner):
            self.inner = inner

        def create_module(self, spec):
            return self.inner.create_module(spec)

        def exec_module(self, module):
            self.inner.exec_module(module)
            module.show = show_figures

    class PyplotHook:
        def find_spec(self, name, path, target=None):
            if name != "matplotlib.pyplot":
                return None
            spec = None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
            if spec is not None and spec.loader is not None:
                spec.loader = ShowLoader(spec.loader)
            return spec

    sys.meta_path.insert(0, PyplotHook())
    os.environ["MPLBACKEND"] = "Agg"
    os.environ.setdefault("MPLCONFIGDIR", "/tmp/.matplotlib")

    def run_cell(n, code):
        """(status, result, error) of one cell."""
        import ast
        import linecache
        name = f"<cell {n}>"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        try:
            tree = ast.parse(code, name, "exec")
        except SyntaxError as e:
            return "error", None, error_of(e, skip=0)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        try:
            exec(compile(tree, name, "exec"), ns)
            value = eval(compile(last, name, "eval"), ns) if last else None
        except KeyboardInterrupt as e:
            return "interrupted", None, error_of(e, skip=1)
        except BaseException as e:  # SystemExit too: the session lives on
            return "error", None, error_of(e, skip=1)
        if value is None:
            return "ok", None, None
        ns["_"] = value
        try:
            return "ok", bundle(value), None
        except BaseException as e:  # a __repr__ that fails is the cell's error
            return "error", None, error_of(e, skip=0)

    def error_of(e, skip):
        import traceback
        tb = e.__traceback__
        for _ in range(skip):  # our own frame
            if tb is not None:
                tb = tb.tb_next
        lines = traceback.format_exception(type(e), e, tb)
        return {"ename": type(e).__name__, "evalue": str(e),
                "traceback": [line.rstrip("\n") for line in lines][:1000]}

    scan, changed, file_op = _file_ops(os.getcwd(), send)  # drivers/files.py

    cells = queue.Queue()
    main_ident = threading.get_ident()

    def control():
        for msg in _requests(cmd_fd):  # drivers/files.py
            if msg.get("op") == "exec":
                cells.put(msg)
            elif msg.get("op") == "file" and isinstance(msg.get("rid"), int):
                threading.Thread(target=file_op, args=(msg,), daemon=True).start()
            elif msg.get("op") == "interrupt" and isinstance(msg.get("n"), int):
                with state_lock:
                    if state["running"] and state["n"] == msg["n"]:
                        signal.pthread_kill(main_ident, signal.SIGINT)
                    elif msg["n"] > state["n"] or not state["running"]:
                        state["early"] = msg["n"]  # its cell has not started yet
        os._exit(0)  # the session closed us

    threading.Thread(target=control, daemon=True).start()
    send({"ev": "ready"})
    while True:
        msg = cells.get()
        n, code = msg.get("n"), msg.get("code")
        if not isinstance(n, int) or not isinstance(code, str):
            continue
        for fd, ev in drained.items():
            ev.clear()
            os.dup2(writer[fd], fd)  # whatever the last cell made of it
        before = scan()  # before an interrupt can come: it is the cell's
        status, result, error = "interrupted", None, None
        try:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            with state_lock:
                state.update(n=n, running=True, ended={1: False, 2: False},
                             marker=b"\0moat-end-" + os.urandom(16).hex().encode() + b"\0")
                late, state["late"] = state["late"], []
                early = state.pop("early", None) == n
            for name, text in late:
                send({"ev": "stream", "n": n, "name": name, "text": text})
            if early:  # interrupted before it began
                raise KeyboardInterrupt
            status, result, error = run_cell(n, code)
        except KeyboardInterrupt as e:  # just before or after the cell itself
            status, result, error = "interrupted", None, error_of(e, skip=0)
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a late one is dropped
        with state_lock:
            state["running"] = False
        try:
            show_figures()
        except Exception as e:
            print(f"moat: figures could not be shown: {e!r}", file=sys.stderr)
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        for fd in (1, 2):
            os.write(writer[fd], state["marker"])
        for ev in drained.values():
            ev.wait(5)
        send({"ev": "done", "n": n, "status": status, "result": result, "error": error,
              "files": changed(before, scan())})


_driver()
