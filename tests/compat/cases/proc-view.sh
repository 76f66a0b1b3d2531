# proc-view: the synthetic /proc and the host name: moat's own view, checked
# Natively these differ by design (host pids, host name), so the moat run's
# output is checked against what docs/filesystem.md promises.
msg=""
pv=$W/proc-view
mkdir -p "$pv" && echo data >"$pv/f" && cp /bin/cat "$pv/cat" && chmod -R a+rX "$pv"
pvrun() { timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run "$@" </dev/null 2>"$W/proc-view.err"; }
# The first process: its parent (moat) and its tracer (moat) are not shown.
out=$(pvrun -- cat /proc/self/status)
grep -q $'^PPid:\t0$' <<<"$out" || msg="$msg; first process: $(grep PPid <<<"$out")"
grep -q $'^TracerPid:\t0$' <<<"$out" || msg="$msg; $(grep TracerPid <<<"$out")"
# ls /proc and ps: the sandbox's processes and nothing else.
# (No pipelines while they look: every stage would be listed too.)
out=$(pvrun -- sh -c 'sleep 5 & s=$!
    ls /proc >/tmp/ls; ps -eo pid=,ppid=,comm= >/tmp/ps; ps aux >/tmp/aux; kill $s
    echo "pids $$ $s"; grep -E "^[0-9]+$" /tmp/ls | tr "\n" " "; echo
    tr -s " " </tmp/ps | sed "s/^ //"; wc -l </tmp/aux')
set -- $(sed -n 1p <<<"$out")
sh_pid=$2 sleep_pid=$3
listed=$(sed -n 2p <<<"$out")
[ "$(wc -w <<<"$listed")" = 3 ] && grep -qw "$sh_pid" <<<"$listed" && grep -qw "$sleep_pid" <<<"$listed" ||
    msg="$msg; ls /proc shows [$listed], want sh $sh_pid, sleep $sleep_pid and ls"
grep -qxE "$sh_pid 0 (sh|dash)" <<<"$out" || msg="$msg; ps: no '$sh_pid 0 sh' in: $(sed -n '3,5p' <<<"$out" | tr '\n' '|')"
grep -qx "$sleep_pid $sh_pid sleep" <<<"$out" || msg="$msg; ps: no '$sleep_pid $sh_pid sleep'"
[ "$(sed -n 6p <<<"$out")" = 4 ] || msg="$msg; ps aux: $(sed -n 6p <<<"$out") lines, want 4 (header, sh, sleep, ps)"
# Links and maps name virtual paths, never the host's.
out=$(pvrun --ro-bind "$pv" /data -- sh -c 'exec 3</data/f; echo x >/tmp/x; exec 4</tmp/x
    readlink /proc/self/exe /proc/$$/fd/3 /proc/$$/fd/4; /data/cat /proc/self/maps | grep -c " /data/cat$"
    cat /proc/self/maps /proc/self/mountinfo /proc/$$/environ | tr "\0" "\n" | grep -c '"$W"'
    cat /proc/self/cgroup')
want=$(printf '/usr/bin/readlink\n/data/f\n/tmp/x\n5\n0\n0::/')
[ "$out" = "$want" ] || msg="$msg; links/maps/cgroup: got $(tr '\n' '|' <<<"$out"), want $(tr '\n' '|' <<<"$want")"
# The host name: default moat, --hostname, the same everywhere.
out=$(pvrun -- sh -c 'uname -n; hostname; cat /proc/sys/kernel/hostname' | tr '\n' ' ')
[ "$out" = "moat moat moat " ] || msg="$msg; default host name: $out"
out=$(pvrun --hostname box-1.example -- sh -c 'uname -n; hostname; cat /proc/sys/kernel/hostname; python3 -c "import socket; print(socket.gethostname())"' | tr '\n' ' ')
[ "$out" = "box-1.example box-1.example box-1.example box-1.example " ] || msg="$msg; --hostname box-1.example: $out"
report "${msg#; }"
