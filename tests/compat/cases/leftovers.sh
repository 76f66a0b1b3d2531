# leftovers: a run leaves no scratch directory and no skeleton behind.
# moat makes /tmp/moat-ID (MOAT_SCRATCH/moat-ID) and /dev/shm/moat-skel-*
# for each run and must remove both however the run ends, but by SIGKILL
# (issue 18: a later moat is to sweep those).  Each way below runs with
# its scratch in a directory of its own and /dev/shm a tmpfs of its own
# mount namespace, so that the moats of others on this machine do not
# count, and must leave both empty.  Under moat only.
d=$W/leftovers msg=""
mkdir -p "$d"
unshare -m true 2>/dev/null || not_run
# left NAME CMD...: run CMD (in sh -c, $MOAT and $PY at hand) with a
# private scratch and /dev/shm; what it left there becomes a failure.
left() {
    local name=$1 out
    shift
    rm -rf "$d/scratch" && mkdir -p "$d/scratch" && chmod 1777 "$d/scratch"
    out=$(MOAT_SCRATCH=$d/scratch MOAT=$MOAT PY=$PY D=$d timeout -k 5 60 unshare -m sh -c '
        mount -t tmpfs moat-leftovers /dev/shm || { echo "no private /dev/shm"; exit; }
        (eval "$1") </dev/null >/dev/null 2>&1
        ls -A "$MOAT_SCRATCH" /dev/shm | grep "^moat-" | tr "\n" " "' sh "$*")
    [ -z "$out" ] || msg="${msg:+$msg; }$name: left $out"
}
left ok '"$MOAT" run -- true'
left exit-3 '"$MOAT" run -- sh -c "echo x >/tmp/f; exit 3"'
left missing '"$MOAT" run -- /nonexistent'
left chdir '"$MOAT" run --chdir /nonexistent -- true'
left setup '"$MOAT" run --bind "$D" /lib64/x -- true'
left quota-refused '"$MOAT" run --tmpfs /data:8M --tmpfs /lib64/x:8M -- true'
left quota-twice '"$MOAT" run --tmpfs /data:8M --tmpfs /data:8M -- true'
# moat not root (no DAC override): a directory its sandbox made unreadable
left unreadable 'setpriv --reuid=65534 --regid=65534 --clear-groups -- "$MOAT" run -- \
    sh -c "mkdir -p /tmp/l/m /workspace/n; chmod 0 /tmp/l/m /tmp/l /workspace/n"'
# ... and one it made read-only around a file (its entries cannot go
# until it is opened up), and a tree deeper than the fd-by-fd removal goes
left readonly 'setpriv --reuid=65534 --regid=65534 --clear-groups -- "$MOAT" run -- \
    sh -c "mkdir -p /tmp/r/s && echo x >/tmp/r/s/f && chmod 0500 /tmp/r/s /tmp/r"'
left deep '"$MOAT" run -- sh -c "cd /tmp && for i in \$(seq 100); do mkdir d && cd d || exit; done; echo x >f"'
left wall '"$MOAT" run --wall-time-limit 1 -- sleep 10'
left sigterm '"$MOAT" run -- sleep 10 & p=$!; sleep 0.5; kill -TERM $p; sleep 0.5; kill -TERM $p; wait $p'
left disk-limit '"$MOAT" run --disk-limit 16M --tmpfs /data:8M -- sh -c "echo x >/data/f"'
# An audit log whose reader does not read blocks the loop: the wall-time
# limit still ends the run by its verdict, with its teardown.
left audit-fifo 'mkfifo "$D/fifo" && exec 9<>"$D/fifo" && "$MOAT" run --audit-log "$D/fifo" \
    --wall-time-limit 1 -- "$PY" -c "
import ctypes
libc = ctypes.CDLL(None)
while True:
    libc.unshare(0x00020000)"; rm -f "$D/fifo"'
# Without a teardown: the watchdog's last resort (the loop stuck for good,
# as in the watchdog case) and a signal moat does not forward, which ends it
left give-up 'MOAT_TEST_STALL=uname:hard "$MOAT" run --wall-time-limit 1 -- sh -c "uname; sleep 30"'
for sig in USR1 ALRM; do
    left "$sig" '"$MOAT" run -- sh -c "echo x >/tmp/f; sleep 10" & p=$!; sleep 0.5; kill -'"$sig"' $p; wait $p'
done
left USR1-cgroup-off '"$MOAT" run --cgroup off -- sleep 10 & p=$!; sleep 0.5; kill -USR1 $p; wait $p'
left USR1-disk-limit '"$MOAT" run --disk-limit 16M --tmpfs /data:8M -- sleep 10 & p=$!; sleep 0.5; kill -USR1 $p; wait $p'
# --lifeline: the writer of the pipe goes (a parent that started moat run
# and died), and the sandbox ends, signals ignored or not, cleaned up.
left lifeline 'sleep 0.5 | "$MOAT" run --lifeline 3 3<&0 -- sh -c "trap \"\" TERM HUP INT; sleep 20"'
t0=$(date +%s)
sleep 1 | timeout 30 "$MOAT" run --lifeline 3 3<&0 -- sh -c 'trap "" TERM HUP INT; sleep 20' \
    >/dev/null 2>&1
rc=$? t=$(($(date +%s) - t0))
[ "$rc" = 137 ] && [ "$t" -lt 10 ] ||
    msg="${msg:+$msg; }lifeline: the sandbox outlived its lifeline (exit $rc after ${t}s; 137 at once expected)"
"$MOAT" run --lifeline 1 -- true >/dev/null 2>&1
[ $? = 125 ] || msg="${msg:+$msg; }lifeline: fd 1 (not a pipe's read end) was taken"
rm -rf "$d"
report "$msg"
