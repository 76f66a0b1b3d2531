#!/bin/sh
# Integration probes: run each probe natively in a fresh scratch directory and
# under moat (cwd /tmp, then cwd /workspace), and diff the outputs exactly.
#
#   tests/integration/run.sh [--native] [probe_name ...]
#
# --native   only run natively and print each probe's output (no moat).
# MOAT=path  moat binary to use (default ./moat).  TIMEOUT=secs (default 30).
#
# Both sides run as the same uid: when run as root, moat's sandbox is uid
# 65534, so the native side is run as 65534 too (setpriv), in a 0777 dir.
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=build/tests/integration
MOAT=${MOAT:-./moat}
TIMEOUT=${TIMEOUT:-30}
NATIVE_ONLY=0
if [ "${1:-}" = "--native" ]; then NATIVE_ONLY=1; shift; fi

probes=""
if [ $# -gt 0 ]; then
	probes="$*"
else
	for f in tests/integration/probe_*.c; do
		probes="$probes $(basename "$f" .c)"
	done
fi
for p in $probes; do
	if [ ! -x "$BIN/$p" ]; then
		echo "run.sh: $BIN/$p is not built (make probes)" >&2
		exit 2
	fi
done

AS=""
if [ "$(id -u)" = 0 ]; then
	AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi

T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
chmod 0755 "$T"
# Native copies of the probes, reachable by uid 65534 wherever the repo is.
mkdir "$T/bin" && cp "$BIN"/probe_* "$T/bin/" && chmod -R a+rX "$T/bin"

# run_native PROBE OUT: stdout and the exit status into OUT, stderr to OUT.err
run_native() {
	s=$(mktemp -d -p "$T") && chmod 0777 "$s" || return 2
	(cd "$s" && exec timeout -k 5 "$TIMEOUT" $AS "$T/bin/$1") >"$2" 2>"$2.err"
	echo "exit=$?" >>"$2"
}

# run_moat PROBE CWD OUT
run_moat() {
	timeout -k 5 "$TIMEOUT" "$MOAT" run --ro-bind "$PWD/$BIN" /t --chdir "$2" \
		-- "/t/$1" >"$3" 2>"$3.err"
	echo "exit=$?" >>"$3"
}

pass=0
fail=0
for p in $probes; do
	run_native "$p" "$T/$p.native"
	if [ "$NATIVE_ONLY" = 1 ]; then
		echo "== $p (native)"
		cat "$T/$p.native" "$T/$p.native.err"
		continue
	fi
	for cwd in /tmp /workspace; do
		name="$p@$cwd"
		out="$T/$p.moat$(echo "$cwd" | tr / _)"
		if [ ! -x "$MOAT" ]; then
			echo "FAIL $name: $MOAT is not built"
			fail=$((fail + 1))
			continue
		fi
		run_moat "$p" "$cwd" "$out"
		# Known differences (tests/integration/known-differences): drop
		# the listed lines from both sides, but insist they still differ.
		cp "$T/$p.native" "$T/$p.native.cmp"
		known=0 stale=""
		while IFS='	' read -r kp kprefix kwhy; do
			case "$kp" in ''|'#'*) continue ;; esac
			[ "$kp" = "$p" ] || continue
			a=$(grep -F -- "$kprefix" "$T/$p.native.cmp")
			b=$(grep -F -- "$kprefix" "$out")
			[ "$a" = "$b" ] && stale="$stale [$kprefix]"
			grep -v -F -- "$kprefix" "$T/$p.native.cmp" >"$T/cmp.tmp"; mv "$T/cmp.tmp" "$T/$p.native.cmp"
			grep -v -F -- "$kprefix" "$out" >"$T/cmp.tmp"; mv "$T/cmp.tmp" "$out"
			known=$((known + 1))
		done <tests/integration/known-differences
		if [ -n "$stale" ]; then
			echo "FAIL $name: known differences no longer differ, retire them:$stale"
			fail=$((fail + 1))
		elif diff -u "$T/$p.native.cmp" "$out" >"$out.diff"; then
			[ "$known" -gt 0 ] && echo "PASS $name ($known known differences)" || echo "PASS $name"
			pass=$((pass + 1))
		else
			echo "FAIL $name"
			sed -n '3,40p' "$out.diff" | sed 's/^/    /'
			if [ -s "$out.err" ]; then
				echo "    -- moat stderr:"
				head -n 10 "$out.err" | sed 's/^/    /'
			fi
			fail=$((fail + 1))
		fi
	done
done
[ "$NATIVE_ONLY" = 1 ] && exit 0
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
