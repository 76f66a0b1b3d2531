# overlay-fts: the tree walkers over an overlay's lower directories — tar x
# over existing files, find -delete, rm -rf of a tree deeper than fts's ring
# of four directory fds (it goes back up through ".." and compares what it
# finds with what it recorded, across the copy-ups its own removals cause).
# Natively the script runs on a fresh copy of the tree; under moat on the
# same tree as the lower layer of --overlay.  The host's tree must not change.
src=$W/fts-src in=$W/fts-in
rm -rf "$src" "$in" "$W/fts-mod" && mkdir -p "$src" "$in" "$W/fts-mod" || report "cannot make the tree"
(
    cd "$src" || exit 1
    for top in a z; do
        p=$top
        for l in b c d e f g h; do
            mkdir -p "$p/s" && echo "$p" >"$p/y.dat" && echo t >"$p/x.tmp" && echo s >"$p/s/k"
            p=$p/$l
        done
        mkdir -p "$p" && echo leaf >"$p/leaf"
    done
) || report "cannot fill the tree"
# the archive: a's files with other contents, and one new file
cp -a "$src/a" "$W/fts-mod/" && find "$W/fts-mod" -name y.dat -exec sh -c 'echo changed >>"$1"' sh {} \; &&
    echo new >"$W/fts-mod/a/b/new" && tar cf "$in/mod.tar" -C "$W/fts-mod" a || report "cannot make the archive"
before=$(cd "$src" && find . -printf "%y %m %p\n" | sort | md5sum)
script='cd "$2" || exit 90
tar xf "$3" 2>&1; echo "tar x: $?"
find . -name "*.tmp" -delete 2>&1; echo "find -delete: $?"
rm -rf z 2>&1; echo "rm -rf z: $?"
rm -rf a/b/c/d 2>&1; echo "rm -rf a/b/c/d: $?"
find . -printf "%y %m %p\n" | sort
find . -type f -exec md5sum {} + | sort'
nat=$W/overlay-fts.native.tree
rm -rf "$nat" && cp -a "$src" "$nat" || report "cannot copy the tree"
run_native "$CASE" "$script" "$nat" "$in/mod.tar"
MOAT_ARGS=(--uid 0 --gid 0 --overlay "$src" /t --ro-bind "$in" /in)
run_moat "$CASE" "$script" /t /in/mod.tar
msg=$(compare "$CASE")
[ "$(cat "$W/$CASE.native.rc")" = 0 ] || msg="${msg:+$msg; }native run failed: $(head -c 200 "$W/$CASE.native.err")"
after=$(cd "$src" && find . -printf "%y %m %p\n" | sort | md5sum)
[ "$before" = "$after" ] || msg="${msg:+$msg; }the host's tree changed"
chmod -R u+w "$src" "$nat" 2>/dev/null
rm -rf "$src" "$in" "$W/fts-mod" "$nat"
report "$msg"
