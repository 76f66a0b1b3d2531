# overlay-usr: the overlay over /usr and /etc, and --persist: moat's own view
# Natively these writes would change the host, so only the moat runs are
# checked: a module written into /usr/lib/python3/dist-packages imports, the
# host never sees it, the next run neither, a --persist run's successor does;
# /etc/hosts takes an edit; /etc/passwd is the synthetic one.
msg=""
mod=/usr/lib/python3/dist-packages/moat_compat_ovl.py
orun() { timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run --uid 0 --gid 0 "$@" </dev/null 2>"$W/overlay-usr.err"; }
[ -e "$mod" ] && msg="$msg; $mod exists on the host before the test"
out=$(orun -- sh -c 'echo "print(6 * 7)" >'"$mod"' && python3 -c "import moat_compat_ovl"
    echo "10.9.8.7 db.internal" >>/etc/hosts && getent hosts db.internal | tr -s " "
    grep -c "^sandbox:" /etc/passwd')
[ "$out" = "$(printf '42\n10.9.8.7 db.internal\n0')" ] ||
    msg="$msg; inside: $(tr '\n' '|' <<<"$out") $(head -c 200 "$W/overlay-usr.err")"
[ -e "$mod" ] && msg="$msg; the module reached the host's /usr"
grep -q db.internal /etc/hosts && msg="$msg; the edit reached the host's /etc/hosts"
out=$(orun -- sh -c '[ -e '"$mod"' ] && echo kept; grep -c db.internal /etc/hosts')
[ "$out" = 0 ] || msg="$msg; a later run sees the first one's writes: $out"
layer=$W/layer
orun --persist "$layer" -- sh -c 'echo "print(43)" >'"$mod"'; rm /etc/motd' >/dev/null
out=$(orun --persist "$layer" -- sh -c 'python3 -c "import moat_compat_ovl"; [ -e /etc/motd ] || echo gone')
[ "$out" = "$(printf '43\ngone')" ] || msg="$msg; --persist: the second run got $(tr '\n' '|' <<<"$out")"
[ -e "$mod" ] && msg="$msg; --persist wrote the host's /usr"
[ -e "$layer/usr/lib/python3/dist-packages/moat_compat_ovl.py" ] || msg="$msg; --persist: no copy in the layer"
report "${msg#; }"
