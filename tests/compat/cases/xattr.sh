# xattr: extended attributes: user.* set, read, listed, removed, on files,
# through symlinks, refused on a symlink itself (natively this runs as root:
# no other namespace here)
case_ 'cd "$1" || exit 90
python3 - <<"EOF"
import errno, os
def t(label, f):
    try:
        print(label, "->", f())
    except OSError as e:
        print(label, "->", errno.errorcode[e.errno])
open("x", "w").close()
os.symlink("x", "lx")
os.mkdir("d")
t("set", lambda: os.setxattr("x", "user.a", b"1"))
t("get", lambda: os.getxattr("x", "user.a"))
t("set create exists", lambda: os.setxattr("x", "user.a", b"2", os.XATTR_CREATE))
t("replace missing", lambda: os.setxattr("x", "user.q", b"2", os.XATTR_REPLACE))
t("get missing", lambda: os.getxattr("x", "user.zz"))
t("lset on symlink", lambda: os.setxattr("lx", "user.b", b"1", follow_symlinks=False))
t("set via symlink", lambda: os.setxattr("lx", "user.c", b"3"))
t("list via symlink", lambda: sorted(os.listxattr("lx")))
t("dir", lambda: (os.setxattr("d", "user.d", b"4"), os.listxattr("d")))
t("big value", lambda: len(os.setxattr("x", "user.big", b"v" * 3000) or os.getxattr("x", "user.big")))
t("remove", lambda: os.removexattr("x", "user.a"))
t("remove again", lambda: os.removexattr("x", "user.a"))
t("list after", lambda: sorted(os.listxattr("x")))
t("fd", lambda: (os.setxattr(os.open("x", os.O_RDONLY), "user.f", b"5"), os.getxattr("x", "user.f")))
EOF'
