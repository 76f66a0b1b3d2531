# tar-usr-include: tar of /usr/include: the same archive bytes
# Natively as the sandbox's uid (PREFIX: AS_SANDBOX_UID), as it is under moat.
# Strict on purpose: names, sizes, modes, mtimes, owners (uid and the names
# looked up in /etc/passwd and /etc/group) and the directory order must all
# be what the host gives.  A difference is a real difference in the view.
PREFIX=("${AS_SANDBOX_UID[@]}")
case_ 'tar c /usr/include 2>/dev/null | md5sum'
