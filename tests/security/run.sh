#!/usr/bin/env bash
# tests/security/run.sh — the escape attempts, natively and under moat.
#
#   tests/security/run.sh [--native-only] [NAME...]     (from `make security`)
#   ESC_VERBOSE=1 tests/security/run.sh ...   also shows each run's final line
#                                             and the first audit records
#   ESC_UID0=1 tests/security/run.sh ...      the uid-0 pass (below)
#   ESC_NONROOT=1 tests/security/run.sh ...   the non-root pass (below)
#   ESC_ETC_LISTINGS=0 ...                    etc_secrets skips its check that
#                                             listings of /etc hide secrets
#   ESC_LIVE_TIMEOUT=N ...                    how long a liveness check's moat
#                                             run may take (default 8 s)
#
# Each attempt build/tests/security/esc_NAME (see esc.h for its protocol):
#  1. runs natively and must print ESCAPED — the attempt is real on this host.
#     If it exits 77 (UNSUPPORTED: the kernel lacks the feature) we print
#     "SKIP-NATIVE: ..." and still run it under moat.
#  2. runs under `./moat run` and must be held: a final "HELD:" line (exit 1),
#     or death by SIGSYS (moat exits 159), or UNSUPPORTED (77) — and never
#     ESCAPED; and the audit log must hold a deny/kill record whose syscall
#     (and rule, where the attempt's expectations name one) fits the attempt.
# Victims (kill_host, fcntl_setown, ptrace_host) are `sleep`s this script
# starts; those of kill_host and fcntl_setown must all be dead after the
# native run, ptrace_host's alive; all of them alive after the moat run.
# Fixtures some attempts need (host servers from token_server.py, files of
# another owner, a host fd) are made inside the attempt's pid namespace
# before the native run and go away with it.
# An attempt whose moat-side defence is an emulated error rather than a
# policy denial (host DAC, an unused abstract name, a server's own refusal)
# expects no audit record: docs/audit.md says why such errors are not
# denials.  Its expectations say so (audit=0).
#
# An attempt that must change a host file to prove itself runs natively as
# the sandbox's uid (nuid, with setpriv), on a fixture of that uid, remade
# before each run and compared on the host before and after the moat run.
# An attempt may get a host file as its stdin (stdin_file) in both runs.
#
# Liveness checks (live=1: fifo_hang, connect_race, late_children) try to
# freeze moat rather than to get out: "ESCAPED" there means moat stopped
# serving the sandbox.  Natively there is no supervisor to freeze, so
# nothing can escape: the runner passes --native, and the attempt runs the
# same workload as a check of itself and must answer UNSUPPORTED (shown as
# SKIP-NATIVE; any other answer fails: the workload is broken).  Under moat
# it must answer HELD (not UNSUPPORTED), moat must exit within LIVE_TIMEOUT
# (default 8 s; a frozen moat is killed then, and the attempt fails), no
# audit record is expected (nothing is denied), and a `leftover` function
# may name processes that outlived the run (late_children: pgrep of a
# marker in their argv, in this attempt's pid namespace).  The PASS line
# shows how long the moat run took.
#
# Moat-side attempts (side=moat: esc_report_symlink and esc_report_files,
# esc_audit_erase and esc_audit_flood, esc_loop_*, esc_out_bytes, and the
# entries that reuse them) attack what moat itself does with the run rather than
# the host through the sandbox: the files it writes as root (--report,
# --audit-log) in places the sandbox can change, its single event loop,
# what it spends on the sandbox's behalf, and the bytes it writes for a
# reader.  Natively there is no moat, so, as for a liveness check, the
# runner passes --native and the attempt only plants what it would plant
# (or runs its workload) as a check of itself, answering UNSUPPORTED.
# Under moat the attempt's own final line does not count (a refused
# configuration never runs it; a frozen or killed run never lets it
# finish), except that ESCAPED always fails.  The run is judged on the
# host instead, by the entry's:
#   state   host state compared before/after the moat run (as above);
#   judge   a function run after the moat run, with RC (moat's exit code),
#           took (its wall time), out, err, log (its audit log) at hand:
#           it prints why the attempt got out, or nothing when it held;
#   wall    moat must have exited within this many seconds (the runner's
#           clock, from just before it starts moat: the PASS line shows
#           it); a moat still running at `timeout` (default LIVE_TIMEOUT,
#           or ESC_SIDE_TIMEOUT) is killed, and the attempt fails as frozen;
#   mexit   a regex moat's exit code must match (125: refused at start).
# Two helpers any entry may use, in both runs: sigterm=T sends SIGTERM to
# moat T seconds into its run and again half a second later (the first is
# forwarded to the program, the second ends the sandbox: either must end
# the run); poke=FUNC runs FUNC (in the background) once the attempt has
# written a line "# ready" to stderr: the host's part of the attempt (open
# a file the sandbox watches, try a lock it holds, count the host's ptys
# while it holds them).  alog=PATH makes PATH the moat run's audit log (a
# fixture: a symlink, a file in a --bind directory, a FIFO); prog=P runs
# esc_P (an entry that is another way of an attempt: an .expect, no .c).
#
# The uid-0 pass (ESC_UID0=1) adds `--uid 0 --gid 0` to every moat run
# (an attempt whose mopts have their own --uid keep it), and makes the
# sandbox uid of fixtures 0.  With the default sandbox uid 65534, host file
# permissions and the kernel's own signal checks stand between the sandbox
# and root's files and processes, and could hide a broken moat rule; as uid 0
# (still without capabilities) the sandbox may write root's files and signal
# root's processes as far as the kernel is concerned, so only moat's own
# checks hold.  kill_host's and fcntl_setown's victims stay root's `sleep`s.
# An attempt that cannot mean anything as uid 0 is skipped with its reason
# ("SKIP esc_x: ..."), and counted neither passed nor failed.
#
# The non-root pass (ESC_NONROOT=1) runs moat itself as uid 65534, for the
# network attempts: without root moat has no network namespace of its own,
# the sandbox's sockets start in the host's, and the private loopback is a
# helper's unprivileged user and network namespace (docs/network.md).  The
# other attempts are skipped there: their defences do not depend on it.
#
# Expectations.  Each attempt's are in tests/security/esc_NAME.expect,
# beside esc_NAME.c; an entry that runs another attempt's program in
# another way (prog=) has an .expect and no .c, and runs after the others.
# The file is bash, sourced by one_attempt in the attempt's own namespace
# and shell (nothing of one attempt reaches the next), and sets
# one_attempt's locals; a comment at its top says what the attempt checks.
#   args        the attempt's arguments in both runs (the victims' pids
#               follow them); margs with margs_set=1: its arguments under
#               moat instead, when its view names things differently
#   mopts       moat options of this attempt; menv: VAR=VALUE settings of
#               moat's own environment for the moat run
#   re          the syscalls (a regex) one audit record must name, with a
#               decision (a regex, default deny|kill) and a rule (a regex,
#               default any); need: regexes further records must match
#   audit=0     held by an emulated error: no record expected
#   gate=1      natively SKIP-NATIVE and UNSUPPORTED under moat passes
#               (unprovable here)
#   nvict       victims, the last ngrp of them group leaders; vcheck=die
#               or live: what the native run must leave them
#   runner      run_limited (default), run_tty or run_pty (above)
#   mcwd=1      run moat from $NCWD too
#   nuid        run natively as that uid (setpriv)
#   fixture     a function that (re)makes the attempt's host files before
#               each run; state: a function printing the host state that
#               the moat run must leave as it was
#   stdin_file  the attempt's stdin in both runs
#   live=1      a liveness check (above); leftover: a function naming what
#               outlived its moat run
#   mpid=1      the moat run gets --setenv ESC_MOAT_PID <moat's own pid>
#   side, judge, wall, mexit, alog, poke, sigterm, prog: above
#   nonroot=1   a network attempt: it runs in the non-root pass too
#   uid0_skip   why the uid-0 pass skips the attempt
#   henv        VAR=VALUE in the environment of the attempt's pid 1 (this
#               shell starts again with it), and so of both runs
# The file's top level only sets and defines: it is read before the
# passes' skips.  A function setup, when it defines one, runs once after
# them, before the native run: one-time fixtures (servers, fds this shell
# holds, mounts) and the settings that depend on them; it fails by
# returning nonzero, with the reason as its last line of output.  A file
# may source another's (the ways of one attempt); its own variables are
# local.  A file that is missing, does not parse, fails or prints as it
# is read, leaves a setting out of range, names a function it does not
# define, or sets a variable that is no setting (a misspelt one) fails its
# attempt, as does a .c without an .expect, whichever attempts were asked
# for.  Fixtures that several attempts use are in tests/security/lib.sh.
#
# Every attempt runs in its own `unshare -pfi --mount-proc`: a private pid
# namespace, so that a sandbox failure (kill(-1, SIGKILL) natively!) reaches
# nothing but the processes started here.  Without one we refuse to run.
# It is a private mount namespace too: fixtures may mount there (an overlay
# on /etc for etc_secrets), and the host never sees it; and a private IPC
# namespace, where ipc_host plants its segments and queues: they go with it.
#
# Output: one line per attempt, "PASS esc_x", "FAIL esc_x: reason" or
# "SKIP esc_x: reason" (plus "SKIP-NATIVE: ..." lines), then "K skipped: ..."
# when K > 0, then "N passed, M failed"; exit 1 if M > 0.
set -u
SELF=$(realpath "$0")
cd "$(dirname "$SELF")/../.." || exit 2
ROOT=$PWD
BIN=$ROOT/build/tests/security
MOAT=${ESC_MOAT:-$ROOT/moat}  # ESC_MOAT: another build of moat to test
TIMEOUT=${ESC_TIMEOUT:-30}
LIVE_TIMEOUT=${ESC_LIVE_TIMEOUT:-8} # the moat run of a liveness check
VERBOSE=${ESC_VERBOSE:-0}
UID0=${ESC_UID0:-0}
[[ $UID0 == 1 ]] || UID0=0
NONROOT=${ESC_NONROOT:-0}
[[ $NONROOT == 1 ]] || NONROOT=0
# The sandbox's uid: moat's default when it runs as root, or 0 in the uid-0
# pass.  Fixtures that the sandbox must own belong to it.
SBX_UID=65534
((UID0)) && SBX_UID=0

# The attempts: every tests/security/esc_NAME.c, then the entries that run
# another attempt's program in another way (an esc_NAME.expect without a
# .c of its own: prog=).  A .c without an .expect is a failure (ORPHANS).
ALL=() ORPHANS=()
for f in "$ROOT"/tests/security/esc_*.c; do
	f=${f##*/esc_}
	f=${f%.c}
	if [[ -f $ROOT/tests/security/esc_$f.expect ]]; then ALL+=("$f"); else ORPHANS+=("$f"); fi
done
for f in "$ROOT"/tests/security/esc_*.expect; do
	f=${f##*/esc_}
	f=${f%.expect}
	[[ -f $ROOT/tests/security/esc_$f.c ]] || ALL+=("$f")
done
# Fixtures more than one attempt uses (an attempt's own are in its file).
source "$ROOT/tests/security/lib.sh" || exit 2

# ---------------------------------------------------------------------------
# Inside the pid namespace: one attempt, native then moat.  Runs as pid 1, so
# kill(-1) from an attempt cannot reach this shell.  Commands are started
# from this shell directly (no subshells, no pipes around them): anything else
# in the namespace is fair game for a native kill(-1).

# run_limited OUT ERR CMD...: run CMD with a watchdog; sets RC.  With
# RL_SIGTERM=T, SIGTERM goes to CMD (moat: env and setpriv exec it) at T
# seconds and again at T+0.5; with RL_POKE=FUNC, FUNC runs once ERR holds
# a line "# ready" (at most 10 s after the start).  A CMD still running
# after TIMEOUT seconds gets SIGTERM twice (moat ends its sandbox at the
# second, and its own watchdog acts on it even with the loop stuck), and
# SIGKILL 3 s later: a moat killed outright leaves its scratch directory
# in /tmp and its skeleton in /dev/shm.
run_limited() {
	local out=$1 err=$2 pid wd helpers=()
	shift 2
	rm -f "$out.timeout"
	"$@" >"$out" 2>"$err" <"${stdin_file:-/dev/null}" &
	pid=$!
	(sleep "$TIMEOUT"; kill -TERM "$pid" && : >"$out.timeout"; sleep 0.5; kill -TERM "$pid"
		sleep 2.5; kill -KILL "$pid") >/dev/null 2>&1 &
	wd=$!
	disown "$wd"
	if [[ -n ${RL_SIGTERM:-} ]]; then
		(sleep "$RL_SIGTERM"; kill -TERM "$pid"; sleep 0.5; kill -TERM "$pid") >/dev/null 2>&1 &
		helpers+=("$!")
		disown "$!"
	fi
	if [[ -n ${RL_POKE:-} ]]; then
		(for ((i = 0; i < 200; i++)); do
			grep -q '^# ready' "$err" 2>/dev/null && { "$RL_POKE"; break; }
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done) >"$out.poke" 2>&1 &
		helpers+=("$!")
		disown "$!"
	fi
	wait "$pid" 2>/dev/null
	RC=$?
	kill -KILL "$wd" 2>/dev/null
	((${#helpers[@]})) && kill -KILL "${helpers[@]}" 2>/dev/null
	[[ -e $out.timeout ]] && RC="$RC, stopped after ${TIMEOUT}s"
}

# run_tty OUT ERR CMD...: the same, with a pty as controlling terminal.
run_tty() {
	local out=$1 err=$2 cmd
	shift 2
	printf -v cmd '%q ' "$@"
	SHELL=/bin/bash
	run_limited "$out" "$err" script -qec "$cmd" /dev/null
	sed -i 's/\r$//' "$out"
}

# run_pty OUT ERR CMD...: the same, with fds 0-2 on a pty that is no
# session's controlling terminal (tests/security/pty_run.py).
run_pty() {
	local out=$1 err=$2
	shift 2
	run_limited "$out" "$err" python3 "$ROOT/tests/security/pty_run.py" "$@"
}

# alive PID: running (not dead, not a zombie, not stopped or traced).
alive() {
	local line state
	read -r line 2>/dev/null </proc/"$1"/stat || return 1
	state=${line##*) }
	state=${state:0:1}
	[[ $state == [RSD] ]] || return 1
	while read -r line; do
		[[ $line == TracerPid:* ]] && { [[ ${line##*[[:space:]]} == 0 ]]; return; }
	done </proc/"$1"/status
}

VICTIMS=()
# start_victims N [G]: N sleeps, the last G of them leading their own process
# group (setsid: a background job of this shell is no group leader, so setsid
# execs in place and $! is the sleep itself, with pgid == pid).
start_victims() {
	local i
	VICTIMS=()
	for ((i = 0; i < $1; i++)); do
		if ((i >= $1 - ${2:-0})); then
			setsid sleep 600 &
		else
			sleep 600 &
		fi
		VICTIMS+=("$!")
		disown "$!" # no "Killed" notices: their deaths are checked by pid
	done
	sleep 0.1
}
stop_victims() {
	((${#VICTIMS[@]})) && kill -KILL "${VICTIMS[@]}" 2>/dev/null
	VICTIMS=()
}

# Fixtures: host servers, files and mounts some attempts need.  FIXTURE_PIDS
# are killed, FIXTURE_MOUNTS unmounted and FIXTURE_FILES removed when the
# attempt is done.
FIXTURE_PIDS=() FIXTURE_FILES=() FIXTURE_MOUNTS=()


stop_fixtures() {
	((${#FIXTURE_PIDS[@]})) && kill -KILL "${FIXTURE_PIDS[@]}" 2>/dev/null
	((${#FIXTURE_MOUNTS[@]})) && umount -l "${FIXTURE_MOUNTS[@]}" 2>/dev/null
	((${#FIXTURE_FILES[@]})) && rm -rf "${FIXTURE_FILES[@]}"
	FIXTURE_PIDS=() FIXTURE_FILES=() FIXTURE_MOUNTS=()
}

last_line() { local l=""; [[ -s $1 ]] && l=$(tail -n 1 "$1"); printf '%s' "${l:0:300}"; }
# Something to show when there is no verdict: stderr's last line, or stdout's.
why() { if [[ -s $2 ]]; then last_line "$2"; else last_line "$1"; fi; }
# The attempt's verdict: its last protocol line (moat may print after it).
verdict() {
	local l=""
	[[ -s $1 ]] && l=$(grep -E '^(ESCAPED|HELD|UNSUPPORTED|USAGE):' "$1" | tail -n 1)
	printf '%s' "${l:0:300}"
}

# check_settings: what is wrong with the settings an expectation file left
# (one_attempt's locals), or nothing.
check_settings() {
	local k
	[[ $runner == run_limited || $runner == run_tty || $runner == run_pty ]] || echo "runner=$runner"
	for k in audit live mcwd mpid margs_set gate nonroot; do
		[[ ${!k} == [01] ]] || echo "$k=${!k}, not 0 or 1"
	done
	[[ $nvict =~ ^[0-9]+$ && $ngrp =~ ^[0-9]+$ ]] || echo "nvict=$nvict ngrp=$ngrp, not numbers"
	[[ -z $nuid || $nuid =~ ^[0-9]+$ ]] || echo "nuid=$nuid, not a uid"
	[[ -z $side || $side == moat ]] || echo "side=$side"
	[[ -z $vcheck || $vcheck == die || $vcheck == live ]] || echo "vcheck=$vcheck"
	for k in fixture state judge poke leftover; do
		[[ -z ${!k} ]] || declare -F "${!k}" >/dev/null || echo "$k=${!k}: no such function"
	done
	[[ $audit == 0 || $live == 1 || $side == moat || -n $re ]] ||
		echo "no re (the audited syscalls), and neither audit=0, live=1 nor side=moat"
}

one_attempt() {
	local name=$1 bin=$BIN/esc_$1 re="" decision='deny|kill' rule="" nvict=0 ngrp=0 vcheck=""
	local args=() runner=run_limited out=$WORK/$1.out err=$WORK/$1.err log=$WORK/$1.audit.jsonl
	local native moat v skipped=0 gate=0 audit=1 mcwd=0 margs_set=0 dir c o own_uid nuid="" fixture="" state=""
	local hostbefore hostafter live=0 leftover="" left stdin_file=/dev/null t0 took timeout=$TIMEOUT mpid=0
	# side=moat, judge, wall, mexit, alog, poke, sigterm, prog: see the top.
	local side="" judge="" wall="" mexit="" alog="" poke="" sigterm="" prog=$1 why_j
	# The other settings of an expectation file: see the top.
	local margs=() mopts=() nwrap=() mcmd=() menv=() need=() nonroot=0 uid0_skip="" henv=()
	local exp=$ROOT/tests/security/esc_$1.expect before kv rc

	# The attempt's expectations: read first in a subshell, where they must
	# parse, succeed and print nothing, then for real.
	if [[ ! -f $exp ]]; then
		echo "FAIL esc_$name: no tests/security/esc_$name.expect (the attempt's expectations)"
		return
	fi
	(source "$exp") >"$WORK/$name.expect.out" 2>&1
	rc=$?
	if ((rc)) || [[ -s $WORK/$name.expect.out ]]; then
		echo "FAIL esc_$name: tests/security/esc_$name.expect is malformed (status $rc): $(head -c 300 "$WORK/$name.expect.out" | tr '\n' '|')"
		return
	fi
	before=$(compgen -v)
	source "$exp"
	v=$(check_settings)
	[[ -z $v ]] || { echo "FAIL esc_$name: tests/security/esc_$name.expect: ${v//$'\n'/; }"; return; }

	if ((NONROOT)) && [[ $nonroot != 1 ]]; then
		echo "SKIP esc_$name: non-root pass: network attempts only"
		return
	fi
	# The uid-0 pass: attempts that mean nothing when the sandbox is uid 0.
	if ((UID0)) && [[ -n $uid0_skip ]]; then
		echo "SKIP esc_$name: uid-0 pass: $uid0_skip"
		return
	fi
	# henv: this shell (pid 1) starts again, once, with it in its environment.
	for kv in "${henv[@]}"; do
		[[ $kv == [A-Za-z_]*=* ]] || { echo "FAIL esc_$name: tests/security/esc_$name.expect: henv: $kv is no VAR=VALUE"; return; }
		v=${kv%%=*}
		[[ ${!v-} == "${kv#*=}" ]] && continue
		[[ -z $HENV_SET ]] || { echo "FAIL esc_$name: henv: $v did not reach this shell's environment"; return; }
		exec env "${henv[@]}" bash "$SELF" --inner "$name" henv-set
	done
	# setup: once, before the native run; its last line says why it failed.
	if declare -F setup >/dev/null; then
		if ! setup >"$WORK/$name.setup" 2>&1; then
			v=$(tail -n 1 "$WORK/$name.setup")
			head -n -1 "$WORK/$name.setup"
			echo "FAIL esc_$name: fixture${v:+: $v}"
			return
		fi
		cat "$WORK/$name.setup"
		v=$(check_settings)
		[[ -z $v ]] || { echo "FAIL esc_$name: tests/security/esc_$name.expect's setup: ${v//$'\n'/; }"; return; }
	fi
	# A name the file (or its setup) left set that is no setting, not its
	# own local and no fixture's: a misspelt setting, which would be lost.
	for v in $(comm -13 <(LC_ALL=C sort <<<"$before") <(compgen -v | LC_ALL=C sort)); do
		[[ $v == BASH_* ]] || local -p "$v" >/dev/null 2>&1 ||
			{ echo "FAIL esc_$name: tests/security/esc_$name.expect sets $v, which is no setting (a helper's variables are local)"; return; }
	done

	bin=$BIN/esc_$prog
	[[ -x $bin ]] || { echo "FAIL esc_$name: $bin not built (make probes)"; return; }
	((margs_set)) || margs=("${args[@]}")
	if ((UID0)); then
		own_uid=0
		for o in "${mopts[@]}"; do [[ $o == --uid || $o == --uid=* ]] && own_uid=1; done
		((own_uid)) || mopts+=(--uid 0 --gid 0)
	fi
	[[ -n $nuid && $nuid != 0 ]] && nwrap=(setpriv --reuid="$nuid" --regid="$nuid" --clear-groups --)
	((live)) && audit=0 timeout=$LIVE_TIMEOUT
	[[ $side == moat ]] && audit=0 timeout=${ESC_SIDE_TIMEOUT:-$LIVE_TIMEOUT}

	# 1. natively, from a scratch cwd beside the secret
	[[ -z $fixture ]] || $fixture || { echo "FAIL esc_$name: fixture ($fixture)"; return; }
	start_victims "$nvict" "$ngrp"
	cd "$NCWD" || return
	RL_POKE=$poke $runner "$out" "$err" "${nwrap[@]}" "$bin" "${args[@]}" "${VICTIMS[@]}"
	cd "$ROOT" || return
	native=$(verdict "$out")
	[[ $VERBOSE == 1 ]] && echo "  esc_$name native (exit $RC): $native"
	if ((live)) || [[ $side == moat ]] && [[ $RC != 77 || $native != UNSUPPORTED:* ]]; then
		echo "FAIL esc_$name: natively the $([[ $side == moat ]] && echo moat-side || echo liveness) workload did not run as it should (exit $RC): ${native:-$(why "$out" "$err")}"
		stop_victims
		return
	elif [[ $RC == 77 && $native == UNSUPPORTED:* ]]; then
		echo "SKIP-NATIVE: esc_$name: ${native#UNSUPPORTED: }"
		skipped=1
	elif [[ $RC != 0 || $native != ESCAPED:* ]]; then
		echo "FAIL esc_$name: natively not escaped (exit $RC): ${native:-$(why "$out" "$err")}"
		stop_victims
		return
	fi
	for v in "${VICTIMS[@]}"; do
		if [[ $vcheck == die ]] && alive "$v"; then
			echo "FAIL esc_$name: natively victim $v survived: $native"
			stop_victims
			return
		fi
		if [[ $vcheck == live ]] && ! alive "$v"; then
			echo "FAIL esc_$name: natively victim $v was left dead or stopped"
			stop_victims
			return
		fi
	done
	stop_victims
	[[ $ONLY_NATIVE == 1 ]] && { echo "PASS esc_$name (native only)"; return; }

	# 2. under moat
	[[ -x $MOAT ]] || { echo "FAIL esc_$name: ./moat is not built"; return; }
	[[ -z $fixture ]] || $fixture || { echo "FAIL esc_$name: fixture ($fixture)"; return; }
	[[ -z $state ]] || hostbefore=$($state 2>&1)
	start_victims "$nvict" "$ngrp"
	if [[ -n $alog ]]; then
		log=$alog # a fixture: left as it is
	else
		rm -f "$log"
	fi
	((mcwd)) && { cd "$NCWD" || return; }
	t0=$EPOCHREALTIME
	mcmd=(env "${menv[@]}" "$MOAT" run)
	if ((NONROOT)); then
		# moat as 65534: its audit log in a directory it may write.
		mkdir -p "$WORK/nonroot" && chmod 1777 "$WORK/nonroot"
		log=$WORK/nonroot/$name.audit.jsonl
		rm -f "$log"
		mcmd=(setpriv --reuid=65534 --regid=65534 --clear-groups -- env "${menv[@]}" "$MOAT" run)
	fi
	# exec keeps the pid: bash's $$ is moat's.
	((mpid)) && mcmd=(env "${menv[@]}" bash -c 'exec "$0" run --setenv ESC_MOAT_PID "$$" "$@"' "$MOAT")
	TIMEOUT=$timeout RL_POKE=$poke RL_SIGTERM=$sigterm $runner "$out" "$err" "${mcmd[@]}" --ro-bind "$BIN" /t --audit-log "$log" \
		--setenv ESC_TOKEN "$TOKEN" "${mopts[@]}" -- /t/esc_"$prog" "${margs[@]}" "${VICTIMS[@]}"
	took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	cd "$ROOT" || return
	moat=$(verdict "$out")
	[[ $VERBOSE == 1 ]] && echo "  esc_$name moat (exit $RC): $moat" &&
		[[ -s $log ]] && sed 's/^/    audit: /' "$log" | head -n 5
	for v in "${VICTIMS[@]}"; do
		if ! alive "$v"; then
			echo "FAIL esc_$name: under moat victim $v is dead or stopped (exit $RC): $moat"
			stop_victims
			return
		fi
	done
	stop_victims
	if [[ -n $state ]]; then
		hostafter=$($state 2>&1)
		if [[ $hostafter != "$hostbefore" ]]; then
			if [[ $hostbefore == *$'\n'* ]]; then
				echo "FAIL esc_$name: under moat the host changed (exit $RC): diff before after:"
				diff <(printf '%s\n' "$hostbefore") <(printf '%s\n' "$hostafter") | head -n 20 | sed 's/^/    /'
			else
				echo "FAIL esc_$name: under moat the host changed (exit $RC): before: $hostbefore; after: $hostafter"
			fi
			return
		fi
	fi
	if [[ -n $leftover ]]; then
		left=$($leftover)
		if [[ -n $left ]]; then
			echo "FAIL esc_$name: under moat processes outlived the run (exit $RC, ${took}s): $left"
			return
		fi
	fi
	if [[ $side == moat ]]; then
		if [[ -e $out.timeout ]]; then
			echo "FAIL esc_$name: moat did not exit within ${timeout}s: frozen (last line: ${moat:-$(why "$out" "$err")})"
			return
		fi
		if [[ -n $wall ]] && awk -v t="$took" -v w="$wall" 'BEGIN { exit !(t > w) }'; then
			echo "FAIL esc_$name: moat took ${took}s, more than ${wall}s (exit $RC; last line: ${moat:-$(why "$out" "$err")})"
			return
		fi
		if grep -q '^ESCAPED:' "$out"; then
			echo "FAIL esc_$name: ESCAPED under moat (exit $RC, ${took}s): $(grep -m1 '^ESCAPED:' "$out")"
			return
		fi
		if [[ -n $judge ]]; then
			why_j=$(RC=$RC took=$took out=$out err=$err log=$log $judge 2>&1)
			if [[ -n $why_j ]]; then
				echo "FAIL esc_$name: under moat (exit $RC, ${took}s): ${why_j:0:600}"
				return
			fi
		fi
		if [[ -n $mexit && ! $RC =~ ^($mexit)$ ]]; then
			echo "FAIL esc_$name: moat exited $RC, not $mexit (last line: ${moat:-$(why "$out" "$err")})"
			return
		fi
		echo "PASS esc_$name (moat-side: held on the host; moat exit $RC in ${took}s)"
		return
	fi
	if grep -q '^ESCAPED:' "$out"; then
		echo "FAIL esc_$name: ESCAPED under moat: $(grep -m1 '^ESCAPED:' "$out")"
		return
	fi
	if ((live)); then
		if [[ -e $out.timeout ]]; then
			echo "FAIL esc_$name: moat did not exit within ${timeout}s: it stopped serving, or kept the run alive (last line: ${moat:-$(why "$out" "$err")})"
		elif [[ $RC == 1 && $moat == HELD:* ]]; then
			echo "PASS esc_$name (liveness check: moat kept serving and exited in ${took}s)"
		else
			echo "FAIL esc_$name: under moat not held (exit $RC): ${moat:-$(why "$out" "$err")}"
		fi
		return
	fi
	case "$RC:$moat" in
	1:HELD:* | 159:* | 77:UNSUPPORTED:*) ;;
	*)
		echo "FAIL esc_$name: under moat neither held nor SIGSYS (exit $RC): ${moat:-$(why "$out" "$err")}"
		return
		;;
	esac
	if [[ $gate == 1 && $skipped == 1 && $RC == 77 ]]; then
		echo "PASS esc_$name (unprovable here: ${moat#UNSUPPORTED: })"
		return
	fi
	if [[ $audit == 0 ]]; then
		# Held by an emulated error: no record is required (audit=0).
		echo "PASS esc_$name (held by an emulated error; $( [[ -s $log ]] && wc -l <"$log" || echo 0) audit records)"
		return
	fi
	if [[ ! -s $log ]]; then
		echo "FAIL esc_$name: held ($moat) but the audit log is empty"
		return
	fi
	if ! grep -E "\"decision\" *: *\"($decision)\"" "$log" | grep -E "\"syscall\" *: *\"($re)\"" |
		grep -Eq "\"rule\" *: *\"(${rule:-[^\"]*})\""; then
		echo "FAIL esc_$name: held ($moat) but no audit record with decision ~ $decision, syscall ~ ($re)${rule:+ and rule $rule} among $(wc -l <"$log") records"
		return
	fi
	# need: further records the attempt's expectations require (regexes).
	for c in "${need[@]}"; do
		if ! grep -Eq "$c" "$log"; then
			echo "FAIL esc_$name: held ($moat) but no audit record matches $c"
			return
		fi
	done
	echo "PASS esc_$name"
}

if [[ ${1:-} == --inner ]]; then
	HENV_SET=${3:-} # started again with the attempt's henv
	one_attempt "$2"
	stop_fixtures
	exit 0
fi

# ---------------------------------------------------------------------------
# Outside: fixtures, then one pid namespace per attempt.
ONLY_NATIVE=0
if [[ ${1:-} == --native-only ]]; then
	ONLY_NATIVE=1
	shift
fi
names=("$@")
((${#names[@]})) || names=("${ALL[@]}")

if ! unshare -pf --mount-proc true 2>/dev/null; then
	echo "run.sh: cannot create a pid namespace (unshare -pf --mount-proc needs root);" \
		"refusing to run escape attempts without one" >&2
	echo "0 passed, ${#names[@]} failed"
	exit 1
fi
command -v script >/dev/null || echo "run.sh: script(1) missing (util-linux): tiocsti and ctty will fail" >&2

SECDIR=$(mktemp -d /var/tmp/moat-sec.XXXXXX) || exit 2
WORK=$(mktemp -d /var/tmp/moat-sec-work.XXXXXX) || exit 2
NCWD=$(mktemp -d /var/tmp/moat-sec-cwd.XXXXXX) || exit 2
trap 'rm -rf "$SECDIR" "$WORK" "$NCWD"' EXIT
TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
SECRET=$SECDIR/secret
printf '%s\n' "$TOKEN" >"$SECRET"
chmod 0755 "$SECDIR" "$WORK" "$NCWD"
chmod 0644 "$SECRET"
export ROOT BIN MOAT TIMEOUT LIVE_TIMEOUT VERBOSE WORK NCWD SECDIR SECRET TOKEN ONLY_NATIVE UID0 SBX_UID NONROOT
export ESC_TOKEN=$TOKEN

((UID0)) && echo "uid-0 pass: every moat run gets --uid 0 --gid 0 (unless its attempt has its own --uid)"
((NONROOT)) && echo "non-root pass: moat runs as uid 65534 (network attempts only)"
pass=0 fail=0 skips=()
# An attempt without its expectations fails, whichever attempts were asked for.
for name in "${ORPHANS[@]}"; do
	echo "FAIL esc_$name: tests/security/esc_$name.c has no esc_$name.expect (its expectations)"
	((fail++))
done
for name in "${names[@]}"; do
	[[ " ${ORPHANS[*]} " == *" $name "* ]] && continue
	result=$(unshare -pfi --mount-proc --kill-child bash "$SELF" --inner "$name" 2>&1)
	[[ -n $result ]] || result="FAIL esc_$name: the attempt's namespace died without a word"
	printf '%s\n' "$result"
	case $(tail -n 1 <<<"$result") in
	PASS*) ((pass++)) ;;
	SKIP\ esc_*) skips+=("$name") ;;
	*) ((fail++)) ;;
	esac
done
((${#skips[@]})) && echo "${#skips[@]} skipped: ${skips[*]}"
echo "$pass passed, $fail failed"
((fail == 0))
