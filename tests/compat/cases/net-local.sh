# net-local: servers and clients on the loopback, inside one sandbox.
# The network: issue 4, docs/network.md.
# Servers and clients inside one sandbox over its loopback: the same output
# natively (the host's loopback) and under moat (the sandbox's own).
MOAT_ARGS=(--ro-bind "$ROOT/tests/compat" /c)
case_ 'p=/c/net_local.py; [ -e $p ] || p='"$ROOT"'/tests/compat/net_local.py
exec python3 "$p"'
