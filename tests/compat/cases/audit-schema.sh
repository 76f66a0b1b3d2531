# audit-schema: the audit log: real records against docs/audit.md
log=$W/audit.jsonl
timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run --audit-log "$log" -- sh -c '
    cat /etc/shadow; ls /root; kill -0 1; mknod /tmp/d c 1 3; /root/x
    python3 -c "
import socket
for f in (lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW),
          lambda: socket.create_connection((\"192.0.2.1\", 80), 2),
          lambda: socket.getaddrinfo(\"pypi.org\", 443),
          lambda: socket.create_connection((\"127.0.0.1\", 1))):
    try:
        f()
    except OSError:
        pass"; true' </dev/null >/dev/null 2>&1
if out=$($PY "$ROOT/tests/compat/audit_schema.py" "$ROOT/docs/audit.md" "$log" \
    fs.outside-view net.family signal.outside-sandbox fs.device-node \
    net.deny-by-default net.dns net.private-loopback 2>&1); then
    # Rule 10: denials carry the caller's stack, innermost frame the
    # libc wrapper of the call itself.  A DNS question's record is read
    # while the resolver waits for the answer: in its poll, or still in
    # the sendmmsg that sent it (on a busy machine).
    out=$($PY -c '
import json, sys
bad = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    want = {"connect": ["connect"], "openat": ["open"], "execve": ["execve"],
            "dns": ["poll", "sendmmsg", "sendto"]}
    w = want.get(r["syscall"])
    if r["decision"] in ("deny", "kill") or r["syscall"] == "dns":
        st = r.get("stack") or [""]
        if w and not any(x in st[0] for x in w):
            bad.append("%s %s: stack %s" % (r["syscall"], r.get("rule"), st[:2]))
print("; ".join(bad))' "$log")
    report "$out"
else
    report "$out"
fi
