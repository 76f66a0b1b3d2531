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

# ---------------------------------------------------------------------------
# Inside the pid namespace: one attempt, native then moat.  Runs as pid 1, so
# kill(-1) from an attempt cannot reach this shell.  Commands are started
# from this shell directly (no subshells, no pipes around them): anything else
# in the namespace is fair game for a native kill(-1).

# run_limited OUT ERR CMD...: run CMD with a watchdog; sets RC.
run_limited() {
	local out=$1 err=$2 pid wd
	shift 2
	rm -f "$out.timeout"
	"$@" >"$out" 2>"$err" <"${stdin_file:-/dev/null}" &
	pid=$!
	(sleep "$TIMEOUT"; kill -KILL "$pid" && : >"$out.timeout") >/dev/null 2>&1 &
	wd=$!
	disown "$wd"
	wait "$pid" 2>/dev/null
	RC=$?
	kill -KILL "$wd" 2>/dev/null
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
		mopts=(--overlay /etc/moat-esc-ovl-canary /ov) menv=(MOAT_SCRATCH=/etc/moat-esc-scratch)
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
		mopts=(--overlay "$c" /ov) menv=(MOAT_SCRATCH=/etc/moat-esc-scratch)
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
	[[ -x $bin ]] || { echo "FAIL esc_$name: $bin not built (make probes)"; return; }
	((margs_set)) || margs=("${args[@]}")
	if ((UID0)); then
		own_uid=0
		for o in "${mopts[@]}"; do [[ $o == --uid || $o == --uid=* ]] && own_uid=1; done
		((own_uid)) || mopts+=(--uid 0 --gid 0)
	fi
	[[ -n $nuid && $nuid != 0 ]] && nwrap=(setpriv --reuid="$nuid" --regid="$nuid" --clear-groups --)
	((live)) && audit=0 timeout=$LIVE_TIMEOUT

	# 1. natively, from a scratch cwd beside the secret
	[[ -z $fixture ]] || $fixture || { echo "FAIL esc_$name: fixture ($fixture)"; return; }
	start_victims "$nvict" "$ngrp"
	cd "$NCWD" || return
	$runner "$out" "$err" "${nwrap[@]}" "$bin" "${args[@]}" "${VICTIMS[@]}"
	cd "$ROOT" || return
	native=$(verdict "$out")
	[[ $VERBOSE == 1 ]] && echo "  esc_$name native (exit $RC): $native"
	if ((live)) && [[ $RC != 77 || $native != UNSUPPORTED:* ]]; then
		echo "FAIL esc_$name: natively the liveness workload did not run as it should (exit $RC): ${native:-$(why "$out" "$err")}"
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
	rm -f "$log"
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
	TIMEOUT=$timeout $runner "$out" "$err" "${mcmd[@]}" --ro-bind "$BIN" /t --audit-log "$log" \
		--setenv ESC_TOKEN "$TOKEN" "${mopts[@]}" -- /t/esc_"$name" "${margs[@]}" "${VICTIMS[@]}"
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
