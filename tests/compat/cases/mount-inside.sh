# mount-inside: mount(8) as the root inside (issue 15): a tmpfs with a
# size (writes past it fail with ENOSPC) and a mode, a bind of a directory,
# a bind remounted read-only, both unmounted (the tmpfs's contents gone,
# the bind's source kept).  Natively as root in a mount namespace of the
# case's own (unshare -m).
MOAT_ARGS=(--uid 0 --gid 0)
PREFIX=(unshare -m --propagation private)
case_ 'cd "$1" || exit 90
mkdir -p m src/sub b && echo hello > src/sub/f || exit 91
mount -t tmpfs -o size=1m,mode=0750 tmpfs m && echo "tmpfs: mounted"
stat -c "mode %a" m; echo data > m/x && cat m/x
dd if=/dev/zero of=m/big bs=64k count=32 2>/dev/null; echo "past the size: $?"
mount --bind src b && cat b/sub/f
mount -o remount,ro,bind b && { echo y > b/y 2>/dev/null || echo "bind read-only"; }
umount m && echo "tmpfs: $(ls m | wc -l) left"
umount b && ls b | wc -l; cat src/sub/f'
