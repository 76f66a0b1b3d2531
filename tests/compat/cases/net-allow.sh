# net-allow: --allow-net to a host web server, and nothing else.
# --allow-net 127.0.0.1:PORT to a host web server: urllib inside gets the
# page; the server on the neighbouring port is not reached; an outside
# address is refused at once, recorded and summed up on stderr.
msg=""
na=$W/net-allow
mkdir -p "$na/www" && echo "page from the host" >"$na/www/index.html"
pids=()
for k in 1 2; do
    $PY -c '
import functools, http.server, os, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
h.log_message = lambda *a: None
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()' "$na/www" "$na/port$k" </dev/null >/dev/null 2>&1 &
    pids+=($!)
done
for _ in $(seq 200); do [ -s "$na/port1" ] && [ -s "$na/port2" ] && break; sleep 0.05; done
p1=$(cat "$na/port1" 2>/dev/null) p2=$(cat "$na/port2" 2>/dev/null)
out=$(timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run --audit-log "$na/audit.jsonl" --allow-net "127.0.0.1:$p1" -- \
    python3 -c '
import socket, sys, time, urllib.request
p1, p2 = sys.argv[1], sys.argv[2]
print(urllib.request.urlopen("http://127.0.0.1:%s/" % p1, timeout=5).read().decode().strip())
try:
    urllib.request.urlopen("http://127.0.0.1:%s/" % p2, timeout=5)
    print("neighbour reached")
except OSError as e:
    print("neighbour:", getattr(e, "reason", e))
t = time.time()
try:
    socket.create_connection(("192.0.2.1", 80), timeout=5)
except OSError as e:
    print("outside:", e, round(time.time() - t) == 0)
' "$p1" "$p2" 2>"$na/err")
kill "${pids[@]}" 2>/dev/null
want_out="page from the host
neighbour: [Errno 111] Connection refused
outside: [Errno 101] Network is unreachable True"
[ "$out" = "$want_out" ] || msg="got $(tr '\n' '|' <<<"$out"), want $(tr '\n' '|' <<<"$want_out")"
grep -q "\"port\":$p1,.*\"rule\":\"net.allow\"" "$na/audit.jsonl" || msg="${msg:+$msg; }no net.allow record for port $p1"
grep -q '"syscall":"net-summary","loopback":"netns"' "$na/audit.jsonl" ||
    [ "$(id -u)" != 0 ] || msg="${msg:+$msg; }no net-summary naming the netns loopback"
grep -q '^moat:   192.0.2.1:80 (1 time)$' "$na/err" || msg="${msg:+$msg; }stderr does not sum up the refusal: $(tr '\n' '|' <"$na/err" | head -c 300)"
report "$msg"
