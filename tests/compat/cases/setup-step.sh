# setup-step: a setup step that fails names itself (issue 12).
# The first process's own setup steps, made to fail for real: its seccomp
# filter under an outer filter that denies seccomp() with EPERM, and (where
# user namespaces may be made) its setgroups as root of one that denies it.
# moat says the step, exits 125, and gives no kernel-version hint for them.
# Under moat only.
d=$W/setup-step msg="" rc=0
mkdir -p "$d"
cat >"$d/deny_seccomp.py" <<'PY'
import ctypes, os, platform, struct, sys
arch = {"x86_64": (0xC000003E, 317), "aarch64": (0xC00000B7, 277)}.get(platform.machine())
if not arch:
    sys.exit(3)
# arch other than ours: allow; nr == seccomp: ERRNO(EPERM); else allow
ins = [(0x20, 0, 0, 4), (0x15, 0, 3, arch[0]), (0x20, 0, 0, 0), (0x15, 0, 1, arch[1]),
       (0x06, 0, 0, 0x00050000 | 1), (0x06, 0, 0, 0x7FFF0000)]
buf = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in ins))
prog = struct.pack("HxxxxxxP", len(ins), ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.c_char_p(prog), 0, 0):
    sys.exit("deny_seccomp: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])
PY
timeout -k 5 60 $PY "$d/deny_seccomp.py" "$MOAT" run -- true </dev/null >/dev/null 2>"$d/seccomp.err"
rc=$?
if [ "$rc" = 3 ]; then
    echo "  (setup-step: no seccomp filter for $(uname -m) here: the seccomp step not checked)"
else
    [ "$rc" = 125 ] || msg="seccomp: exit $rc, want 125"
    grep -q '^moat: cannot start the sandbox: seccomp filter: Operation not permitted' "$d/seccomp.err" ||
        msg="${msg:+$msg; }seccomp: the step is not named: $(head -c 300 "$d/seccomp.err" | tr '\n' '|')"
    ! grep -q 'Linux >=' "$d/seccomp.err" ||
        msg="${msg:+$msg; }seccomp: a kernel-version hint for EPERM"
fi
if unshare -Ur true 2>/dev/null; then
    timeout -k 5 60 unshare -Ur "$MOAT" run --uid 0 --gid 0 -- true </dev/null >/dev/null 2>"$d/setgroups.err"
    rc=$?
    [ "$rc" = 125 ] || msg="${msg:+$msg; }setgroups: exit $rc, want 125"
    grep -q '^moat: cannot start the sandbox: setgroups: ' "$d/setgroups.err" ||
        msg="${msg:+$msg; }setgroups: the step is not named: $(head -c 300 "$d/setgroups.err" | tr '\n' '|')"
    ! grep -q 'Linux >=' "$d/setgroups.err" ||
        msg="${msg:+$msg; }setgroups: a kernel-version hint"
else
    echo "  (setup-step: no user namespace may be made here: the setgroups step not checked)"
fi
report "$msg"
