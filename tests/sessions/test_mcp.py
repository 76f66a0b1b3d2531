#!/usr/bin/python3
"""`moat mcp` as a scripted MCP client sees it (standard library only).

    MOAT=./moat python3 tests/sessions/test_mcp.py

initialize -> tools/list -> run_code twice with the state kept -> a plot
as image content that decodes to a PNG -> upload and download a file ->
reset_session loses the state -> errors as JSON-RPC errors.  Prints a
PASS/FAIL line per check; exits 1 if any failed."""
import base64
import json
import os
import subprocess
import sys
import threading

MOAT = os.path.abspath(os.environ.get("MOAT", "./moat"))
failed = []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failed.append(name)


class Client:
    def __init__(self):
        self.p = subprocess.Popen([MOAT, "mcp", "--idle-timeout", "0"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        self.n = 0

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def recv(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("moat mcp ended")
        return json.loads(line)

    def call(self, method, params=None):
        self.n += 1
        msg = {"jsonrpc": "2.0", "id": self.n, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(json.dumps(msg))
        r = self.recv()
        if r.get("id") != self.n:
            raise RuntimeError(f"reply to {r.get('id')}, asked {self.n}")
        return r

    def tool(self, name, **args):
        r = self.call("tools/call", {"name": name, "arguments": args})
        return r["result"]


def text_of(result):
    return "".join(c.get("text", "") for c in result["content"] if c["type"] == "text")


def main():
    # The whole run is bounded: a stuck server fails the test, not the suite.
    timer = threading.Timer(120, lambda: (print("FAIL mcp: timed out"), os._exit(1)))
    timer.daemon = True
    timer.start()
    c = Client()
    r = c.call("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "1"}})
    res = r.get("result", {})
    check("initialize: version and tools capability",
          res.get("protocolVersion") == "2025-03-26" and "tools" in res.get("capabilities", {}),
          r)
    c.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    tools = {t["name"]: t for t in c.call("tools/list")["result"]["tools"]}
    check("tools/list: the five tools with schemas",
          set(tools) == {"run_code", "upload_file", "download_file", "list_files", "reset_session"}
          and all(t["inputSchema"]["type"] == "object" for t in tools.values()), tools.keys())
    r1 = c.tool("run_code", code="x = 20 + 1\nprint('made x')")
    r2 = c.tool("run_code", code="x * 2")
    check("run_code: output, then state kept across calls",
          "made x" in text_of(r1) and "42" in text_of(r2) and not r2["isError"], (r1, r2))
    r = c.tool("run_code", code="import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('t')")
    imgs = [x for x in r["content"] if x["type"] == "image"]
    png = base64.b64decode(imgs[0]["data"]) if imgs else b""
    check("run_code: a figure comes back as image content, a PNG",
          len(imgs) == 1 and imgs[0]["mimeType"] == "image/png" and png[:8] == b"\x89PNG\r\n\x1a\n",
          r["content"][:1])
    r = c.tool("run_code", code="{}['missing']")
    check("run_code: an error is isError with the traceback",
          r["isError"] and "KeyError" in text_of(r) and "Traceback" in text_of(r), r)
    r = c.tool("run_code", code="while True: pass", timeout=1)
    r2 = c.tool("run_code", code="x")
    check("run_code: a timeout interrupts, the state survives",
          r["isError"] and "timeout" in text_of(r) and "21" in text_of(r2), (r, r2))
    c.tool("upload_file", path="notes/in.txt", content="h\u00e9llo\n")
    r = c.tool("download_file", path="notes/in.txt")
    res = [x for x in r["content"] if x["type"] == "resource"]
    check("upload_file then download_file: the same text back",
          res and res[0]["resource"].get("text") == "h\u00e9llo\n", r)
    r = c.tool("list_files", path="notes")
    check("list_files: the uploaded file is listed", "in.txt" in text_of(r), r)
    c.tool("reset_session")
    r = c.tool("run_code", code="x")
    check("reset_session: the state is gone", r["isError"] and "NameError" in text_of(r), r)
    c.send("{not json")
    r = c.recv()
    check("a line that is not JSON: a parse error", r.get("error", {}).get("code") == -32700, r)
    r = c.call("no/such/method")
    check("an unknown method: method not found", r.get("error", {}).get("code") == -32601, r)
    c.p.stdin.close()
    c.p.wait(timeout=30)
    check("moat mcp ends with its stdin", c.p.returncode == 0, c.p.returncode)
    sys.exit(1 if failed else 0)


main()
