# tests/compat/lib.sh — what the compat cases (tests/compat/cases/NAME.sh)
# use, sourced by run.sh.  A case runs in a subshell of its own with
# CASE=NAME; its verdict (report, not_run) ends that subshell, and its exit
# status tells run.sh which verdict it was.

report() { # [failure message...]: PASS, or FAIL with the message; ends the case
    if [ $# -eq 0 ] || [ -z "$*" ]; then
        echo "PASS $CASE"
        exit 10
    fi
    echo "FAIL $CASE: $*"
    exit 11
}

not_run() { # the case does not apply here: no line, counted neither way
    exit 12
}

excerpt() { # a one-line diff excerpt of two files
    diff "$1" "$2" 2>&1 | grep '^[<>]' | head -6 | cut -c1-160 | tr '\n' '|' | sed 's/|$//'
}

# run_native NAME SCRIPT [ARGS...]: sh -c SCRIPT with $1 = a fresh dir.
run_native() {
    local name=$1 script=$2
    shift 2
    local d=$W/$name.native.dir
    mkdir -p "$d" && chmod 777 "$d"
    (cd "$d" && timeout -k 5 "$CASE_TIMEOUT" "${PREFIX[@]}" sh -c "$script" sh "$d" "$@") \
        </dev/null >"$W/$name.native.out" 2>"$W/$name.native.err"
    echo $? >"$W/$name.native.rc"
}

# run_moat NAME SCRIPT [ARGS...]: the same under moat, $1 = /tmp.
run_moat() {
    local name=$1 script=$2
    shift 2
    timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run "${MOAT_ARGS[@]}" -- sh -c "$script" sh /tmp "$@" \
        </dev/null >"$W/$name.moat.out" 2>"$W/$name.moat.err"
    echo $? >"$W/$name.moat.rc"
}

# compare NAME: stdout and exit code equal; prints what differs, or nothing.
compare() {
    local name=$1 msg="" nrc mrc
    nrc=$(cat "$W/$name.native.rc")
    mrc=$(cat "$W/$name.moat.rc")
    [ "$nrc" = "$mrc" ] || msg="exit $mrc under moat, $nrc native"
    cmp -s "$W/$name.native.out" "$W/$name.moat.out" ||
        msg="${msg:+$msg; }stdout differs (< native, > moat): $(excerpt "$W/$name.native.out" "$W/$name.moat.out")"
    [ -n "$msg" ] && [ -s "$W/$name.moat.err" ] &&
        msg="$msg; moat stderr: $(head -c 300 "$W/$name.moat.err" | tr '\n' '|')"
    printf '%s' "$msg"
}

# case_ SCRIPT: run both, compare, report (cases that expect a failing
# exit code check it themselves).
case_() {
    local name=$CASE script=$1
    run_native "$name" "$script"
    run_moat "$name" "$script"
    local msg
    msg=$(compare "$name")
    if [ -z "$msg" ] && [ "$(cat "$W/$name.native.rc")" != 0 ]; then
        msg="native run failed (exit $(cat "$W/$name.native.rc")): $(head -c 200 "$W/$name.native.err" | tr '\n' '|')"
    fi
    report "$msg"
}

# exitcode_case EXPECTED-RC CMD...: moat's own exit code for CMD, and
# bash's for the same CMD natively.
exitcode_case() {
    local name=$CASE expect=$1
    shift
    (cd "$W" && timeout -k 5 "$CASE_TIMEOUT" "$@"; exit $?) </dev/null >/dev/null 2>&1
    local nrc=$?
    timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run -- "$@" </dev/null >"$W/$name.moat.out" 2>"$W/$name.moat.err"
    local mrc=$?
    local msg=""
    [ "$nrc" = "$expect" ] || msg="native exit $nrc, expected $expect"
    if [ "$mrc" != "$expect" ]; then
        msg="${msg:+$msg; }exit $mrc under moat, expected $expect"
        [ -s "$W/$name.moat.err" ] && msg="$msg; moat stderr: $(head -c 200 "$W/$name.moat.err" | tr '\n' '|')"
    fi
    report "$msg"
}

# The sandbox's servers (TCP and UDP on 127.0.0.1:0) are not reachable from
# the host while they run: with moat as root (the sandbox's own network
# namespace) and, where the suite runs as root, with moat as 65534 (the
# helper's).  Under moat only.
net_private() { # [PREFIX...]
    local name=$CASE
    msg=""
    np=$W/$name
    mkdir -p "$np" && chmod 777 "$np"
    "$@" "$MOAT" run --bind "$np" /out --ro-bind "$ROOT/tests/compat" /c -- python3 /c/net_hold.py /out \
        </dev/null >"$W/np.out" 2>"$W/np.err" &
    mp=$!
    for _ in $(seq 200); do [ -s "$np/ports" ] && break; sleep 0.05; done
    if read -r tp up <"$np/ports" 2>/dev/null; then
        host=$($PY -c '
import socket, sys
tp, up = int(sys.argv[1]), int(sys.argv[2])
for fam, h in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    s = socket.socket(fam)
    s.settimeout(2)
    print("tcp", h, s.connect_ex((h, tp)))
    u = socket.socket(fam, socket.SOCK_DGRAM)
    u.sendto(b"from the host", (h, up))
' "$tp" "$up" 2>&1)
        sleep 0.3
        touch "$np/stop"
        wait "$mp"
        grep -q '^reached from outside: \[\]$' "$W/np.out" ||
            msg="the sandbox's servers were reached from the host: $(head -c 300 "$W/np.out")"
        case $host in *"tcp 127.0.0.1 0"* | *"tcp ::1 0"*)
            msg="${msg:+$msg; }a host connect to the sandbox's port succeeded ($(tr '\n' '|' <<<"$host")); if the host itself serves that port, rerun" ;;
        esac
    else
        kill "$mp" 2>/dev/null
        wait "$mp"
        msg="the sandbox's server never wrote its ports: $(head -c 300 "$W/np.err")"
    fi
    report "$msg"
}

# limits and the run report (issue 5, docs/limits.md).
# Each verdict with a real offender, checked in the report; under moat only.
# Twice: as moat chooses (--cgroup auto: the kernel's cgroups where moat may
# make them) and with the fallback forced (--cgroup off: moat's own
# accounting), each pass naming its enforcement in every report.
cg_left() { # name moat-pid: no cgroup of that moat's (moat-PID-RANDOM) is left (others run beside it)
    local left
    left=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "moat-$2-*" 2>/dev/null |
        head -3 | tr '\n' ' ')
    [ -z "$left" ] || msg="$msg; $1: cgroups left behind: $left"
}
limits_pass() { # cgroup-mode
    local cg=$1 enf pieces
    msg=""
    # What this pass must report: cgroups as root where the host has them
    # (moat --cgroup required says whether it has), the fallback otherwise.
    enf=rlimits+polling
    if [ "$cg" = auto ] && [ "$(id -u)" = 0 ] &&
        "$MOAT" run --cgroup required --memory-limit 64M --pids-limit 64 -- true </dev/null >/dev/null 2>&1; then
        enf=cgroup
    elif [ "$cg" = auto ]; then
        echo "  ($CASE: no cgroup moat may use here: this pass checks the fallback)"
    fi
    lim() { # name "expectations" moat-options... -- cmd...
        local name=$1 exp=$2 out
        shift 2
        # moat's pid names its cgroups (moat-PID): exec keeps the shell's
        timeout -k 5 60 sh -c 'echo $$ >"$0"; exec "$@"' "$W/$name.pid" \
            "$MOAT" run --cgroup "$cg" --report "$W/$name.report" "$@" </dev/null >"$W/$name.out" 2>"$W/$name.err"
        echo $? >"$W/$name.rc"
        # shellcheck disable=SC2086
        out=$($PY "$ROOT/tests/compat/report_check.py" "$W/$name.report" enforcement=$enf $exp 2>&1)
        [ -z "$out" ] || msg="$msg; $name: $out"
        cg_left "$name" "$(cat "$W/$name.pid")"
    }
    lim to "status=TO limit=time time>=1.0 time<=1.1 killed=true moat-max-rss>=500 moat-max-rss<=65536" \
        --time-limit 1 -- python3 -c 'while True: pass'
    lim tw "status=TW limit=wall-time time-wall>=1.0 time-wall<=1.5" \
        --wall-time-limit 1 -- python3 -c 'import time; time.sleep(100)'
    # With the kernel enforcing, the memory cgroup's peak never passes the
    # limit (moat's sampling lets a fast allocation overshoot a little).
    pieces=""
    [ "$enf" = cgroup ] && pieces="memory-peak<=131072"
    before=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
    lim ml "status=ML limit=memory exitsig=9 $pieces" --memory-limit 128M -- python3 -c '
b = bytearray()
while len(b) < 256 * 2**20:
    b += b"x" * 2**20' moat-ml-marker
    # The memory comes back when the offender is gone: no process of it may
    # be left, and the host's available memory must be about where it was
    # (other programs move that figure too: a few looks, a wide margin).
    left=$(pgrep -fc moat-ml-marker)
    [ "$left" = 0 ] || msg="$msg; ml: $left processes of the offender left"
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        after=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
        [ $((before - after)) -lt 204800 ] && break
        sleep 0.3
    done
    [ $((before - after)) -lt 204800 ] || msg="$msg; ml: the host has $(( (before - after) / 1024 )) MB less available"
    # Memory of several processes together: four of 48 MB each pass 128M
    # only as a whole.
    lim ml-many "status=ML limit=memory" --memory-limit 128M -- python3 -c '
import os, time
for _ in range(4):
    if os.fork() == 0:
        b = bytearray(48 * 2**20)
        for i in range(0, len(b), 4096):
            b[i] = 1
        time.sleep(30)
        os._exit(0)
time.sleep(30)'
    # An enclosing cgroup's limit (256M) met below the sandbox's own (1G):
    # ML, saying it was not the sandbox's limit (v1 memory hierarchy only)
    mp=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
    if [ "$enf" = cgroup ] && [ -n "$mp" ] && [ -d "/sys/fs/cgroup/memory$mp" ]; then
        outer=/sys/fs/cgroup/memory${mp%/}/moat-test-outer-$$
        mkdir "$outer" && echo 256M >"$outer/memory.limit_in_bytes"
        sh -c 'echo $$ >"$0/cgroup.procs"; exec "$@"' "$outer" "$MOAT" run --report "$W/outer.report" \
            --memory-limit 1G -- python3 -c 'b = bytearray(400 * 2**20); b[::4096] = b"x" * len(b[::4096])' \
            </dev/null >/dev/null 2>&1
        grep -q '"status":"ML","message":"out of memory below the sandbox.s limit of 1073741824' "$W/outer.report" ||
            msg="$msg; outer: $(head -c 300 "$W/outer.report")"
        sleep 0.2
        rmdir "$outer"
    fi
    # ... and not memory counted twice: 256 MB shared by nine forked
    # processes (2.3 GB resident on paper) is well within 1G
    lim ml-shared "status=OK exitcode=0" --memory-limit 1G -- python3 -c '
import os, time
b = bytearray(256 * 2**20)
for i in range(0, len(b), 4096):
    b[i] = 1
kids = []
for _ in range(8):
    k = os.fork()
    if k == 0:
        time.sleep(1)
        os._exit(0)
    kids.append(k)
for k in kids:
    os.waitpid(k, 0)'
    t0=$(date +%s)
    lim pl "status=PL limit=processes" --pids-limit 40 -- sh -c 'b() { b & b & wait; }; b; : moat-forkbomb-marker'
    [ $(( $(date +%s) - t0 )) -lt 20 ] || msg="$msg; pl: the fork bomb took $(( $(date +%s) - t0 )) s to stop"
    sleep 0.2
    left=$(pgrep -fc moat-forkbomb-marker)
    [ "$left" = 0 ] || msg="$msg; pl: $left processes of the fork bomb left"
    # Threads count as the kernel's pids controller counts them: a process
    # that starts 50 threads passes a limit of 20.
    lim pl-threads "status=PL limit=processes" --pids-limit 20 -- python3 -c '
import threading, time
ts = [threading.Thread(target=time.sleep, args=(30,)) for _ in range(50)]
for t in ts:
    t.start()'
    # a daemon that double-forks and leaves its session: killed with the rest
    lim daemon "status=TW" --wall-time-limit 1 -- sh -c \
        '(setsid sh -c "sleep 100; : moat-daemon-marker" &) ; sleep 100'
    sleep 0.2
    left=$(pgrep -fc moat-daemon-marker)
    [ "$left" = 0 ] || msg="$msg; daemon: $left daemon processes left"
    lim ol "status=OL limit=output" --output-limit 10K -- python3 -c '
while True:
    print("x" * 99)'
    head -c 9900 "$W/ol.out" | tr -d 'x\n' | grep -q . && msg="$msg; ol: the first bytes were not kept"
    n=$(wc -c <"$W/ol.out")
    [ "$n" -ge 10240 ] && [ "$n" -le 10400 ] || msg="$msg; ol: $n bytes came out, want 10240 and the marker"
    grep -q '^\[moat: output limit of 10240 bytes reached; the rest was cut\]$' "$W/ol.out" ||
        msg="$msg; ol: no marker where the output was cut"
    # --json: both streams and the report as one object on stdout
    out=$(timeout -k 5 60 "$MOAT" run --cgroup "$cg" --json -- sh -c 'echo out; echo "err é" >&2; exit 3' </dev/null 2>"$W/json.err")
    j=$($PY -c '
import json, sys
r = json.loads(sys.stdin.read())
ok = r["stdout"] == "out\n" and r["stderr"] == "err \u00e9\n" and r["report"]["status"] == "RE" \
    and r["report"]["exitcode"] == 3 and r["stdout-truncated"] is False \
    and r["report"]["enforcement"] == sys.argv[1]
print("" if ok else "got %r" % {k: r.get(k) for k in ("stdout", "stderr", "report")})' "$enf" <<<"$out" 2>&1)
    [ -z "$j" ] || msg="$msg; json: $j"
    # the report's files: what the pandas analysis wrote, with sizes and
    # xxh128 as xxh128sum computes them on the host; nothing else but the
    # font caches the libraries keep in $HOME
    rf=$W/report-files-$cg
    mkdir -p "$rf" && chmod 777 "$rf"
    timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run --cgroup "$cg" --report "$W/files.report" --ro-bind "$ROOT/examples" /examples \
        --bind "$rf" /out -- python3 /examples/analysis.py /out </dev/null >/dev/null 2>&1
    j=$( (cd "$rf" && xxh128sum summary.csv monthly.csv revenue.png) | $PY -c '
import json, os, sys
want = {"/out/" + l.split()[1]: l.split()[0] for l in sys.stdin}
r = json.load(open(sys.argv[1]))
got = {f["path"]: f for f in r["files"]}
bad = []
for p, h in want.items():
    f = got.get(p)
    size = os.path.getsize(os.path.join(sys.argv[2], os.path.basename(p)))
    if not f or f["xxh128"] != h or f["size"] != size:
        bad.append("%s: %r, want size %d xxh128 %s" % (p, f, size, h))
others = [p for p in got if p not in want and not p.startswith("/workspace/.cache/")]
if others:
    bad.append("files not written by the analysis: %s" % others[:5])
if r["status"] != "OK":
    bad.append("status %s: %s" % (r["status"], r["message"]))
print("; ".join(bad))' "$W/files.report" "$rf" 2>&1)
    [ -z "$j" ] || msg="$msg; files: $j"
    if [ "$(id -u)" = 0 ]; then # --disk-limit is a tmpfs: root only
        lim dl "status=DL limit=disk exitcode=1" --disk-limit 8M -- sh -c \
            'dd if=/dev/zero of=/tmp/fill bs=1M count=32 2>/dev/null || exit 1'
    fi
    # moat signalled at any moment of a short run (setup, the loop, the
    # end), with a signal it forwards or one that ends it: nothing of its
    # cgroups is left
    # (a signal moat does not forward ends it with its scratch left: that
    # goes to a directory of the test's, and /dev/shm is a private tmpfs)
    if [ "$enf" = cgroup ]; then
        mkdir -p "$W/sig-scratch"
        for d in 0.001 0.002 0.004 0.006 0.01 0.02 0.04 0.08; do
            for sig in TERM USR1 ALRM; do
                MOAT_SCRATCH=$W/sig-scratch unshare -m sh -c 'mount -t tmpfs moat-sig /dev/shm || exit 99
                    exec "$@"' sh "$MOAT" run -- sleep 0.05 </dev/null >/dev/null 2>&1 &
                p=$!
                sleep "$d"
                kill -"$sig" "$p" 2>/dev/null
                wait "$p" 2>/dev/null
                cg_left "SIG$sig after ${d}s" "$p"
            done
        done
        rm -rf "$W/sig-scratch"
    fi
    # A terminal signal the caller ignores (as `cmd &` in a script ignores
    # SIGINT) stays ignored: neither forwarded nor counted toward a kill
    out=$( (trap '' INT; "$MOAT" run --cgroup "$cg" -- sh -c 'sleep 0.5; echo survived' </dev/null 2>&1 &
        p=$!; sleep 0.2; kill -INT "$p"; kill -INT "$p"; wait "$p"; echo "rc=$?") )
    [ "$out" = "survived
rc=0" ] || msg="$msg; ignored SIGINT: $out"
    # What a moat killed with SIGKILL leaves (an empty directory of moat's
    # name, a minute old) the next one removes; a fresh one, an old one
    # that holds a process, one a live moat holds locked (its setup
    # stalled before its first process moved in), and another name, it
    # leaves alone.
    if [ "$enf" = cgroup ]; then
        v2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)$(sed -n 's/^0:://p' /proc/self/cgroup)
        v2=${v2%/}
        st="$v2/moat-1-5e1e0001" fr="$v2/moat-1-5e1e0002" bz="$v2/moat-1-5e1e0003" lk="$v2/moat-1-5e1e0004"
        fo="$v2/moat-ci-pool-$$"
        mkdir "$st" "$fr" "$bz" "$lk" "$fo" 2>/dev/null
        sleep 30 &
        sleeper=$!
        echo "$sleeper" >"$bz/cgroup.procs"
        touch -d '2 minutes ago' "$st" "$bz" "$lk" "$fo"
        flock -o -s "$lk" sleep 30 &
        locker=$!
        sleep 0.2
    fi
    lim ok "status=OK exitcode=0 killed=false processes=1" -- true
    if [ "$enf" = cgroup ]; then
        [ ! -d "$st" ] || msg="$msg; stale: a killed moat's old empty cgroup was not removed"
        [ -d "$fr" ] || msg="$msg; stale: a fresh cgroup was removed"
        [ -d "$bz" ] || msg="$msg; stale: a cgroup holding a process was removed"
        [ -d "$lk" ] || msg="$msg; stale: a cgroup a live moat holds was removed"
        [ -d "$fo" ] || msg="$msg; stale: a cgroup of another name was removed"
        kill "$sleeper" "$locker"
        wait "$sleeper" "$locker" 2>/dev/null
        rmdir "$st" "$fr" "$bz" "$lk" "$fo" 2>/dev/null
    fi
    lim re "status=RE exitcode=3" -- sh -c 'exit 3'
    lim sg "status=SG exitsig=11" -- sh -c 'kill -SEGV $$'
    [ "$(cat "$W/to.rc")" = 143 ] || msg="$msg; to: moat exited $(cat "$W/to.rc"), want 143 (SIGTERM)"
    [ "$(cat "$W/re.rc")" = 3 ] || msg="$msg; re: moat exited $(cat "$W/re.rc"), want 3"
    report "${msg#; }"
}
