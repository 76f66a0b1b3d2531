# disk-limit: --disk-limit: a disk fill stops with ENOSPC inside, the host keeps its
# space (the layers are a tmpfs in moat's own mount namespace)
msg=""
if [ "$(id -u)" != 0 ]; then
    report ""   # root only: moat refuses it otherwise (bad input)
else
    before=$(df -k --output=avail /tmp | tail -1)
    out=$(timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run --disk-limit 32M -- sh -c '
        dd if=/dev/zero of=/tmp/fill bs=1M count=200 2>&1 | grep -o "No space left on device" | head -1
        ls -l /tmp/fill | awk "{ print \$5 <= 33554432 }"
        dd if=/dev/zero of=/workspace/more bs=1M count=1 2>&1 | grep -o "No space left on device" | head -1
        rm /tmp/fill; echo after-rm >/workspace/ok && cat /workspace/ok' </dev/null 2>&1)
    after=$(df -k --output=avail /tmp | tail -1)
    want=$(printf 'No space left on device\n1\nNo space left on device\nafter-rm')
    [ "$out" = "$want" ] || msg="$msg; inside: $(tr '\n' '|' <<<"$out")"
    # other processes write too: only a drop near the 200 MB asked for counts
    [ $((before - after)) -lt 102400 ] || msg="$msg; the host lost $(( (before - after) / 1024 )) MB of /tmp"
    report "${msg#; }"
fi
