# toolchain-0700: a toolchain --ro-bind'ed from under a 0700 host directory
# (as ~/.rustup or ~/.cargo under a private home) runs under the sandbox's
# uid: its binary and its script, by path and from PATH.  The exec goes by
# fd, so the kernel never walks the host directories above the bind.
priv=$W/toolchain-private
rm -rf "$priv"
mkdir -p "$priv/tc/bin" && chmod 0700 "$priv" || exit 1
printf '#include <stdio.h>\nint main(int c, char **v) { printf("hello-tc %%d\\n", c); return 0; }\n' |
    gcc -O2 -o "$priv/tc/bin/hello-tc" -x c - || exit 1
printf '#!/bin/sh\necho "script-tc $#"\nexec hello-tc "$@"\n' >"$priv/tc/bin/script-tc"
chmod 0755 "$priv/tc/bin/hello-tc" "$priv/tc/bin/script-tc"
script='PATH=$2/bin:$PATH
hello-tc a b
"$2/bin/hello-tc"
script-tc x; echo "rc=$?"
sh -c "hello-tc from-sh"'
MOAT_ARGS=(--ro-bind "$priv/tc" /opt/tc)
run_native "$CASE" "$script" "$priv/tc"
run_moat "$CASE" "$script" /opt/tc
report "$(compare "$CASE")"
