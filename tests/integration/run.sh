#!/bin/sh
# Integration probes: run each probe natively in a fresh scratch directory and
# under moat (cwd /tmp, then cwd /workspace), and diff the outputs exactly.
# Fixture-mode probes (probe_overlay) start in a tree made before each run
# instead, and the host's copy must not change: see "fixture mode" below.
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

# compare NAME KEY NATIVE OUT: diff one moat run against the native one and
# print its PASS/FAIL line.  Known differences (tests/integration/
# known-differences, lines of probe KEY): drop the listed lines from both
# sides, but insist they still differ.
compare() {
	name=$1 key=$2 nat=$3 out=$4
	cp "$nat" "$out.native.cmp"
	known=0 stale=""
	while IFS='	' read -r kp kprefix kwhy; do
		case "$kp" in ''|'#'*) continue ;; esac
		# a probe's name, or one run of it ("probe_overlay@/ov+upper-tmpfs")
		[ "$kp" = "$key" ] || [ "$kp" = "$name" ] || continue
		a=$(grep -F -- "$kprefix" "$out.native.cmp")
		b=$(grep -F -- "$kprefix" "$out")
		[ "$a" = "$b" ] && stale="$stale [$kprefix]"
		grep -v -F -- "$kprefix" "$out.native.cmp" >"$T/cmp.tmp"; mv "$T/cmp.tmp" "$out.native.cmp"
		grep -v -F -- "$kprefix" "$out" >"$T/cmp.tmp"; mv "$T/cmp.tmp" "$out"
		known=$((known + 1))
	done <tests/integration/known-differences
	if [ -n "$stale" ]; then
		echo "FAIL $name: known differences no longer differ, retire them:$stale"
		fail=$((fail + 1))
	elif diff -u "$out.native.cmp" "$out" >"$out.diff"; then
		[ "$known" -gt 0 ] && echo "PASS $name ($known known differences)" || echo "PASS $name"
		pass=$((pass + 1))
	else
		echo "FAIL $name"
		sed -n '3,120p' "$out.diff" | sed 's/^/    /'
		if [ -s "$out.err" ]; then
			echo "    -- moat stderr:"
			head -n 10 "$out.err" | sed 's/^/    /'
		fi
		fail=$((fail + 1))
	fi
}

# ---- fixture mode: probes that start in a tree that already exists ----
#
# probe_overlay runs natively in a fresh copy of overlay_fixture, and under
# moat in the fixture shown with `--overlay FIXTURE /ov` (cwd /ov).  After
# every moat run the fixture on the host must be exactly as before
# (overlay_state: type, mode, owner, size, inode, links, mtime, ctime, link
# target, and a checksum of every file): a line "PASS/FAIL NAME: the host
# fixture ...".  Runs:
#   probe_overlay@/ov              the upper layer in moat's scratch
#   probe_overlay@/ov+upper-tmpfs  the scratch (so the upper layer) on
#                                  /dev/shm, when that is another file
#                                  system than the fixture's: a copy-up
#                                  crosses file systems, as /usr's does
#                                  where /tmp is a tmpfs
#   probe_overlay@/ov+uid0         (as root) `--uid 0 --gid 0`, the fixture
#                                  uid 0's; natively root in a user
#                                  namespace that maps host root alone
#                                  (unshare --map-root-user), as the root
#                                  inside is: root's powers over root's
#                                  files, none over uid 1000's
#   probe_overlay@persist          `probe_overlay persist-1` then
#                                  `persist-2`, natively in one tree, under
#                                  moat in two runs sharing `--persist DIR`:
#                                  the second must see what the first did
# The other probes' runs are unchanged.

# overlay_fixture DIR ROOT SELF OTHER: the tree probe_overlay starts in,
# made at DIR (which must not exist); ROOT is where the probe sees it
# (absolute links point there).  Owned by uid SELF (the probe's, on both
# sides), but pub/ and pub/other.txt by OTHER; without root everything is
# ours and pub/other.txt is missing on both sides.
overlay_fixture() {
	(
		set -e
		d=$1 root=$2 self=$3 other=$4
		mkdir -m 0755 "$d"
		cd "$d"
		printf 'hello\n' >f.txt
		printf 'read only\n' >ro.txt
		printf 'one\n' >append.txt
		printf 'truncate me\n' >trunc.txt
		seq 1 2000 >big.txt
		printf 'linked\n' >hl1 && ln hl1 hl2
		mkdir hl && printf 'h\n' >hl/h3 && ln hl/h3 hl/h4
		mkfifo fifo
		mkdir -p d1/sub deep/l1/l2/l3/l4 empty full/sub ren ren2 dmove/sub times priv pub locked/sub
		printf 'a\n' >d1/a && printf 'b\n' >d1/b && printf 'c\n' >d1/sub/c
		printf 'leaf\n' >deep/l1/l2/l3/l4/leaf.txt
		printf 'x\n' >full/x && printf 'y\n' >full/y && printf 'z\n' >full/sub/z
		for f in r1 r2 r3 s1 s2; do printf '%s\n' "$f" >ren/$f; done
		printf 'existing\n' >ren2/existing
		printf 'm1\n' >dmove/m1 && printf 'm2\n' >dmove/sub/m2 && ln -s m1 dmove/lnk
		printf 't1\n' >times/t1 && printf 't2\n' >times/t2 && printf 't3\n' >times/t3
		printf 'secret\n' >priv/s.txt
		printf 'own\n' >pub/own.txt && printf 'own b\n' >pub/own_b.txt && printf 'other\n' >pub/other.txt
		printf 'locked\n' >locked/sub/f
		ln -s d1/a lnk_rel && ln -s d1 lnk_dir && ln -s "$root/d1/b" lnk_abs && ln -s nowhere lnk_dangling
		chmod 0444 ro.txt
		if [ "$(id -u)" = 0 ]; then
			chown -hR "$self:$self" .
			chown "$other:$other" pub pub/other.txt
		else
			rm pub/other.txt
		fi
		chmod 0700 priv && chmod 1777 pub && chmod 0600 locked
		find . ! -type d -exec touch -h -d @1300000000 {} +
		touch -h -d @1000000000 times/t1 lnk_rel
		touch -d @1100000000 times/t2
		touch -d @1200000000 times/t3
		# directories last, deepest first: their children moved their times
		find . -depth -type d -exec touch -d @1500000000 {} +
	)
}

# overlay_state DIR: the tree as the host sees it, metadata and contents.
overlay_state() {
	(cd "$1" && find . -printf '%p %y %m %U %G %s %i %n %T@ %C@ %l\n' | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2)
}

# fixture NAME DIR ROOT SELF OTHER: overlay_fixture, called where `set -e`
# holds in it (not on the left of || nor in an if); fails NAME if it fails.
fixture() {
	fname=$1
	shift
	overlay_fixture "$@"
	frc=$?
	[ "$frc" = 0 ] && return 0
	echo "FAIL $fname: making the fixture failed ($frc)"
	fail=$((fail + 1))
	return 1
}

# host_check NAME BEFORE FIXTURE: FAIL unless FIXTURE's state is BEFORE.
host_check() {
	overlay_state "$3" >"$2.after" 2>&1
	if diff -u "$2" "$2.after" >"$2.diff"; then
		echo "PASS $1: the host fixture is unchanged"
		pass=$((pass + 1))
	else
		echo "FAIL $1: the host fixture changed"
		sed -n '3,30p' "$2.diff" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
}

# native_fixture OUT AS DIR ARGS...: the probe natively in DIR, as AS.
native_fixture() {
	nout=$1 nas=$2 ndir=$3
	shift 3
	# shellcheck disable=SC2086 # AS is a command prefix
	(cd "$ndir" && exec timeout -k 5 "$TIMEOUT" $nas "$T/bin/$p" "$@") >>"$nout" 2>>"$nout.err"
	echo "exit=$?" >>"$nout"
}

# moat_fixture OUT FIXTURE [ENV=VAL...] -- [MOAT OPTIONS] -- ARGS...
moat_fixture() {
	mout=$1 mfx=$2
	shift 2
	menv=""
	while [ "$1" != -- ]; do menv="$menv $1"; shift; done
	shift
	mopts=""
	while [ "$1" != -- ]; do mopts="$mopts $1"; shift; done
	shift
	# shellcheck disable=SC2086 # word splitting of the option lists is meant
	env $menv timeout -k 5 "$TIMEOUT" "$MOAT" run --ro-bind "$PWD/$BIN" /t \
		--overlay "$mfx" /ov --chdir /ov $mopts -- "/t/$p" "$@" >>"$mout" 2>>"$mout.err"
	echo "exit=$?" >>"$mout"
}

run_fixture_probe() {
	p=$1
	# The probe's uid and another one: the sandbox's (65534 when moat
	# runs as root) and root; in the uid-0 run 0 and 1000.
	self=$(id -u) other=$(id -u)
	[ -n "$AS" ] && self=65534 other=0
	AS0="unshare --user --map-root-user --"
	fixture "$p" "$T/$p.n.d" "$T/$p.n.d" "$self" "$other" || return
	native_fixture "$T/$p.native" "$AS" "$T/$p.n.d"
	fixture "$p" "$T/$p.pn.d" "$T/$p.pn.d" "$self" "$other" || return
	native_fixture "$T/$p.pnative" "$AS" "$T/$p.pn.d" persist-1
	native_fixture "$T/$p.pnative" "$AS" "$T/$p.pn.d" persist-2
	if [ -n "$AS" ]; then
		fixture "$p" "$T/$p.n0.d" "$T/$p.n0.d" 0 1000 || return
		native_fixture "$T/$p.native0" "$AS0" "$T/$p.n0.d"
	fi
	if [ "$NATIVE_ONLY" = 1 ]; then
		echo "== $p (native)"
		cat "$T/$p.native" "$T/$p.native.err" "$T/$p.pnative" "$T/$p.pnative.err"
		return
	fi
	if [ ! -x "$MOAT" ]; then
		echo "FAIL $p: $MOAT is not built"
		fail=$((fail + 1))
		return
	fi
	for variant in upper upper-tmpfs uid0; do
		name="$p@/ov" menv="" mopt="" nat=$T/$p.native fself=$self fother=$other
		case $variant in
		upper-tmpfs)
			name="$p@/ov+upper-tmpfs"
			if [ "$(stat -c %d /dev/shm 2>/dev/null)" = "$(stat -c %d "$T")" ] || [ ! -w /dev/shm ]; then
				echo "SKIP $name: /dev/shm is not another writable file system here"
				continue
			fi
			menv=MOAT_SCRATCH=/dev/shm
			;;
		uid0)
			name="$p@/ov+uid0"
			[ -n "$AS" ] || continue
			mopt="--uid 0 --gid 0" nat=$T/$p.native0 fself=0 fother=1000
			;;
		esac
		mfx=$T/$p.$variant.d
		fixture "$name" "$mfx" /ov "$fself" "$fother" || continue
		overlay_state "$mfx" >"$T/$p.$variant.state" 2>&1
		# shellcheck disable=SC2086 # the option lists are split on purpose
		moat_fixture "$T/$p.moat.$variant" "$mfx" $menv -- $mopt --
		compare "$name" "$p" "$nat" "$T/$p.moat.$variant"
		host_check "$name" "$T/$p.$variant.state" "$mfx"
	done
	name="$p@persist"
	mfx=$T/$p.persist.d
	fixture "$name" "$mfx" /ov "$self" "$other" || return
	overlay_state "$mfx" >"$T/$p.persist.state" 2>&1
	out=$T/$p.moat.persist
	for half in persist-1 persist-2; do
		moat_fixture "$out" "$mfx" -- --persist "$T/$p.layers" -- "$half"
	done
	# the second run saw the first's changes: its tree is the first's
	sed -n '/^persist-1 tree:$/,/^done$/p' "$out" | sed 1d >"$out.t1"
	sed -n '/^persist-2 tree:$/,/^done$/p' "$out" | sed 1d >"$out.t2"
	if [ -s "$out.t1" ] && diff -u "$out.t1" "$out.t2" >"$out.tdiff"; then
		echo "PASS $name: the second run sees the first's changes"
		pass=$((pass + 1))
	else
		echo "FAIL $name: the second run does not see the first's changes"
		sed -n '3,30p' "$out.tdiff" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
	compare "$name" "$p.persist" "$T/$p.pnative" "$out"
	host_check "$name" "$T/$p.persist.state" "$mfx"
}

for p in $probes; do
	case $p in
	probe_overlay)
		run_fixture_probe "$p"
		continue
		;;
	esac
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
		compare "$name" "$p" "$T/$p.native" "$out"
	done
done
[ "$NATIVE_ONLY" = 1 ] && exit 0
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
