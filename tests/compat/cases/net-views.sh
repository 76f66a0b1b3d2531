# net-views: the sandbox's own network as its programs look at it —
# /proc/net (tcp, tcp6, if_inet6) from the sandbox's network namespace:
# `ss -ltn` and `netstat -ltn` list its listeners, and the JVM, which turns
# IPv6 off without /proc/net/if_inet6, serves on ::1 (issue 15).
MOAT_ARGS=(--ro-bind "$ROOT/tests/compat" /c)
case_ 'p=/c/net_views.py; [ -e $p ] || p='"$ROOT"'/tests/compat/net_views.py
exec python3 "$p"'
