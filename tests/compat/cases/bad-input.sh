# bad-input: one line, exit 125, nothing left behind
# Other moat runs on this host (other checkouts' suites) come and go in /tmp
# and /dev/shm meanwhile: the scratch goes to a directory of this case
# (MOAT_SCRATCH), and, where a mount namespace can be made (root), each run
# gets a /dev/shm of its own, looked at when it is done.  Otherwise only
# skeletons that appeared count.
msg=""
bad_scratch=$W/bad-scratch
mkdir -p "$bad_scratch"
private_shm=0
[ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null && private_shm=1
before=$(ls -d /dev/shm/moat-skel-* 2>/dev/null | sort)
check125() { # description args...
    local what=$1
    shift
    if [ "$private_shm" = 1 ]; then
        MOAT_SCRATCH=$bad_scratch unshare -m sh -c 'mount -t tmpfs moat-bad /dev/shm || exit 99
            "$@"; rc=$?; ls -A /dev/shm >"$0"; exit $rc' "$W/bad.shm" "$MOAT" "$@" \
            </dev/null >"$W/bad.out" 2>"$W/bad.err"
    else
        MOAT_SCRATCH=$bad_scratch "$MOAT" "$@" </dev/null >"$W/bad.out" 2>"$W/bad.err"
    fi
    local rc=$? lines
    lines=$(wc -l <"$W/bad.err")
    [ "$rc" = 125 ] || msg="$msg; $what: exit $rc, want 125"
    [ "$lines" = 1 ] || msg="$msg; $what: $lines lines on stderr, want 1"
    grep -q '^moat: ' "$W/bad.err" || msg="$msg; $what: stderr does not start with moat:"
    [ "$private_shm" = 0 ] || [ ! -s "$W/bad.shm" ] ||
        msg="$msg; $what: left in /dev/shm: $(tr '\n' ' ' <"$W/bad.shm")"
    [ -z "$(ls -A "$bad_scratch")" ] || msg="$msg; $what: scratch left behind: $(ls -A "$bad_scratch" | tr '\n' ' ')"
}
check125 "unknown flag" run --bogus -- true
check125 "missing source" run --bind /nonexistent-moat-src /x -- true
check125 "relative destination" run --ro-bind /usr usr -- true
check125 "no command" run --tmpfs /x
check125 "bad uid" run --uid abc -- true
check125 "bad hostname" run --hostname 'a b' -- true
check125 "long hostname" run --hostname "$(printf '%065d' 0)" -- true
check125 "bad chdir" run --chdir /nonexistent-in-sandbox -- true
check125 "bad disk limit" run --disk-limit 12Q -- true
check125 "bad tmpfs size" run --tmpfs /x:0 -- true
check125 "persist without parent" run --persist /nonexistent-moat-parent/layer -- true
check125 "persist into a user directory" run --persist "$W" -- true
check125 "disk limit with persist" run --disk-limit 1M --persist "$W/never-made" -- true
check125 "bad allow-net rule" run --allow-net 'a host!' -- true
check125 "allow-net port 0" run --allow-net 10.0.0.1:0 -- true
check125 "allow-net prefix" run --allow-net 10.0.0.0/40 -- true
check125 "allow-net unresolvable" run --allow-net no-such-host.invalid:443 -- true
check125 "missing net policy" run --net-policy /nonexistent-moat-policy -- true
printf '10.0.0.0/8\n10.0.0.1:99999\n' >"$W/bad.policy"
check125 "bad net policy line" run --net-policy "$W/bad.policy" -- true
check125 "bad time limit" run --time-limit x -- true
check125 "zero memory limit" run --memory-limit 0 -- true
check125 "zero pids limit" run --pids-limit 0 -- true
check125 "bad output limit" run --output-limit -5 -- true
check125 "bad cgroup mode" run --cgroup maybe -- true
# too few open files for moat itself: one line, 125 (not a hang, not
# EMFILE inside); with room above the soft limit moat takes it, and the
# program still gets the caller's soft limit
(ulimit -n 34 && exec "$MOAT" run -- true) </dev/null >"$W/bad.out" 2>"$W/bad.err"
rc=$?
[ "$rc" = 125 ] && [ "$(wc -l <"$W/bad.err")" = 1 ] && grep -q '^moat: ulimit -n is 34' "$W/bad.err" ||
    msg="$msg; ulimit -n 34: exit $rc, stderr $(head -c 300 "$W/bad.err")"
out=$( (ulimit -S -n 40 && ulimit -H -n 4096 && exec "$MOAT" run -- sh -c 'ulimit -S -n; ulimit -H -n') </dev/null 2>&1 | tr '\n' ' ')
[ "$out" = "40 4096 " ] || msg="$msg; ulimit -S -n 40: the program saw '$out', want '40 4096 '"
# a user moat may not make cgroups for, who requires them: one line,
# 125, nothing made (as root the same run must work where it can)
if [ "$(id -u)" = 0 ]; then
    sh -c 'echo $$ >"$0"; exec setpriv --reuid 65534 --regid 65534 --clear-groups "$@"' "$W/bad.pid" \
        "$MOAT" run --cgroup required -- true </dev/null >"$W/bad.out" 2>"$W/bad.err"
    rc=$?
    [ "$rc" = 125 ] && [ "$(wc -l <"$W/bad.err")" = 1 ] && grep -q '^moat: --cgroup required' "$W/bad.err" ||
        msg="$msg; cgroup required without one: exit $rc, stderr $(head -c 300 "$W/bad.err")"
    cg_left "cgroup required without one" "$(cat "$W/bad.pid")"
    # an open-files limit above the hard one, which only
    # CAP_SYS_RESOURCE may raise: said, not replaced by another
    (ulimit -Hn 20000 && exec setpriv --reuid 65534 --regid 65534 --clear-groups "$MOAT" run \
        --open-files-limit 30000 -- true) </dev/null >"$W/bad.out" 2>"$W/bad.err"
    rc=$?
    [ "$rc" = 125 ] && [ "$(wc -l <"$W/bad.err")" = 1 ] && grep -q '^moat: --open-files-limit 30000 is above' "$W/bad.err" ||
        msg="$msg; open-files-limit above the hard limit: exit $rc, stderr $(head -c 300 "$W/bad.err")"
fi
check125 "unknown command" frobnicate
if [ "$private_shm" = 0 ]; then
    after=$(ls -d /dev/shm/moat-skel-* 2>/dev/null | sort)
    left=$(comm -13 <(echo "$before") <(echo "$after") | head -3 | tr '\n' ' ')
    [ -z "$left" ] || msg="$msg; skeleton left behind: $left"
fi
report "${msg#; }"
