# watchdog: a stuck supervisor still ends the run.
# The watchdog (docs/security.md, class 2): with the loop stuck in a call
# (MOAT_TEST_STALL makes moat wait in the handler of the first uname on a
# pipe no one writes), --wall-time-limit 2 still ends the run in 3 s — with
# the run's own verdict when the call can be interrupted (TW), and at the
# last resort (":hard": the interrupt blocked, as an uninterruptible wait)
# by ending moat with one line and exit 125 — and SIGTERM to moat is acted
# on in a second.  Under moat only.
msg=""
wd=$W/watchdog
mkdir -p "$wd"
for mode in uname uname:hard; do
    t0=$(date +%s%N)
    MOAT_TEST_STALL=$mode timeout -k 5 20 "$MOAT" run --wall-time-limit 2 --report "$wd/r.json" -- \
        sh -c 'uname >/dev/null; sleep 30' </dev/null >/dev/null 2>"$wd/err"
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$ms" -le 3000 ] || msg="${msg:+$msg; }$mode: moat took ${ms} ms with --wall-time-limit 2"
    if [ "$mode" = uname ]; then
        grep -q '"status":"TW"' "$wd/r.json" 2>/dev/null || msg="${msg:+$msg; }$mode: no TW verdict (exit $rc)"
    else
        [ "$rc" = 125 ] && grep -q 'moat: the supervisor was stuck' "$wd/err" ||
            msg="${msg:+$msg; }$mode: exit $rc, not 125 with its line: $(head -c 200 "$wd/err")"
    fi
    rm -f "$wd/r.json"
done
t0=$(date +%s%N)
MOAT_TEST_STALL=uname:hard "$MOAT" run -- sh -c 'uname >/dev/null; sleep 30' </dev/null >/dev/null 2>"$wd/err" &
mp=$!
sleep 1
kill -TERM "$mp"
for _ in $(seq 40); do kill -0 "$mp" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$mp" 2>/dev/null; then
    kill -KILL "$mp"
    msg="${msg:+$msg; }SIGTERM to a stuck moat not acted on within 4 s"
fi
wait "$mp" 2>/dev/null
report "$msg"
