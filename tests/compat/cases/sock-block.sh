# sock-block: blocking socket calls do not stop the sandbox
MOAT_ARGS=(--ro-bind "$ROOT/tests/compat" /c)
case_ 'p=/c/sock_block.py; [ -e $p ] || p='"$ROOT"'/tests/compat/sock_block.py
exec python3 "$p" "$1"'
