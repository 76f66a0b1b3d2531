# net-local-nonroot: net-local's servers and clients with moat run as 65534.
# Without root moat's private loopback is a helper's user and network
# namespace (docs/network.md): the same output with moat run as 65534.
# As root only, and after net-local: its native output is the reference.
[ ${#AS_SANDBOX_UID[@]} -gt 0 ] && [ -s "$W/net-local.native.out" ] || not_run
"${AS_SANDBOX_UID[@]}" "$MOAT" run --ro-bind "$ROOT/tests/compat" /c -- python3 /c/net_local.py \
    </dev/null >"$W/net-local-nonroot.moat.out" 2>"$W/net-local-nonroot.moat.err"
rc=$?
msg=""
[ "$rc" = 0 ] || msg="exit $rc: $(head -c 300 "$W/net-local-nonroot.moat.err" | tr '\n' '|')"
cmp -s "$W/net-local.native.out" "$W/net-local-nonroot.moat.out" ||
    msg="${msg:+$msg; }stdout differs: $(excerpt "$W/net-local.native.out" "$W/net-local-nonroot.moat.out")"
[ -s "$W/net-local-nonroot.moat.err" ] && msg="${msg:+$msg; }stderr: $(head -c 300 "$W/net-local-nonroot.moat.err" | tr '\n' '|')"
report "$msg"
