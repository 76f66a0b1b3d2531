#!/bin/sh
# Sessions: `moat session` through its Python client (test_sessions.py),
# the bash driver under `moat run` as the session process speaks to it
# (test_bash_driver.py), and `moat mcp` (test_mcp.py).  One PASS/FAIL line
# per check, then `N passed, M failed`; exit 1 if any failed.
#
#   tests/sessions/run.sh [TEST ...]
#
# TEST names a test of test_sessions.py (state, streams, exception,
# timeout, killed, memory, plot, interrupt, interrupt_early, busy, files,
# late_output, protocol, bash, many, cleanup_close, cleanup_kill,
# agent_loop): only those run.  MOAT=path (default ./moat), TIMEOUT=secs a file (default 300).
set -u
cd "$(dirname "$0")/../.." || exit 2
MOAT=${MOAT:-./moat}
TIMEOUT=${TIMEOUT:-300}
PY=/usr/bin/python3
export MOAT

if [ ! -x "$MOAT" ]; then
	echo "FAIL sessions: $MOAT is not built (make moat)"
	echo "0 passed, 1 failed"
	exit 1
fi

if [ $# -gt 0 ]; then
	files=tests/sessions/test_sessions.py
else
	files=$(ls tests/sessions/test_*.py)
fi

T=$(mktemp) || exit 2
trap 'rm -f "$T"' EXIT
trap 'exit 130' INT TERM
pass=0
fail=0
for f in $files; do
	if [ "$f" = tests/sessions/test_sessions.py ]; then
		timeout -k 5 "$TIMEOUT" "$PY" "$f" "$@" >"$T" 2>&1
	else
		timeout -k 5 "$TIMEOUT" "$PY" "$f" >"$T" 2>&1
	fi
	rc=$?
	grep -v -E '^[0-9]+ passed, [0-9]+ failed' "$T"
	p=$(grep -c '^PASS ' "$T")
	n=$(grep -c '^FAIL ' "$T")
	if [ "$rc" != 0 ] && [ "$n" = 0 ]; then
		echo "FAIL $(basename "$f"): exited $rc without a FAIL line"
		n=1
	fi
	pass=$((pass + p))
	fail=$((fail + n))
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
