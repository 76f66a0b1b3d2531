# find-usr-lib: find over a big read-only tree: same counts as native
# Natively as the sandbox's uid (PREFIX: AS_SANDBOX_UID), as it is under moat.
PREFIX=("${AS_SANDBOX_UID[@]}")
case_ 'find /usr/lib | wc -l; find /usr/lib -type l | wc -l; find /usr/lib -type d | wc -l'
