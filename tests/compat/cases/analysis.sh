# analysis: the pandas analysis: stdout identical, artifacts in the bound dir
mkdir -p "$W/an.native" "$W/an.moat"
chmod 777 "$W/an.moat" # the sandbox may run as another uid than ours
(cd "$W" && timeout -k 5 "$CASE_TIMEOUT" $PY "$ROOT/examples/analysis.py" "$W/an.native") \
    </dev/null >"$W/analysis.native.out" 2>"$W/analysis.native.err"
echo $? >"$W/analysis.native.rc"
timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run --ro-bind examples /examples --bind "$W/an.moat" /out \
    -- $PY /examples/analysis.py /out \
    </dev/null >"$W/analysis.moat.out" 2>"$W/analysis.moat.err"
echo $? >"$W/analysis.moat.rc"
msg=$(compare analysis)
[ -z "$msg" ] && [ "$(cat "$W/analysis.native.rc")" != 0 ] && msg="native run failed"
if [ -z "$msg" ]; then
    for f in summary.csv monthly.csv revenue.png; do
        [ -s "$W/an.moat/$f" ] || msg="${msg:+$msg; }$f missing in the bound output dir"
    done
    [ -z "$msg" ] && [ "$(head -c 4 "$W/an.moat/revenue.png" | od -An -c | tr -d ' ')" != '211PNG' ] &&
        msg="revenue.png is not a PNG"
    for f in summary.csv monthly.csv; do
        [ -z "$msg" ] && ! cmp -s "$W/an.native/$f" "$W/an.moat/$f" &&
            msg="$f differs: $(excerpt "$W/an.native/$f" "$W/an.moat/$f")"
    done
fi
report "$msg"
