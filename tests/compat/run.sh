#!/usr/bin/env bash
# Compatibility: real programs, each run natively and under moat, outputs
# (stdout and exit code) compared.  One line per case, `PASS name` or
# `FAIL name: what differs`, then `N passed, M failed`; exit 1 if any failed.
#
#     tests/compat/run.sh [CASE...]        (from anywhere; MOAT=path overrides ./moat)
#     KEEP=1 keeps the work directory (outputs, stderr) for a look afterwards
#
# Every case is one shell script run twice: natively with $1 = a fresh
# scratch directory, and under `moat run` with $1 = /tmp (the sandbox's
# private /tmp).  Scripts never print $1, so the outputs can be compared
# byte for byte.
#
# Each case is tests/compat/cases/NAME.sh (its first line says what it
# checks), sourced by this script in a subshell of its own, so that
# nothing it sets reaches the next case, with CASE=NAME and the helpers of
# tests/compat/lib.sh at hand.  Most hand their script to case_, which
# runs it both ways, compares and reports; PREFIX (a command the native
# run goes through) and MOAT_ARGS (options of the moat run) may be set
# before.  exitcode_case EXPECTED CMD... checks the exit code of CMD
# alone, natively and under moat.  The others check moat's own view (its
# /proc, its overlays, its limits, its refusals of bad input, ...) under
# moat only, and end with one verdict: report [MESSAGE], PASS without a
# message and FAIL with one; not_run when the case does not apply here
# (no line, counted neither way).  The cases run in the order of CASES
# below.  A case file that is missing or not in CASES, a case that ends
# without a verdict, and a CASE named on the command line that does not
# exist are failures.
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
# Run from `make check`, the native side would inherit the outer make's
# level ("make[2]:") and flags; the sandbox starts with a clean environment.
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES

W=$(mktemp -d "${TMPDIR:-/tmp}/moat-compat.XXXXXX") || exit 1
[ -n "${KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
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

if [ ! -x "$MOAT" ]; then
    echo "compat: $MOAT not found or not executable (run make first)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

PREFIX=()
MOAT_ARGS=()
. "$ROOT/tests/compat/lib.sh" || exit 1

# The cases, in the order they run (net-local-nonroot compares with
# net-local's native output).  venv to xattr are real workloads (issue 3):
# programs people run in a sandbox, each on its own: venv, multiprocessing
# (POSIX semaphores and shm in /dev/shm), SQLite WAL (shared mmap and fcntl
# locks), node's fs module, make (timestamps), tar x of links, cp -a,
# here-documents, mv across mounts (EXDEV: /tmp and /workspace are
# different mounts under moat).
CASES=(analysis pipeline gcc shebang git find-usr-lib tar-usr-include
    exit-3 exit-sigterm exit-missing exit-noexec exit-in-shell signals sock-block
    net-local net-local-nonroot net-private net-private-nonroot net-allow pip-offline
    limits limits-fallback
    venv multiprocessing sqlite-wal node-fs make tar-links cp-a heredoc mv-xdev xattr
    toolchain-0700 root-inside net-views ps-states postgres mount-inside bad-input proc-view overlay-usr overlay-fts disk-limit audit-schema watchdog setup-step leftovers)
CASE_DIR=$ROOT/tests/compat/cases

listed() { # is $1 in CASES?
    local c
    for c in "${CASES[@]}"; do [ "$c" = "$1" ] && return 0; done
    return 1
}
for f in "$CASE_DIR"/*.sh; do
    n=${f##*/}
    n=${n%.sh}
    listed "$n" || { echo "FAIL $n: tests/compat/cases/$n.sh is not in run.sh's CASES"; fail=$((fail + 1)); }
done
for n in "${only[@]}"; do
    listed "$n" || [ -e "$CASE_DIR/$n.sh" ] || { echo "FAIL $n: no such case (tests/compat/cases/$n.sh)"; fail=$((fail + 1)); }
done

for name in "${CASES[@]}"; do
    want "$name" || continue
    if [ ! -f "$CASE_DIR/$name.sh" ]; then
        echo "FAIL $name: tests/compat/cases/$name.sh is missing"
        fail=$((fail + 1))
        continue
    fi
    (CASE=$name; . "$CASE_DIR/$name.sh"; exit 0)
    rc=$?
    case $rc in
    10) pass=$((pass + 1)) ;;
    11) fail=$((fail + 1)) ;;
    12) ;;
    *)
        echo "FAIL $name: tests/compat/cases/$name.sh ended without a verdict (exit $rc)"
        fail=$((fail + 1))
        ;;
    esac
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
