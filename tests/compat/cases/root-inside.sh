# root-inside: the sandbox's root (--uid 0) switches users as root does
# (setresuid, setgroups, setpriv, su and runuser through PAM, an apt-style
# drop to _apt), a process that gave up root gets only
# what its new ids may have (a file root made 0600 stays closed to it, a
# file it makes is its own), Debian's system accounts have their names, and
# tar restores the owners of an archive with several (chown, fchown, and
# glibc's chmod through /proc/self/fd), root passes the modes of its own
# files and of the other ids' (a 0700 directory of uid 1000, a 0400 file,
# a sticky /tmp: DAC override in the sandbox's own layers).
# Natively this runs as root.
MOAT_ARGS=(--uid 0 --gid 0)
case_ 'cd "$1" || exit 90
python3 - <<"EOF"
import errno, os, pwd, grp, sys
print("ids", os.getuid(), os.getgid())
print("accounts", pwd.getpwnam("daemon").pw_uid, pwd.getpwnam("_apt").pw_uid, grp.getgrnam("bin").gr_gid)
sys.stdout.flush()
os.mkdir("shared", 0o777)
os.chmod("shared", 0o777)
with open("secret", "w") as f:
    f.write("root only\n")
os.chmod("secret", 0o600)
pid = os.fork()
if pid == 0:
    os.setgroups([4])
    os.setresgid(1000, 1000, 1000)
    os.setresuid(1000, 1000, 1000)
    print("child", os.getresuid(), os.getresgid(), os.getgroups())
    try:
        open("secret").read()
        print("secret: read")
    except OSError as e:
        print("secret:", errno.errorcode[e.errno])
    with open("shared/mine", "w") as f:
        f.write("x")
    try:
        os.setuid(0)
        print("back to root")
    except OSError as e:
        print("setuid(0):", errno.errorcode[e.errno])
    sys.stdout.flush()
    os._exit(0)
sys.stdout.flush()
os.waitpid(pid, 0)
st = os.stat("shared/mine")
print("owner", st.st_uid, st.st_gid)
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
print("status", status["Uid"].split(), status["Gid"].split())
EOF
setpriv --reuid=1000 --regid=1000 --clear-groups id -u
su -s /bin/sh nobody -c "id -un" </dev/null; runuser -u daemon -- id -u
# apt-style: root prepares a 0700 directory of _apt, then drops to _apt
# (setgroups, setresgid, setresuid) to download into it
mkdir -m 0700 partial && chown _apt:root partial && touch rootonly && chmod 0600 rootonly &&
    setpriv --reuid=_apt --regid=nogroup --clear-groups sh -c "id -un; touch partial/pkg.deb && echo apt writes;
    cat rootonly 2>/dev/null || echo apt cannot read root files"
setpriv --reuid=1000 --regid=1000 --clear-groups sh -c "touch shared/by-setpriv; stat -c %u:%g shared/by-setpriv"
# listings moat makes (/etc without its hidden names, /proc) and a
# process that gave up root looking at its own fds (not dumpable)
setpriv --reuid=1000 --regid=1000 --clear-groups sh -c "ls /etc >/dev/null && echo ls etc: ok;
    ls /proc/self/ >/dev/null && echo ls proc: ok; exec 7<shared; basename \$(readlink /proc/self/fd/7);
    ls /proc/self/fd | grep -qx 7 && echo fd 7 listed; python3 -c \"import os; print(oct(os.fstat(7).st_mode))\";
    ps -o uid= -p \$\$"
# a directory root closed (0700) stays closed to another id below it,
# whatever moat looked up there for root before (its dentry cache)
mkdir -p closed/in && echo inner > closed/in/f && chmod 700 closed && cat closed/in/f &&
    setpriv --reuid=1000 --regid=1000 --clear-groups sh -c "cat closed/in/f 2>/dev/null || echo closed: denied"
mkdir -p t/src && touch t/src/a t/src/b && chown 1000:1000 t/src/a && chown 33:33 t/src/b &&
    chmod 0604 t/src/a && tar cf t.tar -C t src || exit 91
mkdir x && tar xpf t.tar -C x; echo "tar x: $?"
stat -c "%n %u:%g %a" x/src x/src/a x/src/b
# root over the files of other ids: a 0700 directory of uid 1000 with a 0400
# file, archived and restored, then read, changed and removed by root
mkdir -p t/priv && echo secret > t/priv/s && chown -R 1000:1000 t/priv && chmod 0400 t/priv/s &&
    chmod 0700 t/priv && tar cf p.tar -C t priv || exit 92
mkdir y && tar xpf p.tar -C y; echo "tar x priv: $?"
stat -c "%n %u:%g %a" y/priv y/priv/s
cat y/priv/s; echo more >> y/priv/s && echo appended; touch -d 2001-01-01 y/priv/s && stat -c "%y" y/priv/s | cut -c1-4
test -w y/priv/s && echo "access W: yes"; ls y/priv; mv y/priv/s y/priv/s2 && ls y/priv
rm -rf y && echo "rm -rf: $?"
# a sticky directory: root removes a file of another id there
d=/tmp/sticky.$$ && mkdir -m 1777 $d && setpriv --reuid=1000 --regid=1000 --clear-groups touch $d/u &&
    rm $d/u && echo "sticky rm: ok"; rm -rf $d'
