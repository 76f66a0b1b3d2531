# Shared by the session drivers (docs/sessions.md): prepended to each
# of them when the Makefile builds them into the binary (a driver runs as
# `python3 -c SOURCE`, one text).  The session process's requests as they
# come; what a cell changed below the starting directory, and the
# session's put/get/list file requests.
import io
import json
import os


def _sender(fd):
    """send(obj): one message, one JSON line on fd, whole, ASCII (several
    threads send).  send.lock is held while a line is written."""
    import threading
    lock = threading.Lock()

    def send(obj):
        data = (json.dumps(obj, ensure_ascii=True) + "\n").encode()
        with lock:
            view = memoryview(data)
            while view:
                try:
                    k = os.write(fd, view)
                except InterruptedError:
                    continue
                view = view[k:]
    send.lock = lock
    return send


def _requests(fd):
    """Each request of the session process on fd (one JSON object a
    line); anything else is skipped.  Ends when the session closes us."""
    with os.fdopen(fd, "rb") as inp:
        for line in inp:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict):
                yield msg


def _file_ops(home, send, skip=lambda d: False):
    """(scan, changed, file_op) for the starting directory `home`; `send`
    writes a message; `skip(d)` leaves directory d out of the scans."""
    # put/get/list run on threads of their own: a running cell does not
    # hold them up.
    SCAN_MAX, FILES_MAX, HASH_BUDGET = 10000, 1000, 256 << 20

    def scan():
        """path -> (size, mtime_ns) of the regular files below home."""
        seen, stack = {}, [home]
        while stack and len(seen) < SCAN_MAX:
            d = stack.pop()
            if skip(d):
                continue
            try:
                it = os.scandir(d)
            except OSError:
                continue
            with it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        elif e.is_file(follow_symlinks=False):
                            st = e.stat(follow_symlinks=False)
                            seen[e.path] = (st.st_size, st.st_mtime_ns)
                    except OSError:
                        continue
                    if len(seen) >= SCAN_MAX:
                        break
        return seen

    def sha256_of(path, budget):
        import hashlib
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while budget[0] > 0:
                b = f.read(1 << 20)
                if not b:
                    return h.hexdigest()
                budget[0] -= len(b)
                h.update(b)
        return None  # past the budget: size only

    def changed(before, after):
        out, budget = [], [HASH_BUDGET]
        for path in sorted(after):
            if before.get(path) == after[path]:
                continue
            entry = {"path": path, "size": after[path][0]}
            try:
                digest = sha256_of(path, budget)
            except OSError:
                digest = None
            if digest:
                entry["sha256"] = digest
            out.append(entry)
            if len(out) >= FILES_MAX:
                break
        return out

    def resolve(path):
        return path if os.path.isabs(path) else os.path.join(home, path)

    def safe_member(m):
        """A member that stays below the directory it is extracted to."""
        parts = m.name.replace("\\", "/").split("/")
        if m.name.startswith("/") or ".." in parts:
            return False
        if m.issym() or m.islnk():
            target = m.linkname.replace("\\", "/")
            if target.startswith("/") or ".." in target.split("/"):
                return False
        return m.isfile() or m.isdir() or m.issym() or m.islnk()

    def file_op(msg):
        import base64
        rid, action = msg.get("rid"), msg.get("action")
        path = msg.get("path")
        try:
            if not isinstance(path, str) or not path:
                raise ValueError("a path is needed")
            path = resolve(path)
            if action == "put":
                data = base64.b64decode(msg.get("data") or "", validate=True)
                if msg.get("format") == "tar":
                    import tarfile
                    os.makedirs(path, exist_ok=True)
                    with tarfile.open(fileobj=io.BytesIO(data)) as t:
                        if msg.get("links") is False:  # a snapshot: files and dirs only
                            t.extractall(path, members=[m for m in t if safe_member(m) and
                                                        (m.isfile() or m.isdir())])
                        elif hasattr(tarfile, "data_filter"):
                            t.extractall(path, filter="data")
                        else:  # Python before 3.11.4: the same rule by hand
                            t.extractall(path, members=[m for m in t if safe_member(m)])
                else:
                    parent = os.path.dirname(path)
                    if parent:
                        os.makedirs(parent, exist_ok=True)
                    with open(path, "wb") as f:
                        f.write(data)
                reply = {"size": len(data)}
            elif action == "get":
                if os.path.isdir(path):
                    import tarfile
                    buf = io.BytesIO()
                    with tarfile.open(fileobj=buf, mode="w") as t:
                        t.add(path, arcname=".")
                    data, fmt = buf.getvalue(), "tar"
                else:
                    with open(path, "rb") as f:
                        data = f.read(msg.get("max") or (24 << 20) + 1)
                    fmt = "raw"
                if len(data) > (msg.get("max") or 24 << 20):
                    raise ValueError(f"{len(data)} bytes or more: past the message limit")
                import hashlib
                reply = {"data": base64.b64encode(data).decode(), "size": len(data),
                         "sha256": hashlib.sha256(data).hexdigest(), "format": fmt}
            elif action == "list":
                entries = []
                with os.scandir(path) as it:
                    for e in it:
                        st = e.stat(follow_symlinks=False)
                        kind = ("dir" if e.is_dir(follow_symlinks=False) else
                                "link" if e.is_symlink() else
                                "file" if e.is_file(follow_symlinks=False) else "other")
                        entries.append({"name": e.name, "type": kind, "size": st.st_size,
                                        "mtime": st.st_mtime})
                        if len(entries) >= FILES_MAX:
                            break
                reply = {"entries": sorted(entries, key=lambda x: x["name"])}
            else:
                raise ValueError(f"unknown file action {action!r}")
            reply.update(ev="file", rid=rid, ok=True)
        except Exception as e:  # the client's mistake or the file's: said, not fatal
            reply = {"ev": "file", "rid": rid, "ok": False, "error": f"{type(e).__name__}: {e}"}
        send(reply)

    return scan, changed, file_op
