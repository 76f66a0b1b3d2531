# cp-a: cp -a: a tree with links, modes and times, then compared
# cp sets permissions with fsetxattr(fd, "system.posix_acl_access"): moat
# answers EOPNOTSUPP for system.* (as a filesystem without ACLs), and cp
# falls back to fchmod silently, as on such a filesystem.
case_ 'cd "$1" && mkdir -p t/d/e && cd t || exit 90
echo one > f && ln f h && ln -s f s && ln -s d/e de && echo two > d/e/g && chmod 604 d/e/g && chmod 711 d
find . -exec touch -h -d "2019-09-09 09:09:09" {} +
cd ..
cp -a t t2 2>&1; echo "cp -a: $?"
cp -a t/. t3 2>&1; echo "cp -a dir/.: $?"
cp -r t t4 2>&1; echo "cp -r: $?"
for c in t t2 t3; do echo "== $c"; (cd $c && find . -printf "%y %n %m %TY-%Tm-%Td %p %l\n" | sort); done
echo "== t4"; (cd t4 && find . -printf "%y %n %m %p %l\n" | sort)
diff -r t t2 && echo same
mkdir l && cp -a t/s t/de l 2>&1 && find l -printf "%y %p %l\n" | sort
cp -aL t/s deref 2>&1 && cat deref
mkdir pl && cp -a t/f t/h pl 2>&1 && stat -c "%h %a %n" pl/* | sort'
