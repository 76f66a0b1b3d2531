#!/usr/bin/env bash
# Compatibility: real programs, each run natively and under moat, outputs
# (stdout and exit code) compared.  One line per case, `PASS name` or
# `FAIL name: what differs`, then `N passed, M failed`; exit 1 if any failed.
#
#     tests/compat/run.sh [CASE...]        (from anywhere; MOAT=path overrides ./moat)
#
# Every case is one shell script run twice: natively with $1 = a fresh
# scratch directory, and under `moat run` with $1 = /tmp (the sandbox's
# private /tmp).  Scripts never print $1, so the outputs can be compared
# byte for byte.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
MOAT=${MOAT:-./moat}
PY=/usr/bin/python3
CASE_TIMEOUT=${CASE_TIMEOUT:-180}

# The same environment natively as in the sandbox: a plain PATH (the host's
# may name directories outside the sandbox's view), an empty HOME, C locale.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C.UTF-8 TERM=dumb
unset LC_ALL LC_CTYPE LC_MESSAGES PYTHONPATH PYTHONHOME MPLCONFIGDIR GIT_DIR GIT_WORK_TREE

W=$(mktemp -d "${TMPDIR:-/tmp}/moat-compat.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
chmod 755 "$W"
mkdir -p "$W/home" && chmod 777 "$W/home"
export HOME=$W/home

# When moat runs as root the sandbox runs as 65534: native runs that read
# the host filesystem (find, tar) then use that uid too, so both sides see
# exactly what an unprivileged user sees.
AS_SANDBOX_UID=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    AS_SANDBOX_UID=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
fi

pass=0
fail=0
only=("$@")

want() { # is case $1 selected?
    [ ${#only[@]} -eq 0 ] && return 0
    local c
    for c in "${only[@]}"; do [ "$c" = "$1" ] && return 0; done
    return 1
}

report() { # name [failure message...]
    local name=$1
    shift
    if [ $# -eq 0 ] || [ -z "$*" ]; then
        echo "PASS $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name: $*"
        fail=$((fail + 1))
    fi
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

# case NAME SCRIPT: run both, compare, report (cases that expect a failing
# exit code check it themselves).
case_() {
    local name=$1 script=$2
    want "$name" || return 0
    run_native "$name" "$script"
    run_moat "$name" "$script"
    local msg
    msg=$(compare "$name")
    if [ -z "$msg" ] && [ "$(cat "$W/$name.native.rc")" != 0 ]; then
        msg="native run failed (exit $(cat "$W/$name.native.rc")): $(head -c 200 "$W/$name.native.err" | tr '\n' '|')"
    fi
    report "$name" "$msg"
}

if [ ! -x "$MOAT" ]; then
    echo "compat: $MOAT not found or not executable (run make first)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

PREFIX=()
MOAT_ARGS=()

# --- the pandas analysis: stdout identical, artifacts in the bound dir -----
if want analysis; then
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
    report analysis "$msg"
fi

# --- shell pipelines: many fork/execs ---------------------------------------
case_ pipeline 'for i in $(seq 50); do echo $i | sed s/1/x/ | tr a-z A-Z; done | sort | md5sum
seq 200 | while read n; do expr $n \* 3; done | awk '"'"'{ s += $1 } END { print s }'"'"'
printf "%s\n" c b a | sort -r | head -2 | tail -1
ls / >/dev/null && echo ls-ok'

# --- gcc: a C file written in /tmp, compiled there, the binary run from there
case_ gcc 'cd "$1" || exit 90
cat > hello.c <<"EOF"
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    unsigned long h = 5381; int primes = 0;
    for (int n = 2; n < 20000; n++) {
        int p = 1;
        for (int d = 2; d * d <= n; d++) if (n % d == 0) { p = 0; break; }
        if (p) { primes++; h = h * 33 + n; }
    }
    printf("argc=%d arg1=%s primes=%d hash=%lu\n", argc, argc > 1 ? argv[1] : "-", primes, h);
    return argc > 2 ? 7 : 0;
}
EOF
gcc -O2 -Wall -o hello hello.c || exit 91
./hello one
"$1/hello" two
"$1/hello" three four; echo "rc=$?"
gcc -c -o obj.o hello.c && gcc -o hello2 obj.o && ./hello2 linked'

# --- shebang scripts written in /tmp, run by path ---------------------------
case_ shebang 'cd "$1" || exit 90
printf "#!/bin/sh\necho \"sh: \$# [\$1] [\$2] \$(basename \"\$0\")\"\n" > s.sh
printf "#!/usr/bin/env python3\nimport os, sys\nprint(\"py:\", sys.executable, os.path.basename(sys.argv[0]), sys.argv[1:])\nprint(open(sys.argv[0]).readline().strip())\n" > p.py
chmod +x s.sh p.py
"$1/s.sh" a "b c"
./s.sh
"$1/p.py" x y
./p.py'

# --- git: init, add, commit in /tmp -----------------------------------------
case_ git 'cd "$1" && mkdir repo && cd repo || exit 90
g() { git -c user.name=Moat -c user.email=moat@example.invalid -c init.defaultBranch=main "$@"; }
g init -q || exit 91
echo hello > a.txt && mkdir sub && echo world > sub/b.txt
g add a.txt sub && g commit -qm "first" || exit 92
echo more >> a.txt && g commit -qam "second" || exit 93
g rm -q sub/b.txt && g commit -qm "third" || exit 94
g log --oneline | wc -l
g rev-list --count HEAD
g ls-files
g status --porcelain | wc -l
g show HEAD~1:a.txt
g cat-file -p HEAD^{tree}'

# --- find over a big read-only tree: same counts as native ------------------
PREFIX=("${AS_SANDBOX_UID[@]}")
case_ find-usr-lib 'find /usr/lib | wc -l; find /usr/lib -type l | wc -l; find /usr/lib -type d | wc -l'

# --- tar of /usr/include: the same archive bytes ----------------------------
# Strict on purpose: names, sizes, modes, mtimes, owners (uid and the names
# looked up in /etc/passwd and /etc/group) and the directory order must all
# be what the host gives.  A difference is a real difference in the view.
case_ tar-usr-include 'tar c /usr/include 2>/dev/null | md5sum'
PREFIX=()

# --- exit codes --------------------------------------------------------------
# direct: moat's own exit code for CMD, and bash's for the same CMD natively.
exitcode_case() { # name expected-rc cmd...
    local name=$1 expect=$2
    shift 2
    want "$name" || return 0
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
    report "$name" "$msg"
}
exitcode_case exit-3 3 sh -c 'exit 3'
exitcode_case exit-sigterm 143 sh -c 'kill -TERM $$'
exitcode_case exit-missing 127 no-such-command-moat-compat
exitcode_case exit-noexec 126 /usr/include/stdio.h
# the same seen from a shell inside the sandbox
case_ exit-in-shell 'sh -c "exit 3"; echo "exit=$?"
sh -c "kill -TERM \$\$"; echo "term=$?"
no-such-command-moat-compat 2>/dev/null; echo "missing=$?"
/usr/include/stdio.h 2>/dev/null; echo "usr-noexec=$?"
printf "echo hi\n" > "$1/plain.sh"; "$1/plain.sh" 2>/dev/null; echo "tmp-noexec=$?"
chmod +x "$1/plain.sh"; "$1/plain.sh"; echo "tmp-exec=$?"
/tmp-missing-moat/x 2>/dev/null; echo "path-missing=$?"'

# --- signals: handlers, job control stops, kill of a child -----------------
case_ signals 'trap "echo got USR1" USR1; kill -USR1 $$
sleep 5 & p=$!
kill -STOP $p; sleep 0.2
state() { cut -d" " -f3 "/proc/$1/stat"; }
echo "stopped: $(state $p)"
kill -CONT $p; sleep 0.2; echo "continued: $(state $p)"
kill -TERM $p; wait $p; echo "wait: $?"
( trap "echo child got TERM; exit 7" TERM; sleep 3 & wait ) & c=$!
sleep 0.3; kill -TERM $c; wait $c; echo "child exit: $?"'

# --- blocking socket calls do not stop the sandbox ---------------------------
MOAT_ARGS=(--ro-bind "$ROOT/tests/compat" /c)
case_ sock-block 'p=/c/sock_block.py; [ -e $p ] || p='"$ROOT"'/tests/compat/sock_block.py
exec python3 "$p" "$1"'
MOAT_ARGS=()

# --- bad input: one line, exit 125, nothing left behind ----------------------
if want bad-input; then
    msg=""
    before=$(ls -d /tmp/moat-* /dev/shm/moat-skel-* 2>/dev/null | sort)
    check125() { # description args...
        local what=$1
        shift
        "$MOAT" "$@" </dev/null >"$W/bad.out" 2>"$W/bad.err"
        local rc=$? lines
        lines=$(wc -l <"$W/bad.err")
        [ "$rc" = 125 ] || msg="$msg; $what: exit $rc, want 125"
        [ "$lines" = 1 ] || msg="$msg; $what: $lines lines on stderr, want 1"
        grep -q '^moat: ' "$W/bad.err" || msg="$msg; $what: stderr does not start with moat:"
    }
    check125 "unknown flag" run --bogus -- true
    check125 "missing source" run --bind /nonexistent-moat-src /x -- true
    check125 "relative destination" run --ro-bind /usr usr -- true
    check125 "no command" run --tmpfs /x
    check125 "bad uid" run --uid abc -- true
    check125 "bad chdir" run --chdir /nonexistent-in-sandbox -- true
    check125 "unknown command" frobnicate
    after=$(ls -d /tmp/moat-* /dev/shm/moat-skel-* 2>/dev/null | sort)
    [ "$before" = "$after" ] || msg="$msg; scratch left behind: $(comm -13 <(echo "$before") <(echo "$after") | head -3 | tr '\n' ' ')"
    report bad-input "${msg#; }"
fi

# --- the audit log: real records against docs/audit.md ----------------------
if want audit-schema; then
    log=$W/audit.jsonl
    timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run --audit-log "$log" -- sh -c '
        cat /etc/shadow; ls /root; python3 -c "import socket; socket.socket()"
        kill -0 1; mknod /tmp/d c 1 3; true' </dev/null >/dev/null 2>&1
    if out=$($PY "$ROOT/tests/compat/audit_schema.py" "$ROOT/docs/audit.md" "$log" \
        fs.outside-view net.family signal.outside-sandbox fs.device-node 2>&1); then
        report audit-schema ""
    else
        report audit-schema "$out"
    fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
