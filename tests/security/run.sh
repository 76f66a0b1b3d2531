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
#     (and rule, where the table names one) fits the attempt.
# Victims (kill_host, fcntl_setown, ptrace_host) are `sleep`s this script
# starts; those of kill_host and fcntl_setown must all be dead after the
# native run, ptrace_host's alive; all of them alive after the moat run.
# Fixtures some attempts need (host servers from token_server.py, files of
# another owner, a host fd) are made inside the attempt's pid namespace
# before the native run and go away with it.
# An attempt whose moat-side defence is an emulated error rather than a
# policy denial (host DAC, an unused abstract name, a server's own refusal)
# expects no audit record: docs/audit.md says why such errors are not
# denials.  The table says so attempt by attempt (audit=0).
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
# esc_P (an entry that is another way of an attempt, listed in REUSED).
#
# The uid-0 pass (ESC_UID0=1) adds `--uid 0 --gid 0` to every moat run
# (an attempt whose table entry has its own --uid keeps it), and makes the
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
# Every attempt runs in its own `unshare -pf --mount-proc`: a private pid
# namespace, so that a sandbox failure (kill(-1, SIGKILL) natively!) reaches
# nothing but the processes started here.  Without one we refuse to run.
# It is a private mount namespace too: fixtures may mount there (an overlay
# on /etc for etc_secrets), and the host never sees it.
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

# Every tests/security/esc_*.c is an attempt; one_attempt() has its table.
ALL=()
for f in "$ROOT"/tests/security/esc_*.c; do
	f=${f##*/esc_}
	ALL+=("${f%.c}")
done
# Entries that run another attempt's program (prog=) in another way.
REUSED=(report_dangling report_fifo report_parent report_planted ptmx_reopen audit_bind_forge audit_persist audit_symlink
	loop_fifo_term loop_audit_pipe pid_clock)
ALL+=("${REUSED[@]}")

# ---------------------------------------------------------------------------
# Inside the pid namespace: one attempt, native then moat.  Runs as pid 1, so
# kill(-1) from an attempt cannot reach this shell.  Commands are started
# from this shell directly (no subshells, no pipes around them): anything else
# in the namespace is fair game for a native kill(-1).

# run_limited OUT ERR CMD...: run CMD with a watchdog; sets RC.  With
# RL_SIGTERM=T, SIGTERM goes to CMD (moat: env and setpriv exec it) at T
# seconds and again at T+0.5; with RL_POKE=FUNC, FUNC runs once ERR holds
# a line "# ready" (at most 10 s after the start).
run_limited() {
	local out=$1 err=$2 pid wd helpers=()
	shift 2
	rm -f "$out.timeout"
	"$@" >"$out" 2>"$err" <"${stdin_file:-/dev/null}" &
	pid=$!
	(sleep "$TIMEOUT"; kill -KILL "$pid" && : >"$out.timeout") >/dev/null 2>&1 &
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
	[[ -e $out.timeout ]] && RC="$RC, killed after ${TIMEOUT}s"
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

# pts_fixture: a pty on the host whose master a process of the sandbox's
# uid holds until the fixtures go; its number in PTS_N.
pts_fixture() {
	local f=$WORK/pts.n
	rm -f "$f"
	setpriv --reuid="$SBX_UID" --regid="$SBX_UID" --clear-groups -- /usr/bin/python3 -c '
import os, pty, sys, time
m, s = pty.openpty()
print(os.ttyname(s).rsplit("/", 1)[1], flush=True)
time.sleep(120)' </dev/null >"$f" 2>/dev/null &
	FIXTURE_PIDS+=("$!")
	disown "$!" # its SIGKILL at cleanup must not print "Killed" as our last line
	for _ in $(seq 50); do [[ -s $f ]] && break; sleep 0.1; done
	PTS_N=$(cat "$f" 2>/dev/null)
	[[ $PTS_N =~ ^[0-9]+$ ]]
}

# start_server READY MODE ARGS...: token_server.py in the background; waits
# until it listens and sets SERVED to what it wrote (the port, or "ok").
start_server() {
	local ready=$1 i
	shift
	rm -f "$ready"
	python3 "$ROOT/tests/security/token_server.py" "$@" "$ready" </dev/null >/dev/null 2>"$ready.err" &
	FIXTURE_PIDS+=("$!")
	disown "$!"
	FIXTURE_FILES+=("$ready" "$ready.err")
	for ((i = 0; i < 100; i++)); do
		[[ -s $ready ]] && break
		sleep 0.05
	done
	SERVED=""
	[[ -s $ready ]] && read -r SERVED <"$ready"
	[[ -n $SERVED ]] || { echo "token_server.py $1 did not start: $(tail -n 1 "$ready.err" 2>/dev/null)"; return 1; }
}

# dns_state: how many questions naming the token the fixture resolver saw.
dns_state() {
	echo "questions naming the token at the host's resolver (the fixture): $(grep -c -- "$TOKEN" "$WORK/dns.log" 2>/dev/null)"
}

stop_fixtures() {
	((${#FIXTURE_PIDS[@]})) && kill -KILL "${FIXTURE_PIDS[@]}" 2>/dev/null
	((${#FIXTURE_MOUNTS[@]})) && umount -l "${FIXTURE_MOUNTS[@]}" 2>/dev/null
	((${#FIXTURE_FILES[@]})) && rm -rf "${FIXTURE_FILES[@]}"
	FIXTURE_PIDS=() FIXTURE_FILES=() FIXTURE_MOUNTS=()
}

# etc_fixture: an overlay on /etc (in this attempt's mount namespace only)
# that adds what this host may lack: sudoers, sudoers.d/moat-esc, ssh host
# private keys and ssl/private/moat-esc.key, each holding the token, with
# the owners and modes a real system gives them.
etc_fixture() {
	local d=$WORK/etc_secrets f
	mkdir -p "$d/upper/ssh" "$d/upper/ssl/private" "$d/upper/sudoers.d" "$d/work" || return
	FIXTURE_FILES+=("$d")
	for f in sudoers sudoers.d/moat-esc ssh/ssh_host_ed25519_key ssh/ssh_host_rsa_key \
		ssh/ssh_host_ecdsa_key ssl/private/moat-esc.key; do
		printf '%s\n' "$TOKEN" >"$d/upper/$f" || return
	done
	chmod 0440 "$d/upper/sudoers" "$d/upper/sudoers.d/moat-esc" && chmod 0750 "$d/upper/sudoers.d" &&
		chmod 0600 "$d"/upper/ssh/ssh_host_* "$d/upper/ssl/private/moat-esc.key" || return
	# A merged directory shows the upper one's owner and mode: copy the host's.
	for f in ssh ssl ssl/private; do
		[[ -d /etc/$f ]] || continue
		chown --reference="/etc/$f" "$d/upper/$f" && chmod --reference="/etc/$f" "$d/upper/$f" || return
	done
	mount -t overlay moat-esc-etc -o "lowerdir=/etc,upperdir=$d/upper,workdir=$d/work" /etc || return
	FIXTURE_MOUNTS+=(/etc)
}

# ro_fixture: the directory bound read-only at /r by ro_bind_write, and a
# directory for its links (natively; /tmp under moat), both of the sandbox's
# uid, on one file system; the file is the sandbox's, 0644, "orig", with an
# old mtime.  Remade before each run.
ro_fixture() {
	local d=$WORK/ro_bind_write
	rm -rf "$d"
	mkdir -p "$d/d" "$d/links" && printf 'orig' >"$d/d/f" &&
		chown "$SBX_UID:$SBX_UID" "$d/d" "$d/d/f" "$d/links" && chmod 0644 "$d/d/f" &&
		chmod 0755 "$d" "$d/d" "$d/links" && touch -d @1000000000 "$d/d/f" || return
	FIXTURE_FILES+=("$d")
}
# ro_state: the host file as the host sees it (owner, mode, links, mtime,
# ctime, content), and what else is in its directory and the link directory.
ro_state() {
	local d=$WORK/ro_bind_write
	stat -c '%u:%g %a %h %y %z' "$d/d/f" && od -An -c "$d/d/f" | tr -s ' \n' ' ' && ls -A "$d/d" "$d/links" | tr '\n' ' '
}

# setcap_fixture: an empty directory of the sandbox's uid, bound at /b, and
# one for the native run's "/tmp".  setcap_state: every extended attribute
# outside user.* on the files in /b, as root sees them on the host (the
# sandbox cannot read trusted.* back).
setcap_fixture() {
	local d=$WORK/setcap_xattr
	rm -rf "$d"
	mkdir -p "$d/b" "$d/t" && chown "$SBX_UID:$SBX_UID" "$d/b" && chmod 0755 "$d" "$d/b" "$d/t" || return
	FIXTURE_FILES+=("$d")
}
setcap_state() {
	python3 -c 'import os, sys
d = sys.argv[1]
print("; ".join(f + " " + n + "=" + os.getxattr(os.path.join(d, f), n, follow_symlinks=False).hex()
                for f in sorted(os.listdir(d))
                for n in sorted(os.listxattr(os.path.join(d, f), follow_symlinks=False))
                if not n.startswith("user.")))' "$WORK/setcap_xattr/b"
}

# nested_fixture: P (bound writable at /p) with P/sub/ro (bound read-only at
# /p/sub/ro) holding file.txt, all of the sandbox's uid; the file 0644,
# "orig", with an old mtime.  nested_state: the file, and every name in P.
nested_fixture() {
	local d=$WORK/nested_ro
	rm -rf "$d"
	mkdir -p "$d/p/sub/ro" && printf 'orig\n' >"$d/p/sub/ro/file.txt" &&
		chown -R "$SBX_UID:$SBX_UID" "$d/p" && chmod 0755 "$d" "$d/p" "$d/p/sub" "$d/p/sub/ro" &&
		chmod 0644 "$d/p/sub/ro/file.txt" && touch -d @1000000000 "$d/p/sub/ro/file.txt" || return
	FIXTURE_FILES+=("$d")
}
nested_state() {
	local d=$WORK/nested_ro/p
	echo "$(stat -c '%u:%g %a %y %z' "$d/sub/ro/file.txt") $(od -An -c "$d/sub/ro/file.txt" | tr -s ' \n' ' ')" \
		"$(cd "$d" && find . | sort | tr '\n' ' ')"
}

# stdin_fixture: the host file fed to reopen_stdin as its stdin (read-only):
# outside the view, the sandbox's, 0644, "orig", with an old mtime.
stdin_fixture() {
	local f=$WORK/reopen_stdin.txt
	rm -f "$f"
	printf 'orig' >"$f" && chown "$SBX_UID:$SBX_UID" "$f" && chmod 0644 "$f" && touch -d @1000000000 "$f" || return
	FIXTURE_FILES+=("$f")
}
stdin_state() {
	local f=$WORK/reopen_stdin.txt
	echo "$(stat -c '%u:%g %a %y %z' "$f") $(od -An -c "$f" | tr -s ' \n' ' ')"
}

# dev_fixture: a null device node of our own (mknod c 1 3, 0666) bound over
# /dev/null in this attempt's mount namespace only, so that dev_chmod can
# reach no host node even if moat let it through; DEV_INO is its inode.
# The namespace is private (unshare's default), checked before binding.
dev_fixture() {
	local n=$WORK/dev_null prop
	prop=$(findmnt -no PROPAGATION --target /dev 2>/dev/null)
	[[ $prop == private ]] || { echo "dev_fixture: /dev is not a private mount here ($prop)"; return 1; }
	rm -f "$n"
	mknod "$n" c 1 3 && chmod 0666 "$n" || return
	FIXTURE_FILES+=("$n")
	mount --bind "$n" /dev/null || return
	FIXTURE_MOUNTS+=(/dev/null)
	DEV_INO=$(stat -c %i /dev/null)
	[[ $DEV_INO == "$(stat -c %i "$n")" ]]
}
dev_state() { stat -c '%a %u:%g %y %z' "$WORK/dev_null"; }

# ovl_fixture: the canary trees of the overlay attempts (overlay_host_write,
# overlay_lower_fd), remade before each run.  moat's default overlays take
# their lower layer from /etc and /usr, which must never be written, so in
# this attempt's mount namespace /etc and /usr become overlayfs mounts
# (once) with upper directories under $WORK/ovl: the canaries
# /etc/moat-esc-canary and /usr/share/moat-esc-canary are made through them
# and live in $WORK, and a native run that writes "the host's /etc" writes
# there.  The third, /etc/moat-esc-ovl-canary, is shown with --overlay at
# /ov.  The moat runs keep their scratch in /etc/moat-esc-scratch (below).
# Every canary is the sandbox's (SBX_UID), 0755/0644, old times.
OVL_CANARIES=()
# unspec_fixture: an overlay on /usr in this namespace only, with an empty
# 0777 directory /usr/share/moat-esc-unspec (remade before each run).
unspec_fixture() {
	local d=$WORK/unspec prop
	if [[ ! -d $d/usr.upper ]]; then
		prop=$(findmnt -no PROPAGATION --target /usr 2>/dev/null)
		[[ $prop == private ]] || { echo "unspec_fixture: /usr is not a private mount here ($prop)"; return 1; }
		mkdir -p "$d/usr.upper" "$d/usr.work" && chmod 0755 "$d" || return
		FIXTURE_FILES+=("$d")
		mount -t overlay moat-esc-unspec -o "lowerdir=/usr,upperdir=$d/usr.upper,workdir=$d/usr.work" /usr || return
		FIXTURE_MOUNTS+=(/usr)
	fi
	rm -rf /usr/share/moat-esc-unspec && mkdir /usr/share/moat-esc-unspec && chmod 0777 /usr/share/moat-esc-unspec
}
unspec_state() { ls -la /usr/share/moat-esc-unspec; }

ovl_fixture() {
	local d=$WORK/ovl c prop f
	if [[ ! -d $d/etc.upper ]]; then
		# Mounts here must never reach the host's namespace.
		prop=$(findmnt -no PROPAGATION --target /etc 2>/dev/null)
		[[ $prop == private ]] || { echo "ovl_fixture: /etc is not a private mount here ($prop)"; return 1; }
		prop=$(findmnt -no PROPAGATION --target /usr 2>/dev/null)
		[[ $prop == private ]] || { echo "ovl_fixture: /usr is not a private mount here ($prop)"; return 1; }
		mkdir -p "$d/etc.upper" "$d/etc.work" "$d/usr.upper" "$d/usr.work" && chmod 0755 "$d" || return
		FIXTURE_FILES+=("$d")
		mount -t overlay moat-esc-ovl-etc -o "lowerdir=/etc,upperdir=$d/etc.upper,workdir=$d/etc.work" /etc || return
		FIXTURE_MOUNTS+=(/etc)
		mount -t overlay moat-esc-ovl-usr -o "lowerdir=/usr,upperdir=$d/usr.upper,workdir=$d/usr.work" /usr || return
		FIXTURE_MOUNTS+=(/usr)
	fi
	# moat's scratch (MOAT_SCRATCH, so its upper layers) on the /etc mount,
	# as /tmp and /etc share the root file system on many hosts: a way
	# that hard-links a lower file into the upper layer then works there
	# as it would on such a host.
	mkdir -p /etc/moat-esc-scratch && chmod 0755 /etc/moat-esc-scratch || return
	OVL_CANARIES=(/etc/moat-esc-canary /usr/share/moat-esc-canary /etc/moat-esc-ovl-canary)
	for c in "${OVL_CANARIES[@]}"; do
		rm -rf "$c"
		mkdir -p "$c/sub/deep" "$c/emptydir" "$c/mvdir/in" "$c/fddir" || return
		for f in f f2 g h h2 t a u o r1 r2 r3 r4 r5 e1 e2 x fdfile sub/s sub/deep/s mvdir/in/m fddir/f; do
			printf 'orig %s\n' "$f" >"$c/$f" || return
		done
		chown -R "$SBX_UID:$SBX_UID" "$c" && chmod -R u=rwX,go=rX "$c" &&
			find "$c" -depth -exec touch -h -d @1000000000 {} + || return
	done
}
# ovl_cp_fixture: the directory overlay_copyup sees at /ov (--overlay), the
# sandbox's, holding the token in files and directories of uid 1000 that
# the sandbox may not read, one set per way of the attempt (.0 to .12):
# acl.W and d_acl.W/ are of the sandbox's group and 0640/0750, but a POSIX
# ACL denies the sandbox's uid (user:SBX:---); priv.W and d_priv.W/ are
# 0600/0700.  Remade before each run.
ovl_cp_fixture() {
	local d=$WORK/ovl_cp w
	rm -rf "$d"
	mkdir -p "$d/d" || return
	FIXTURE_FILES+=("$d")
	printf 'mine\n' >"$d/d/mine.txt" && chown "$SBX_UID:$SBX_UID" "$d/d" "$d/d/mine.txt" &&
		chmod 0755 "$d" "$d/d" || return
	# one set per way of the attempt (0..12)
	for w in 0 1 2 3 4 5 6 7 8 9 10 11 12; do
		mkdir "$d/d/d_acl.$w" "$d/d/d_priv.$w" &&
			printf '%s\n' "$TOKEN" | tee "$d/d/acl.$w" "$d/d/priv.$w" "$d/d/d_acl.$w/tok.txt" \
				"$d/d/d_priv.$w/tok.txt" >/dev/null &&
			: >"$d/d/d_acl.$w/name-$TOKEN" && : >"$d/d/d_priv.$w/name-$TOKEN" &&
			chown 1000:1000 "$d/d/priv.$w" "$d/d/d_priv.$w" "$d/d/d_acl.$w"/* "$d/d/d_priv.$w"/* &&
			chown "1000:$SBX_UID" "$d/d/acl.$w" "$d/d/d_acl.$w" &&
			chmod 0640 "$d/d/acl.$w" && chmod 0750 "$d/d/d_acl.$w" && chmod 0600 "$d/d/priv.$w" &&
			chmod 0700 "$d/d/d_priv.$w" && chmod 0644 "$d/d/d_acl.$w"/* "$d/d/d_priv.$w"/* || return
	done
	# system.posix_acl_access as the kernel stores it (no setfacl needed):
	# version 2, then (tag, perm, id): USER_OBJ, USER, GROUP_OBJ, MASK, OTHER.
	python3 -c 'import os, struct, sys
uid, d = int(sys.argv[1]), sys.argv[2]
def acl(o, g):
    e = [(1, o, -1), (2, 0, uid), (4, g, -1), (0x10, g, -1), (0x20, 0, -1)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i & 0xffffffff) for t, p, i in e)
for w in range(13):
    os.setxattr(f"{d}/acl.{w}", "system.posix_acl_access", acl(6, 4))
    os.setxattr(f"{d}/d_acl.{w}", "system.posix_acl_access", acl(7, 5))' "$SBX_UID" "$d/d"
}
ovl_cp_state() { tree_state "$WORK/ovl_cp/d"; }
# ovl_layer_fixture: for overlay_layer, a tree (f, g, lnk -> f, sub/x) of
# the sandbox's twice: as $WORK/ovl_layer/lower (--overlay at /ov) and, for
# the native run, as base/ov beside a look-alike of moat's layer base
# (base/.moat-layer holding "moat layer 1", base/.moat-phantom-f0).
ovl_layer_fixture() {
	local d=$WORK/ovl_layer t
	rm -rf "$d"
	mkdir -p "$d/base/ov" "$d/lower" || return
	FIXTURE_FILES+=("$d")
	for t in "$d/base/ov" "$d/lower"; do
		mkdir "$t/sub" && printf 'f\n' >"$t/f" && printf 'g\n' >"$t/g" && printf 'x\n' >"$t/sub/x" &&
			ln -s f "$t/lnk" && chown -hR "$SBX_UID:$SBX_UID" "$t" || return
	done
	printf 'moat layer 1\n' >"$d/base/.moat-layer" && : >"$d/base/.moat-phantom-f0" &&
		chmod 0 "$d/base/.moat-phantom-f0" && chmod 0755 "$d" "$d/base" || return
}
# tree_state DIR: DIR as the host sees it: every entry's metadata (with
# inode and ctime), every file's checksum, every extended attribute.
tree_state() {
	find "$1" -printf '%p %y %m %U %G %s %i %n %T@ %C@ %l\n' | LC_ALL=C sort
	find "$1" -type f -exec sha256sum {} + | LC_ALL=C sort -k2
	python3 -c 'import os, sys
for r, ds, fs in os.walk(sys.argv[1]):
    for n in sorted(ds + fs):
        p = os.path.join(r, n)
        for x in sorted(os.listxattr(p, follow_symlinks=False)):
            print(p, x, os.getxattr(p, x, follow_symlinks=False).hex())' "$1"
}
# ovl_state: every canary of ovl_fixture, as tree_state shows it.
ovl_state() {
	local c
	for c in "${OVL_CANARIES[@]}"; do
		tree_state "$c"
	done
}

# report_fixture: for the report_* attempts, $WORK/report/b (bound at /b)
# and nb (the native run's), each of the sandbox's uid with a subdirectory
# sub/, and the victim $WORK/report/victim: root's, 0700, holding file
# (root's, 0600).  Remade before each run.  report_state: the victim tree.
report_fixture() {
	local d=$WORK/report
	rm -rf "$d"
	mkdir -p "$d/b/sub" "$d/nb/sub" "$d/victim" && printf 'victim %s\n' "$TOKEN" >"$d/victim/file" &&
		chown -R "$SBX_UID:$SBX_UID" "$d/b" "$d/nb" && chmod 0755 "$d" "$d/b" "$d/nb" "$d/b/sub" "$d/nb/sub" &&
		chown 0:0 "$d/victim" "$d/victim/file" && chmod 0700 "$d/victim" && chmod 0600 "$d/victim/file" || return
	FIXTURE_FILES+=("$d")
}
report_state() { tree_state "$WORK/report/victim"; }
# report_fixture_planted: the same, with b/sub a link to the victim
# directory of the sandbox's uid, as a sandbox of an earlier run with b
# bound could have left it.
report_fixture_planted() {
	report_fixture || return
	rm -rf "$WORK/report/b/sub" && ln -s "$WORK/report/victim" "$WORK/report/b/sub" &&
		chown -h "$SBX_UID:$SBX_UID" "$WORK/report/b/sub"
}

# alog_fixture: for the audit_* attempts: $WORK/alog/b (bound at /b) with
# sub/, and nb (the native run's) with sub/ and root's empty 0600 logs, as
# moat would make them; all else of the sandbox's uid.  alias -> b: another
# spelling of the bind's path.  victim/file (0600) and link -> victim/file:
# audit_symlink's log, as an earlier run could have planted it.  src (an
# --overlay source) and, for audit_persist, p: its --persist directory,
# made a moat layer holding an upper /ov by one run of moat beforehand.
alog_fixture() {
	local d=$WORK/alog
	rm -rf "$d"
	mkdir -p "$d/b/sub" "$d/nb/sub" "$d/src" "$d/victim" && chown -R "$SBX_UID:$SBX_UID" "$d/b" "$d/nb" "$d/src" &&
		chmod 0755 "$d" "$d/b" "$d/b/sub" "$d/nb" "$d/nb/sub" "$d/src" && ln -s b "$d/alias" &&
		install -m 0600 /dev/null "$d/nb/audit.jsonl" && install -m 0600 /dev/null "$d/nb/sub/audit.jsonl" &&
		printf 'victim %s\n' "$TOKEN" >"$d/victim/file" && chmod 0600 "$d/victim/file" && chmod 0700 "$d/victim" &&
		ln -s "$d/victim/file" "$d/link" || return
	FIXTURE_FILES+=("$d")
	if [[ $name == audit_persist ]]; then
		"$MOAT" run --uid "$SBX_UID" --gid "$SBX_UID" --persist "$d/p" --overlay "$d/src" /ov -- /bin/touch /ov/x \
			</dev/null >/dev/null 2>&1 && [[ -d $d/p/o+ov ]] || return
	fi
}
alog_state() { tree_state "$WORK/alog/victim"; }
# alog_judge: the log must still hold the record of the attempt's first
# denial -- or moat refused the run (125, one line, the attempt never ran).
alog_judge() {
	if [[ $RC == 125 ]] && ! grep -qE '^(HELD|ESCAPED|UNSUPPORTED|USAGE):' "$out"; then
		(($(wc -l <"$err") == 1)) || echo "moat refused the run (125) but said $(wc -l <"$err") lines: $(head -c 300 "$err")"
		return
	fi
	grep -q "moat-esc-alog-$TOKEN" "$log" 2>/dev/null && return
	if [[ -e $log ]]; then
		echo "the sandbox erased its own audit record: $log ($(wc -l <"$log") lines) no longer holds its denied open; it begins: $(head -c 200 "$log")"
	else
		echo "the sandbox erased its own audit log: $log is gone"
	fi
}

# flood_judge: audit_flood's log must stay under 64 MiB.
flood_judge() {
	local size
	size=$(stat -c %s "$log" 2>/dev/null) || return
	((size > 64 * 1024 * 1024)) &&
		echo "the audit log grew to $((size / 1048576)) MiB ($(wc -l <"$log") records) in ${took}s of denials: no cap"
}
# pipe_fixture: loop_audit_pipe's log, a FIFO that this shell holds open
# (read and write) but never reads, until the attempt's namespace ends.
pipe_fixture() {
	local d=$WORK/alog_pipe
	exec 9>&-
	rm -rf "$d"
	mkdir -p "$d" && mkfifo -m 0600 "$d/fifo" || return
	FIXTURE_FILES+=("$d")
	exec 9<>"$d/fifo"
}

# ptmx_fixture: ptmx_pool's directory (bound read-only at /r): nr-before,
# the host's kernel.pty.nr now ("noroom" when fewer than 800 are free to a
# devpts instance that is not the initial one); ptmx_poke writes the count
# again, as nr-during, while the attempt holds its ptys.
ptmx_fixture() {
	local d=$WORK/ptmx nr max
	rm -rf "$d"
	mkdir -p "$d" && chmod 0755 "$d" || return
	FIXTURE_FILES+=("$d")
	nr=$(cat /proc/sys/kernel/pty/nr) && max=$(cat /proc/sys/kernel/pty/max) || return
	if ((max - 1024 - nr < 800)); then echo noroom >"$d/nr-before"; else echo "$nr" >"$d/nr-before"; fi
	chmod 0644 "$d/nr-before"
}
ptmx_poke() {
	local d=$WORK/ptmx
	cat /proc/sys/kernel/pty/nr >"$d/.nr" && chmod 0644 "$d/.nr" && mv "$d/.nr" "$d/nr-during"
}

# ino_fixture: for inotify_host, three host directories the sandbox sees
# read-only, each holding ino-TOKEN: $WORK/inotify/ro (--ro-bind at /r),
# $WORK/inotify/ov (--overlay at /ov), and /usr/share/moat-esc-ino, through
# an overlay on /usr in this namespace only (usr_overlay_fixture).  ino_poke:
# the host opens, reads and touches each ino-TOKEN.
usr_overlay_fixture() {
	local d=$WORK/usrovl prop
	[[ -d $d/usr.upper ]] && return
	prop=$(findmnt -no PROPAGATION --target /usr 2>/dev/null)
	[[ $prop == private ]] || { echo "usr_overlay_fixture: /usr is not a private mount here ($prop)"; return 1; }
	mkdir -p "$d/usr.upper" "$d/usr.work" && chmod 0755 "$d" || return
	FIXTURE_FILES+=("$d")
	mount -t overlay moat-esc-usr -o "lowerdir=/usr,upperdir=$d/usr.upper,workdir=$d/usr.work" /usr || return
	FIXTURE_MOUNTS+=(/usr)
}
ino_fixture() {
	local d=$WORK/inotify f
	usr_overlay_fixture || return
	rm -rf "$d" /usr/share/moat-esc-ino
	mkdir -p "$d" && chmod 0755 "$d" || return
	FIXTURE_FILES+=("$d")
	for f in "$d/ro" "$d/ov" /usr/share/moat-esc-ino; do
		mkdir -p "$f" && printf 'host\n' >"$f/ino-$TOKEN" && chmod 0755 "$f" && chmod 0644 "$f/ino-$TOKEN" || return
	done
}
ino_poke() {
	local f
	sleep 0.2
	for f in "$WORK/inotify/ro" "$WORK/inotify/ov" /usr/share/moat-esc-ino; do
		cat "$f/ino-$TOKEN" >/dev/null
		touch "$f/ino-$TOKEN"
	done
}

# lock_fixture: for lock_host: $WORK/locks/ro (--ro-bind at /r) holding
# flock.f, posix.f, ofd.f and held.f, and /usr/share/moat-esc-lock/flock.f
# (through usr_overlay_fixture's /usr), all 0644; and a host process, LOCK_HOLDER,
# holding a POSIX write lock on held.f until the fixtures go (made once,
# from the table: its pid is an argument).  lock_poke:
# from the host, each lock the attempt took is tried without waiting (an
# exclusive lock of the same kind on a read-write fd): "locked" or "free"
# in NAME.result beside it.
lock_fixture() {
	local d=$WORK/locks u=/usr/share/moat-esc-lock f i
	usr_overlay_fixture || return
	rm -rf "$d" "$u"
	mkdir -p "$d/ro" "$u" && chmod 0755 "$d" "$d/ro" "$u" || return
	FIXTURE_FILES+=("$d")
	for f in "$d/ro/flock.f" "$d/ro/posix.f" "$d/ro/ofd.f" "$d/ro/held.f" "$u/flock.f"; do
		printf 'lock\n' >"$f" && chmod 0644 "$f" || return
	done
	python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").write("ok")
time.sleep(120)' "$d/ro/held.f" "$d/holder.ready" </dev/null >/dev/null 2>&1 &
	LOCK_HOLDER=$!
	FIXTURE_PIDS+=("$!")
	disown "$!"
	for ((i = 0; i < 100; i++)); do [[ -s $d/holder.ready ]] && return; sleep 0.05; done
	return 1
}
# lock_reset: before each run, the runner's answers of the last one go.
lock_reset() { rm -f "$WORK"/locks/ro/*.result /usr/share/moat-esc-lock/*.result; }
lock_poke() {
	sleep 0.1
	python3 -c 'import fcntl, os, struct, sys
for path, kind in ((sys.argv[1] + "/flock.f", "flock"), (sys.argv[1] + "/posix.f", "posix"),
                   (sys.argv[1] + "/ofd.f", "ofd"), (sys.argv[2] + "/flock.f", "flock")):
    fd = os.open(path, os.O_RDWR)
    try:
        if kind == "flock":
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        elif kind == "posix":
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hh4xqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
        r = "free"
    except OSError:
        r = "locked"
    os.close(fd)
    res = path[:-2] + ".result"
    with open(res + ".tmp", "w") as f:
        f.write(r + "\n")
    os.chmod(res + ".tmp", 0o644)
    os.rename(res + ".tmp", res)' "$WORK/locks/ro" /usr/share/moat-esc-lock
}

# etc_host_fixture: an overlay on /etc (this namespace only, as
# etc_fixture) that gives each of ETC_HOST_FILES the token as content, the
# owner root and mode 0644 (machine-id 0444), as a host has them.
ETC_HOST_FILES=(passwd- group- machine-id fstab environment subuid subgid mailname)
etc_host_fixture() {
	local d=$WORK/etc_host f prop
	[[ -d $d/upper ]] && return
	prop=$(findmnt -no PROPAGATION --target /etc 2>/dev/null)
	[[ $prop == private ]] || { echo "etc_host_fixture: /etc is not a private mount here ($prop)"; return 1; }
	mkdir -p "$d/upper" "$d/work" || return
	FIXTURE_FILES+=("$d")
	for f in "${ETC_HOST_FILES[@]}"; do
		printf '%s\n' "$TOKEN" >"$d/upper/$f" && chmod 0644 "$d/upper/$f" || return
	done
	chmod 0444 "$d/upper/machine-id" || return
	mount -t overlay moat-esc-etc-host -o "lowerdir=/etc,upperdir=$d/upper,workdir=$d/work" /etc || return
	FIXTURE_MOUNTS+=(/etc)
}

# bytes_fixture: out_bytes's directories, b (--bind at /b) and nb (the
# native run's), of the sandbox's uid; its report is $WORK/out_bytes.report.json.
bytes_fixture() {
	local d=$WORK/out_bytes
	rm -rf "$d" "$WORK/out_bytes.report.json"
	mkdir -p "$d/b" "$d/nb" && chown "$SBX_UID:$SBX_UID" "$d/b" "$d/nb" && chmod 0755 "$d" "$d/b" "$d/nb" || return
	FIXTURE_FILES+=("$d" "$WORK/out_bytes.report.json")
}
# bytes_judge: every line of the audit log, the report and the --json
# output (moat's stdout) strict UTF-8 and JSON, with no raw C1 control,
# ESC, U+2028/9 or bidirectional control; and each holds what the attempt
# put there (its denied open, its files, its stdout), so that leaving them
# out does not pass.
bytes_judge() {
	python3 - "$log" "$WORK/out_bytes.report.json" "$out" "$TOKEN" <<'PY'
import json, re, sys
ctl = re.compile("[\u0080-\u009f\u001b\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
problems, objs = [], {}
for path, what in zip(sys.argv[1:4], ("audit log", "report", "--json output")):
    try:
        data = open(path, "rb").read()
    except OSError as e:
        problems.append(f"{what}: {e.strerror}")
        continue
    objs[what] = []
    for no, line in enumerate(data.split(b"\n"), 1):
        if not line:
            continue
        try:
            s = line.decode("utf-8", "strict")
        except UnicodeDecodeError as e:
            problems.append(f"{what} line {no}: not UTF-8 ({e.reason}: {line[max(0, e.start - 24):e.start + 6]!r})")
            continue
        m = ctl.search(s)
        if m:
            problems.append(f"{what} line {no}: a raw U+{ord(m.group()):04X} ({s[max(0, m.start() - 24):m.start()]!r}...)")
            continue
        try:
            objs[what].append(json.loads(s))
        except ValueError as e:
            problems.append(f"{what} line {no}: not JSON ({e})")
tok = sys.argv[4]
if "audit log" in objs and not any(tok in json.dumps(o) for o in objs["audit log"]) and not any(
        "audit log line" in p for p in problems):
    problems.append("the audit log has no record of the denied open")
rep = [o for o in objs.get("report", []) if isinstance(o, dict)]
if rep and len([f for f in rep[-1].get("files", []) if "/f-" in f.get("path", "")]) < 10:
    problems.append("the report lists fewer than the 10 files made")
js = [o for o in objs.get("--json output", []) if isinstance(o, dict)]
if js and "# stdout" not in js[-1].get("stdout", ""):
    problems.append("--json's stdout lacks the program's output")
if problems:
    print("; ".join(problems[:6]) + (f" (and {len(problems) - 6} more)" if len(problems) > 6 else ""))
PY
}

# rfiles_fixture: report_files's directories, b (--bind at /b) and nb (the
# native run's), of the sandbox's uid; its report is
# $WORK/report_files.report.json.  files_judge: every file the attempt
# made ("# made NAME" on its stdout) is in the report's `files`, unless
# the report says its list is incomplete.
rfiles_fixture() {
	local d=$WORK/report_files
	rm -rf "$d" "$d.report.json"
	mkdir -p "$d/b" "$d/nb" && chown "$SBX_UID:$SBX_UID" "$d/b" "$d/nb" && chmod 0755 "$d" "$d/b" "$d/nb" || return
	FIXTURE_FILES+=("$d" "$d.report.json")
}
files_judge() {
	python3 - "$WORK/report_files.report.json" "$out" <<'PY'
import json, sys
made = [l.split()[2] for l in open(sys.argv[2], errors="replace") if l.startswith("# made ")]
try:
    rep = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "replace").strip().splitlines()[-1])
except Exception as e:
    print(f"no report to read ({e})")
    sys.exit()
names = [f.get("path", "").rsplit("/", 1)[-1] for f in rep.get("files", [])]
flag = rep.get("files-truncated") or rep.get("files-omitted") or rep.get("dirs-not-walked")
missing = [m for m in made if m not in names]
if not made:
    print("the attempt made no files")
elif missing and not flag:
    print(f"the report leaves out {len(missing)} of the {len(made)} files the sandbox wrote, and says nothing of it: "
          + ", ".join(missing))
PY
}

# aio_fixture: aio_pool's directory (bound read-only at /r): max (the
# host's fs.aio-max-nr), nr-before (fs.aio-nr now; "noroom" when half the
# pool is in use) and AIO_WANT (a quarter of the pool: the attempt's
# bound); aio_poke writes fs.aio-nr again, as nr-during, while the attempt
# holds its contexts.
aio_fixture() {
	local d=$WORK/aio nr max
	rm -rf "$d"
	mkdir -p "$d" && chmod 0755 "$d" || return
	FIXTURE_FILES+=("$d")
	nr=$(cat /proc/sys/fs/aio-nr) && max=$(cat /proc/sys/fs/aio-max-nr) || return
	echo "$max" >"$d/max"
	if ((nr > max / 2)); then echo noroom >"$d/nr-before"; else echo "$nr" >"$d/nr-before"; fi
	chmod 0644 "$d/max" "$d/nr-before"
	AIO_WANT=$((max / 4 + 4096))
}
aio_poke() {
	local d=$WORK/aio
	cat /proc/sys/fs/aio-nr >"$d/.nr" && chmod 0644 "$d/.nr" && mv "$d/.nr" "$d/nr-during"
}

# late_leftover: the processes of late_children (by the marker in their
# argv) still there once moat has exited, zombies aside: "PID(STATE) ...".
late_leftover() {
	local pid state
	for pid in $(pgrep -f "esc-late-$TOKEN"); do
		state=$(awk '{print $3}' /proc/"$pid"/stat 2>/dev/null)
		[[ -n $state && $state != Z ]] && printf '%s(%s) ' "$pid" "$state"
	done
}

# hexs STRING: STRING in hex, for arguments an attempt must not find as
# themselves in its own argv or environment.
hexs() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

last_line() { local l=""; [[ -s $1 ]] && l=$(tail -n 1 "$1"); printf '%s' "${l:0:300}"; }
# Something to show when there is no verdict: stderr's last line, or stdout's.
why() { if [[ -s $2 ]]; then last_line "$2"; else last_line "$1"; fi; }
# The attempt's verdict: its last protocol line (moat may print after it).
verdict() {
	local l=""
	[[ -s $1 ]] && l=$(grep -E '^(ESCAPED|HELD|UNSUPPORTED|USAGE):' "$1" | tail -n 1)
	printf '%s' "${l:0:300}"
}

one_attempt() {
	local name=$1 bin=$BIN/esc_$1 re="" decision='deny|kill' rule="" nvict=0 ngrp=0 vcheck=""
	local args=() runner=run_limited out=$WORK/$1.out err=$WORK/$1.err log=$WORK/$1.audit.jsonl
	local native moat v skipped=0 gate=0 audit=1 mcwd=0 margs_set=0 dir c o own_uid nuid="" fixture="" state=""
	local hostbefore hostafter live=0 leftover="" left stdin_file=/dev/null t0 took timeout=$TIMEOUT mpid=0
	# side=moat, judge, wall, mexit, alog, poke, sigterm, prog: see the top.
	local side="" judge="" wall="" mexit="" alog="" poke="" sigterm="" prog=$1 why_j
	# margs: the attempt's arguments under moat (when its view names things
	# differently); mopts: moat options of this attempt; audit=0: held by an
	# emulated error, no record expected; mcwd=1: run moat from $NCWD too;
	# nuid: run natively as that uid (setpriv); fixture: a function that
	# (re)makes the attempt's host files before each run; state: a function
	# printing the host state that the moat run must leave as it was;
	# stdin_file: the attempt's stdin in both runs; live=1: a liveness check
	# (see the top), leftover: a function naming what outlived its moat run;
	# mpid=1: the moat run gets --setenv ESC_MOAT_PID <moat's own pid>.
	# menv: VAR=VALUE settings of moat's own environment for the moat run.
	local margs=() mopts=() nwrap=() mcmd=() menv=() need=()

	if ((NONROOT)); then
		case $name in
		host_loopback | abstract_unix | unix_path_host | udp_doc | raw_icmp | packet | dns_exfil | \
			sockaddr_swap | scm_foreign | unspec_overflow | host_iface | udp_autobind | \
			sockopt_moat | udp_unspec) ;;
		*)
			echo "SKIP esc_$name: non-root pass: network attempts only"
			return
			;;
		esac
	fi
	# The uid-0 pass: attempts that mean nothing when the sandbox is uid 0.
	if ((UID0)); then
		case $name in
		# The servers trust a peer of uid 0, and the sandbox *is* uid 0
		# here by the user's choice: their token would go to it rightly.
		unix_peercred)
			echo "SKIP esc_$name: uid-0 pass: the servers hand the token to any peer of uid 0, which the sandbox then is"
			return
			;;
		esac
	fi

	case $name in
	abs_path | dotdot | proc_root | race_open) args=("$SECRET") re='open|openat|openat2' ;;
	symlink_abs | symlink_rel | symlink_dir)
		args=("$SECRET") re='open|openat|openat2|symlink|symlinkat' ;;
	hardlink) args=("$SECRET") re='link|linkat|open|openat|openat2' ;;
	kill_host) nvict=6 vcheck=die re='kill|tgkill|tkill|rt_sigqueueinfo|pidfd_open|pidfd_send_signal' ;;
	ptrace_host) nvict=1 vcheck=live re='ptrace|process_vm_readv' ;;
	# Five victims, the last two leading their own group (F_SETOWN(-pgrp),
	# F_OWNER_PGRP); SIGIO must kill each natively and none under moat.
	fcntl_setown) nvict=5 ngrp=2 vcheck=die re='fcntl' rule='signal.outside-sandbox' ;;
	# A 0600 file of uid 1000 and a file below a 0700 dir of uid 1000, bound
	# read-only at /d; the sandbox runs as uid 0.  Held by host DAC (EACCES):
	# an emulated error, not a policy denial, so no audit record (audit=0).
	uid0_dac)
		dir=$WORK/uid0_dac.d
		mkdir -p "$dir/sub" && printf '%s\n' "$TOKEN" >"$dir/f" && printf '%s\n' "$TOKEN" >"$dir/sub/f" &&
			chown 1000:1000 "$dir/f" "$dir/sub" && chmod 0600 "$dir/f" && chmod 0700 "$dir/sub" &&
			chmod 0644 "$dir/sub/f" && chmod 0755 "$dir" || { echo "FAIL esc_$name: fixture"; return; }
		FIXTURE_FILES+=("$dir")
		args=("$dir/f" "$dir/sub/f") margs=(/d/f /d/sub/f) margs_set=1
		mopts=(--uid 0 --gid 0 --ro-bind "$dir" /d) audit=0
		;;
	# Natively no filter (a TRACE without a tracer is ENOSYS); under moat
	# the attempt installs its own TRACE filter (ESC_TRACE_FILTER=1).
	own_trace_filter)
		cp /bin/cat "$SECDIR/cat-outside" && chmod 0755 "$SECDIR/cat-outside" ||
			{ echo "FAIL esc_$name: fixture"; return; }
		FIXTURE_FILES+=("$SECDIR/cat-outside")
		args=("$SECDIR/cat-outside" "$SECRET") mopts=(--setenv ESC_TRACE_FILTER 1)
		re='execve|execveat' rule='fs.outside-view'
		;;
	# A host server on an abstract name.  Under moat the name is looked
	# up in the sandbox's own network namespace: ECONNREFUSED, recorded.
	abstract_unix)
		start_server "$WORK/abstract.ready" abstract "esc-abstract-$TOKEN" || { echo "FAIL esc_$name: fixture: token_server.py abstract"; return; }
		args=("esc-abstract-$TOKEN") re='connect' decision='emulate' rule='net.private-abstract'
		;;
	host_loopback)
		start_server "$WORK/tcp.ready" tcp || { echo "FAIL esc_$name: fixture: token_server.py tcp"; return; }
		args=("$SERVED") re='connect' decision='emulate' rule='net.private-loopback'
		;;
	# A datagram to TEST-NET-1 and 2001:db8::1 (sent natively where a
	# route exists; no route natively is UNSUPPORTED: --native).
	udp_doc) args=(--native) margs=() margs_set=1 re='sendto|sendmsg|connect' rule='net.deny-by-default' ;;
	# The sandbox has no CAP_NET_RAW and the private world's
	# ping_group_range is "1 0": without moat's rule the kernel still
	# refuses all four (EPERM, EACCES), so only the records show that
	# moat's rule answered -- one for each socket, not any one of them.
	raw_icmp)
		re='socket' rule='net.raw-socket'
		need=('"args":\["AF_INET","SOCK_RAW\|SOCK_CLOEXEC","1"\].*"rule":"net\.raw-socket"'
		      '"args":\["AF_INET6","SOCK_RAW\|SOCK_CLOEXEC","58"\].*"rule":"net\.raw-socket"'
		      '"args":\["AF_INET","SOCK_RAW\|SOCK_CLOEXEC","255"\].*"rule":"net\.raw-socket"'
		      '"args":\["AF_INET","SOCK_DGRAM\|SOCK_CLOEXEC","1"\].*"errno":"EACCES".*"rule":"net\.raw-socket"')
		;;
	packet) re='socket' rule='net.family|net.raw-socket' ;;
	# The token in a DNS name: to 192.0.2.53 natively (no route:
	# UNSUPPORTED), and under moat also through the sandbox's resolver.
	# Both records must name the question (need: the token in a query).
	# The host's resolver is a fixture (token_server.py dns, on
	# 127.0.0.2:53, named by a resolv.conf bound over /etc/resolv.conf in
	# this namespace only): natively the resolver path reaches it (so
	# the fixture proves it sees questions), and under moat the question
	# must reach nothing (dns_state, the fixture's questions holding the
	# token, must not change): moat's stub must not forward, whatever it
	# answers the sandbox.
	dns_exfil)
		start_server "$WORK/dns.ready" dns "$WORK/dns.log" || { echo "FAIL esc_$name: fixture: token_server.py dns"; return; }
		printf 'nameserver 127.0.0.2\noptions timeout:1 attempts:1\n' >"$WORK/resolv.conf" && chmod 0644 "$WORK/resolv.conf" &&
			mount --bind "$WORK/resolv.conf" /etc/resolv.conf || { echo "FAIL esc_$name: fixture: resolv.conf"; return; }
		FIXTURE_MOUNTS+=(/etc/resolv.conf) FIXTURE_FILES+=("$WORK/resolv.conf" "$WORK/dns.log")
		state=dns_state
		args=(--native) margs=(--resolver) margs_set=1 re='sendto' rule='net.deny-by-default'
		need=("\"query\":\"$TOKEN\\.exfil\\.example\".*\"rule\":\"net\\.deny-by-default\""
		      "\"syscall\":\"dns\".*\"query\":\"$TOKEN\\.exfil\\.example\".*\"rule\":\"net\\.dns\"")
		;;
	# Two host servers: the token's (denied) and a plain one the sandbox is
	# allowed to reach; a thread swaps the port during connect.
	sockaddr_swap)
		start_server "$WORK/plain.ready" tcp-plain || { echo "FAIL esc_$name: fixture: token_server.py tcp-plain"; return; }
		local plain=$SERVED
		start_server "$WORK/tcp.ready" tcp || { echo "FAIL esc_$name: fixture: token_server.py tcp"; return; }
		args=("$plain" "$SERVED") mopts=(--allow-net "127.0.0.1:$plain")
		re='connect' decision='emulate' rule='net.private-loopback'
		;;
	# A 120-byte AF_UNSPEC address whose tail would overrun moat's copy
	# and name fds moat then closes (16 and 17: the roots of /tmp and
	# /workspace with this runner's options), then a host directory of
	# the /usr overlay walked into their place.  Natively the file simply
	# lands in DIR.  Under moat the connect works as on Linux and the file
	# stays in /workspace: no denial, no record (audit=0); unspec_state
	# (the host directory) must not change.
	unspec_overflow)
		fixture=unspec_fixture state=unspec_state audit=0
		args=(/usr/share/moat-esc-unspec /usr/share/moat-esc-unspec)
		margs=(/usr/share/moat-esc-unspec /workspace 16 17) margs_set=1
		;;
	# A UDP socket connected to an allowed host port (no listener needed)
	# lives in the host's network namespace: interface and multicast
	# options on it must be refused.
	host_iface)
		args=(9) mopts=(--allow-net 127.0.0.1:9) re='setsockopt' rule='net.host-interface'
		;;
	# A UDP socket written to without an address is bound by the kernel
	# itself; udp_spray.py (the outside party, loopback only, only to
	# sockets of this pid namespace) sends the token to every such port.
	# Under moat the socket is in the sandbox's own namespace, unseen by
	# the spray: held by construction, no denial (audit=0).
	udp_autobind)
		python3 "$ROOT/tests/security/udp_spray.py" 30 </dev/null >/dev/null 2>&1 &
		FIXTURE_PIDS+=("$!")
		disown "$!"
		args=(5) audit=0
		;;
	# The same through a UDP socket moat connected to an allowed host
	# port, then dissolved with connect(AF_UNSPEC).
	udp_unspec)
		python3 "$ROOT/tests/security/udp_spray.py" 30 </dev/null >/dev/null 2>&1 &
		FIXTURE_PIDS+=("$!")
		disown "$!"
		args=(9 5) mopts=(--allow-net 127.0.0.1:9) audit=0
		;;
	# An option moat would perform with its own memory and standing
	# (iptables' replace).  Never natively (the host's firewall): --native
	# answers UNSUPPORTED.
	sockopt_moat) args=(--native) margs=(--moat) margs_set=1 re='setsockopt' rule='net.sockopt' ;;
	# This shell holds the secret on fd 7 during both runs.
	scm_foreign)
		exec 7<"$SECRET" || { echo "FAIL esc_$name: fixture"; return; }
		re='sendmsg' rule='net.foreign-fd'
		;;
	unix_path_host)
		start_server "$WORK/unixpath.ready" path "$SECDIR/sock" || { echo "FAIL esc_$name: fixture: token_server.py path"; return; }
		FIXTURE_FILES+=("$SECDIR/sock")
		args=("$SECDIR/sock") re='connect' rule='fs.outside-view'
		;;
	# Two root-only servers (by SO_PEERCRED, by SCM_CREDENTIALS) bound
	# read-only at /s; the sandbox runs as moat's default uid 65534.  Held by
	# the servers' own refusal, not by moat, so no audit record (audit=0).
	unix_peercred)
		dir=$WORK/peercred.d
		mkdir -p "$dir" && chmod 0755 "$dir" || { echo "FAIL esc_$name: fixture"; return; }
		FIXTURE_FILES+=("$dir")
		start_server "$WORK/peercred.ready" peercred "$dir/peercred" &&
			start_server "$WORK/passcred.ready" passcred "$dir/passcred" ||
			{ echo "FAIL esc_$name: fixture: token_server.py peercred/passcred"; return; }
		args=("$dir/peercred" "$dir/passcred") margs=(/s/peercred /s/passcred) margs_set=1
		mopts=(--ro-bind "$dir" /s) audit=0
		;;
	# This shell (pid 1) holds the secret on fd 7, and its cwd is $NCWD,
	# holding a copy of the secret, during both runs (mcwd=1).
	proc_fd_host)
		cp "$SECRET" "$NCWD/proc-fd-secret" && exec 7<"$SECRET" || { echo "FAIL esc_$name: fixture"; return; }
		FIXTURE_FILES+=("$NCWD/proc-fd-secret")
		args=(7 proc-fd-secret) mcwd=1 re='open|openat|openat2' rule='fs.outside-view'
		;;
	# A copy of the attempt itself in the secret's directory, outside the
	# view: exec'd by its host path, and raced in by RENAME_EXCHANGE.  Under
	# moat: ENOENT (fs.outside-view), and any image that is not the file
	# decided on is killed at the exec stop (exec.binary-mismatch).
	exec_host)
		cp "$BIN/esc_exec_host" "$SECDIR/exec-host" && chmod 0755 "$SECDIR/exec-host" ||
			{ echo "FAIL esc_$name: fixture"; return; }
		FIXTURE_FILES+=("$SECDIR/exec-host")
		args=("$SECDIR/exec-host") re='execve|execveat' rule='exec.binary-mismatch|fs.outside-view'
		;;
	# The hidden /etc secrets, with what this host lacks staged by an
	# overlay on /etc in this namespace (etc_fixture).  It also checks that
	# listings of /etc, /etc/ssh, /etc/ssl, /etc/security name no hidden
	# entry (ESC_ETC_LISTINGS=0 skips that part).
	etc_secrets)
		etc_fixture || { echo "FAIL esc_$name: fixture: overlay on /etc"; return; }
		[[ ${ESC_ETC_LISTINGS:-1} == 1 ]] && args=(--listings)
		re='open|openat|openat2|stat|lstat|newfstatat|statx' rule='fs.outside-view'
		;;
	# A file of the sandbox's uid in a directory bound with --ro-bind at /r;
	# natively the attempt runs as that uid on the host directory.  Held by
	# EROFS/EXDEV/EPERM, the errors of a read-only file system: emulated,
	# not policy denials, so no audit record (audit=0).  ro_state must not
	# change across the moat run.
	ro_bind_write)
		dir=$WORK/ro_bind_write
		fixture=ro_fixture state=ro_state nuid=$SBX_UID
		args=("$dir/d/f" "$dir/links") margs=(/r/f /tmp) margs_set=1
		mopts=(--ro-bind "$dir/d" /r) audit=0
		;;
	# A file in a --bind directory (/b) and in /tmp, given security.capability
	# and trusted.moat_esc through an fd and by path.  Natively as root every
	# way works; under moat EPERM (fd) or ENOTSUP (path), the answers the
	# kernel itself gives a process without CAP_SETFCAP/CAP_SYS_ADMIN:
	# emulated, not policy denials, so no audit record (audit=0).  The files
	# in /b stay for setcap_state: trusted.* cannot be read back from inside.
	setcap_xattr)
		dir=$WORK/setcap_xattr
		fixture=setcap_fixture state=setcap_state
		args=("$dir/b" "$dir/t") margs=(/b /tmp) margs_set=1
		mopts=(--bind "$dir/b" /b) audit=0
		;;
	# Our ELF whose PT_INTERP is a host program outside the view (made by
	# `esc_exec_interp --make-tool`, beside the secret): plain, execute-only
	# and with EI_CLASS flipped.  Under moat ENOENT, EACCES, and a kill at
	# the exec stop (exec.interpreter-mismatch, audited).
	exec_interp)
		dir=$WORK/exec_interp
		[[ -x $bin ]] && "$bin" --make-tool "$SECDIR/interp-tool" && mkdir -p "$dir" && chmod 0755 "$dir" ||
			{ echo "FAIL esc_$name: fixture (make probes?)"; return; }
		FIXTURE_FILES+=("$SECDIR/interp-tool" "$dir")
		args=("$SECDIR/interp-tool" "$dir") margs=("$SECDIR/interp-tool" /tmp) margs_set=1
		re='execve|execveat' rule='exec.interpreter-mismatch'
		;;
	# P bound writable at /p and P/sub/ro read-only at /p/sub/ro; moving
	# /p/sub (or the mount point, or exchanging it) must not free the file.
	# Natively (as P's owner, no mounts) every way writes it.  Held by
	# EROFS/EBUSY/EXDEV, emulated: no audit record (audit=0).  nested_state
	# must not change across the moat run.
	nested_ro)
		dir=$WORK/nested_ro
		fixture=nested_fixture state=nested_state nuid=$SBX_UID
		args=("$dir/p") margs=(/p) margs_set=1
		mopts=(--bind "$dir/p" /p --ro-bind "$dir/p/sub/ro" /p/sub/ro) audit=0
		;;
	# A host file outside the view, the sandbox's and 0644, as stdin opened
	# read-only; natively the attempt runs as its owner.  Held by EROFS
	# (the file is in no writable mount), emulated: no audit record
	# (audit=0).  stdin_state must not change across the moat run.
	reopen_stdin)
		fixture=stdin_fixture state=stdin_state nuid=$SBX_UID stdin_file=$WORK/reopen_stdin.txt audit=0
		;;
	# Our own null node bound over /dev/null (dev_fixture), so no host node
	# is ever at stake: chmod and chown of it to what it already has, and
	# utimes.  Held by EROFS (/dev is read-only), emulated: no audit record
	# (audit=0).  dev_state (the node's mode, owner, times) must not change.
	dev_chmod)
		dev_fixture || { echo "FAIL esc_$name: fixture (a node of ours over /dev/null)"; return; }
		args=("$DEV_INO") audit=0 state=dev_state
		;;
	# Canary trees of the sandbox's uid where moat's overlays take their
	# lower layers from: /etc/moat-esc-canary and /usr/share/moat-esc-canary
	# (through this namespace's overlayfs on /etc and /usr, ovl_fixture) and
	# /etc/moat-esc-ovl-canary (--overlay at /ov).  Natively as their owner.
	# The changes succeed in the upper layer: no denial, no audit record
	# (audit=0); ovl_state must not change across the moat run.
	overlay_host_write)
		fixture=ovl_fixture state=ovl_state nuid=$SBX_UID audit=0
		args=(/etc/moat-esc-canary /usr/share/moat-esc-canary /etc/moat-esc-ovl-canary)
		margs=(/etc/moat-esc-canary /usr/share/moat-esc-canary /ov) margs_set=1
		# --etc: the default /etc is an allowlist; the canary is shown.
		mopts=(--overlay /etc/moat-esc-ovl-canary /ov --etc moat-esc-canary) menv=(MOAT_SCRATCH=/etc/moat-esc-scratch)
		;;
	# Files and directories the sandbox may not read (by ACL, by mode) in a
	# directory of its own shown with --overlay (ovl_cp_fixture).  Natively
	# as root: the plain reads work.  Under moat held by host permissions:
	# emulated errors, no audit record (audit=0); ovl_cp_state must not
	# change across the moat run.
	overlay_copyup)
		fixture=ovl_cp_fixture state=ovl_cp_state audit=0
		args=("$WORK/ovl_cp/d") margs=(/ov) margs_set=1 mopts=(--overlay "$WORK/ovl_cp/d" /ov)
		;;
	# The overlay's own base directory and phantoms, from /ov (--overlay of
	# ovl_layer_fixture's tree).  Natively from a look-alike base/ov, as
	# its owner: ".." reaches base/.moat-layer.  Held by emulated errors
	# (ENOENT): no audit record (audit=0).
	overlay_layer)
		fixture=ovl_layer_fixture nuid=$SBX_UID audit=0
		args=("$WORK/ovl_layer/base/ov") margs=(/ov) margs_set=1
		mopts=(--overlay "$WORK/ovl_layer/lower" /ov)
		;;
	# FILE and DIR of the /etc canary and of the --overlay one (ovl_fixture),
	# opened read-only: the fds are the host's lower files, the sandbox's
	# own.  Natively as their owner.  Held by EROFS or by a change that
	# lands in the upper layer: no audit record (audit=0); ovl_state must
	# not change across the moat run.
	overlay_lower_fd)
		fixture=ovl_fixture state=ovl_state nuid=$SBX_UID audit=0
		c=/etc/moat-esc-ovl-canary
		args=(/etc/moat-esc-canary/fdfile /etc/moat-esc-canary/fddir "$c/fdfile" "$c/fddir")
		margs=(/etc/moat-esc-canary/fdfile /etc/moat-esc-canary/fddir /ov/fdfile /ov/fddir) margs_set=1
		mopts=(--overlay "$c" /ov --etc moat-esc-canary) menv=(MOAT_SCRATCH=/etc/moat-esc-scratch)
		;;
	# Liveness checks (live=1, see the top): a FIFO open waiting for its
	# peer; connects racing O_NONBLOCK against a full listener; children
	# born while moat kills what the first process left.
	fifo_hang | connect_race)
		dir=$WORK/$name
		mkdir -p "$dir" && chmod 0755 "$dir" || { echo "FAIL esc_$name: fixture"; return; }
		FIXTURE_FILES+=("$dir")
		args=(--native "$dir") margs=(/tmp) margs_set=1 live=1
		;;
	late_children)
		args=(--native "esc-late-$TOKEN") margs=("esc-late-$TOKEN") margs_set=1 live=1 leftover=late_leftover
		;;
	# Every readable file, link and listing below /proc, searched for the
	# host's name, pids outside the sandbox (1, the parent, and moat's own:
	# mpid=1 hands it over as ESC_MOAT_PID) and host paths (the repository,
	# moat's scratch and skeleton).  Audited: the look at /proc/<moat's pid>.
	proc_leak)
		args=("$(hexs "$(uname -n)")" "$(hexs "$ROOT")") mpid=1
		re='open|openat|openat2|stat|lstat|newfstatat|statx' rule='fs.outside-view'
		;;
	# Moat-side (side=moat, see the top): the report, written by moat as
	# root into a --bind directory, after the sandbox replaced its name by
	# a symlink to a root-only host file (symlink), a dangling one into a
	# root-only host directory (dangling), a FIFO (fifo), or its parent by
	# a symlink to that directory (parent).  Held: the victim unchanged
	# (report_state) and moat gone within 3 s (the FIFO).
	# And a link an earlier run left in place of a directory on the
	# report's path (planted: report_fixture_planted plays that run).
	report_symlink | report_dangling | report_fifo | report_parent | report_planted)
		local w=${name#report_} d=$WORK/report t f
		fixture=report_fixture state=report_state side=moat nuid=$SBX_UID prog=report_symlink wall=3
		t=$d/victim/file f=$d/b/report.json
		[[ $w == dangling ]] && t=$d/victim/new-$TOKEN
		[[ $w == parent ]] && t=$d/victim f=$d/b/sub/report.json
		[[ $w == planted ]] && t=$d/victim f=$d/b/sub/report.json fixture=report_fixture_planted
		args=(--native "$w" "$d/nb" "$t") margs=("$w" /b "$t") margs_set=1
		mopts=(--bind "$d/b" /b --report "$f")
		;;
	# Moat-side: the audit log where the sandbox can reach it.  In a --bind
	# directory, named through a symlink to it (audit_erase: unlinked) or
	# directly (audit_bind_forge: a forged log renamed over it); in the
	# --persist copy of an --overlay's upper layer (audit_persist:
	# unlinked).  Held: the log still holds the attempt's denial, or moat
	# refused the configuration (125, one line; alog_judge).  And a log
	# whose name is a symlink to a root-only host file (audit_symlink):
	# held when the file is unchanged (alog_state).
	audit_erase | audit_bind_forge | audit_persist | audit_symlink)
		local d=$WORK/alog
		fixture=alog_fixture side=moat nuid=$SBX_UID prog=audit_erase judge=alog_judge margs_set=1
		case $name in
		audit_erase)
			args=(--native unlink "$d/nb/sub/audit.jsonl") margs=(unlink /b/sub/audit.jsonl)
			alog=$d/alias/sub/audit.jsonl mopts=(--bind "$d/b" /b)
			;;
		audit_bind_forge)
			args=(--native forge "$d/nb/audit.jsonl") margs=(forge /b/audit.jsonl)
			alog=$d/b/audit.jsonl mopts=(--bind "$d/b" /b)
			;;
		audit_persist)
			args=(--native unlink "$d/nb/audit.jsonl") margs=(unlink /ov/audit.jsonl)
			alog=$d/p/o+ov/audit.jsonl mopts=(--persist "$d/p" --overlay "$d/src" /ov)
			;;
		audit_symlink) args=(--native none -) margs=(none -) alog=$d/link judge="" state=alog_state ;;
		esac
		;;
	# Moat-side: a FIFO reopened through its magic link (six spellings)
	# waits for its peer; on moat's event loop it would stop everything.
	# Each way must leave other processes served, and then moat must end
	# the run within 3 s: at --wall-time-limit 2 (loop_fifo), or at a
	# SIGTERM 1.5 s in (loop_fifo_term: the program dies of it).
	loop_fifo | loop_fifo_term)
		dir=$WORK/loop_fifo
		mkdir -p "$dir" && chmod 0777 "$dir" || { echo "FAIL esc_$name: fixture"; return; }
		FIXTURE_FILES+=("$dir")
		side=moat prog=loop_fifo args=(--native "$dir") margs=(/tmp) margs_set=1 wall=3
		if [[ $name == loop_fifo ]]; then mopts=(--wall-time-limit 2); else sigterm=1.5; fi
		;;
	# Moat-side: 2.5 s of denials, four processes, each open naming a new
	# ~4 KiB path; the audit log must stay under 64 MiB (flood_judge).
	audit_flood) side=moat args=(--native 0.3 1) margs=(2.5 4) margs_set=1 judge=flood_judge ;;
	# Moat-side: the audit log is a FIFO with a reader that never reads
	# (pipe_fixture); a second of denials fills it, then the attempt waits:
	# --wall-time-limit 2 must still end the run within 3 s.
	loop_audit_pipe)
		fixture=pipe_fixture side=moat prog=audit_flood args=(--native 0.3 1) margs=(--hold 1 1) margs_set=1
		alog=$WORK/alog_pipe/fifo mopts=(--wall-time-limit 2) wall=3
		;;
	# /proc files are moat's memfds, outside the sandbox's cgroup: held by
	# the thousand under --memory-limit 32M they must not pass 32 MiB
	# (ENOMEM past the budget, audited: limit.moat-memory).
	proc_memfd) args=(33554432) mopts=(--memory-limit 32M) re='open|openat|openat2' rule='limit.moat-memory' ;;
	# 300 ptys from /dev/ptmx, held while the runner (ptmx_poke) reads the
	# host's kernel.pty.nr: it must not rise by more than 256 (a cap per
	# sandbox).  Natively the same host ptys.  audit=0: whether a refused
	# pty is a denial is the fix's choice.
	# ptmx_reopen: one /dev/ptmx, the rest reopens of it (/proc/self/fd).
	ptmx_pool | ptmx_reopen)
		fixture=ptmx_fixture poke=ptmx_poke args=("$WORK/ptmx" 300) margs=(/r 300) margs_set=1
		[[ $name == ptmx_reopen ]] && prog=ptmx_pool args+=(reopen) margs+=(reopen)
		mopts=(--ro-bind "$WORK/ptmx" /r) audit=0
		;;
	# inotify watches on host directories seen read-only (--ro-bind, an
	# --overlay's lower layer, /usr's): the runner (ino_poke) opens, reads
	# and touches a file there; no event for it may reach the sandbox.
	# audit=0: refusing the watch or hiding the host's events is the fix's
	# choice.
	inotify_host)
		fixture=ino_fixture poke=ino_poke audit=0
		args=("ino-$TOKEN" "$WORK/inotify/ro" "$WORK/inotify/ov" /usr/share/moat-esc-ino)
		margs=("ino-$TOKEN" /r /ov /usr/share/moat-esc-ino) margs_set=1
		mopts=(--ro-bind "$WORK/inotify/ro" /r --overlay "$WORK/inotify/ov" /ov)
		;;
	# Locks on host files seen read-only (--ro-bind at /r, /usr's lower
	# layer): flock, POSIX and OFD locks the host must find free
	# (lock_poke), and a host process's lock F_GETLK must not show.
	# audit=0: private locks are not denials.
	lock_host)
		lock_fixture || { echo "FAIL esc_$name: fixture (lock_fixture)"; return; }
		fixture=lock_reset poke=lock_poke audit=0
		args=("$WORK/locks/ro" /usr/share/moat-esc-lock "$LOCK_HOLDER")
		margs=(/r /usr/share/moat-esc-lock "$LOCK_HOLDER") margs_set=1
		mopts=(--ro-bind "$WORK/locks/ro" /r)
		;;
	# Pid-taking calls that run in the kernel: capget (pid_host, audited
	# like the other pid calls) and a CPU clock naming a pid (pid_clock:
	# clock_gettime, clock_getres, timer_create; audit=0, a filter may
	# answer EINVAL itself).  Of pid 1 (this shell) and moat (mpid=1).
	pid_host) args=(--native capget 1) margs=(capget 1) margs_set=1 mpid=1 re='capget' ;;
	pid_clock) prog=pid_host args=(--native clock 1) margs=(clock 1) margs_set=1 mpid=1 audit=0 ;;
	# Host files /etc still shows (account backups, machine-id, fstab...),
	# each staged with the token (etc_host_fixture).  audit=0: an allowlist
	# answers ENOENT for what it does not list, whether or not it records.
	etc_host)
		etc_host_fixture || { echo "FAIL esc_$name: fixture: overlay on /etc"; return; }
		args=("${ETC_HOST_FILES[@]/#//etc/}") audit=0
		;;
	# Moat-side: names and output with raw 0x9b, U+009B, ESC, U+202E and
	# 0xff (comm, exe, a denied path, files in /b and /workspace, stdout)
	# in the audit log, the report and --json (bytes_judge).
	out_bytes)
		fixture=bytes_fixture side=moat judge=bytes_judge
		args=(--native "$WORK/out_bytes/nb") margs=(/b) margs_set=1
		mopts=(--bind "$WORK/out_bytes/b" /b --report "$WORK/out_bytes.report.json" --json)
		;;
	# Moat-side: files the report's `files` must list or flag as left out:
	# .moat-* names in /workspace, /tmp and a --bind, files 70 and 300
	# directories deep, and one at the end of a ~4,070-byte path (files_judge).
	report_files)
		fixture=rfiles_fixture side=moat judge=files_judge
		args=(--native "$WORK/report_files/nb") margs=(/b) margs_set=1
		mopts=(--bind "$WORK/report_files/b" /b --report "$WORK/report_files.report.json")
		;;
	# Moat-side: 32 threads open /proc/self/smaps of ~65,000 mappings
	# (each most of a second of moat's loop): --wall-time-limit 2 must
	# still end the run within 3 s (the old moat: 3.3-3.8 s; a moat that
	# ends on time takes ~2.1 s here).
	loop_smaps) side=moat args=(--native 64) mopts=(--wall-time-limit 2) wall=3 ;;
	# io_setup reserves events of the host's AIO pool (fs.aio-max-nr): held
	# for a quarter of it and a little more (never half), the host's
	# fs.aio-nr must not rise by a quarter (aio_poke).  audit=0: refused
	# (audited as the table's) or capped is the fix's choice.
	aio_pool)
		aio_fixture || { echo "FAIL esc_$name: fixture (aio_fixture)"; return; }
		fixture=aio_fixture poke=aio_poke args=("$WORK/aio" "$AIO_WANT") margs=(/r "$AIO_WANT") margs_set=1
		mopts=(--ro-bind "$WORK/aio" /r) audit=0
		;;
	io_uring) args=("$SECRET") re='io_uring_setup|io_uring_enter|io_uring_register' ;;
	# What moat names an i386/x32 call in its record is its own business:
	# any kill record will do.  Without an i386 entry the int $0x80 faults
	# before seccomp sees a syscall: there is then nothing for moat to hold
	# or audit (gate=1).  x32 is different: seccomp sees the x32 bit even
	# when the ABI is compiled out, so moat must kill and audit it anyway.
	int80 | x32)
		args=("$SECRET") re='[^"]*' decision='kill'
		[[ $name == int80 ]] && gate=1
		;;
	seccomp_listener) args=("$SECRET") re='seccomp|prctl' ;;
	tiocsti) runner=run_tty re='ioctl' ;;
	ctty) runner=run_tty re='ioctl|open|openat|getsid' ;;
	# moat's terminal, free (no session's), swapped onto an fd of our own
	# pty between moat's check and the kernel's TIOCSCTTY.
	ctty_race) runner=run_pty re='ioctl' ;;
	inherited_fd) exec 5<"$SECRET" && re='pidfd_open|pidfd_getfd' ;;
	host_env) re='open|openat|openat2' ;;
	list_home) re='open|openat|openat2|stat|lstat|newfstatat|statx|getdents64' ;;
	# Set-id bits on a file the sandbox makes in its /tmp (natively: a
	# scratch directory of ours): dropped silently under moat (audit=0).
	setid_file)
		dir=$WORK/setid
		mkdir -p "$dir" && chmod 0777 "$dir" || { echo "FAIL esc_$name: fixture"; return; }
		FIXTURE_FILES+=("$dir")
		args=("$dir") margs=(/tmp) margs_set=1 audit=0
		;;
	# A pty of the host, by number: its master is held by a process of the
	# sandbox's uid (pts_fixture), so host permissions let the attempt in
	# natively.  Held by ENOENT (/dev/pts has only ptys whose master the
	# sandbox holds), an emulated error: no audit record (audit=0).
	pts_host)
		pts_fixture || { echo "FAIL esc_$name: fixture (a host pty)"; return; }
		args=("$PTS_N") audit=0 nuid=$SBX_UID
		;;
	*) echo "FAIL esc_$name: no entry in run.sh's table (args, audited syscalls)"; return ;;
	esac
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
		# Held by an emulated error: no record is required (see the table).
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
	# need: further records the attempt's table requires (regexes).
	for c in "${need[@]}"; do
		if ! grep -Eq "$c" "$log"; then
			echo "FAIL esc_$name: held ($moat) but no audit record matches $c"
			return
		fi
	done
	echo "PASS esc_$name"
}

if [[ ${1:-} == --inner ]]; then
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
for name in "${names[@]}"; do
	extra=()
	[[ $name == host_env ]] && extra=(MOAT_HOST_SECRET="$TOKEN")
	result=$(env "${extra[@]}" unshare -pf --mount-proc --kill-child bash "$SELF" --inner "$name" 2>&1)
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
