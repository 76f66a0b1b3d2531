# net-private-nonroot: the same with moat run as 65534 (where the suite runs as root).
[ ${#AS_SANDBOX_UID[@]} -gt 0 ] || not_run
net_private "${AS_SANDBOX_UID[@]}"
