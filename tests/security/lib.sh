# tests/security/lib.sh — fixtures that more than one attempt's expectation
# file (esc_NAME.expect) uses, sourced by run.sh.  An attempt's own
# fixtures are in its file.  FIXTURE_PIDS, FIXTURE_FILES and FIXTURE_MOUNTS
# (run.sh) are what stop_fixtures undoes when the attempt is done.

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
SERVED=""

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

# usr_overlay_fixture: an overlay on /usr in this namespace only (made
# once), so that a fixture may put files below /usr (inotify_host,
# lock_host) without touching the host's.
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
# ovl_state: every canary of ovl_fixture, as tree_state shows it.
ovl_state() {
	local c
	for c in "${OVL_CANARIES[@]}"; do
		tree_state "$c"
	done
}
