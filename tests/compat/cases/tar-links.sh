# tar-links: tar x of symlinks and hard links
# The archive is made inside the case (natively, or in the sandbox), then
# extracted: link counts, link targets, modes, mtimes (of links too) and data.
# FAILS UNDER MOAT (moat's bug, kept as its report): tar's fchmodat(...,
# AT_SYMLINK_NOFOLLOW) on each extracted symlink is done by glibc 2.36 as
# openat(O_PATH|O_NOFOLLOW) + fstatat(fd, "", AT_EMPTY_PATH) -> EOPNOTSUPP,
# which tar ignores; moat answers that openat with ELOOP
# (fs-emulation/sys_open.c:do_open, the O_PATH branch), tar reports
# "Cannot change mode ... Too many levels of symbolic links" and exits 2.
case_ 'cd "$1" && mkdir src && cd src || exit 90
echo a > f && chmod 640 f && ln f hard && ln hard hard2
ln -s f sym && ln -s sub dirlink && ln -s /etc/hostname abs && ln -s missing dangling
mkdir -p sub/deep && echo x > sub/deep/g && ln sub/deep/g sub/g2 && ln -s ../f sub/up
mkfifo pipe && chmod 750 sub
seq 100000 > big && ln big sub/big
find . -exec touch -h -d "2020-02-02 02:02:02" {} +
cd .. && tar cf a.tar -C src . && tar czf a.tgz -C src . || exit 91
mkdir out outz
tar xf a.tar -C out 2>&1; echo "tar xf: $?"
tar xzf a.tgz -C outz 2>&1; echo "tar xzf: $?"
for o in out outz; do
    (cd $o && find . -printf "%y %n %m %TY-%Tm-%Td %p %l\n" | sort && find . -type f -exec md5sum {} + | sort)
done | md5sum
cd out && find . -printf "%y %n %m %TY-%Tm-%Td %p %l\n" | sort && find . -type f -exec md5sum {} + | sort
cat sym dirlink/g2 sub/up; [ sub/big -ef big ] && echo same-inode
tar tvf ../a.tar | awk "{ print \$1, \$3, \$6, \$7, \$8 }" | sort | md5sum'
