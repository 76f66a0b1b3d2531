# pip-offline: pip without network access fails fast, and moat says why.
# pip install with no allow list fails fast (pip.conf: no retries) and moat
# says why.  Under moat only: natively it would use the network.
msg=""
out=$(timeout -k 5 "$CASE_TIMEOUT" "$MOAT" run -- python3 -c '
import subprocess, time
t = time.time()
r = subprocess.run(["python3", "-m", "pip", "install", "--target", "/tmp/t", "requests"],
                   capture_output=True, text=True)
print("%.2f %d" % (time.time() - t, r.returncode))
print(r.stdout + r.stderr)' 2>"$W/pip.err")
read -r took rc <<<"$(head -n 1 <<<"$out")"
[ "${rc:-0}" != 0 ] || msg="pip install succeeded or did not run: $(tr '\n' '|' <<<"$out" | head -c 300)"
awk -v t="${took:-99}" 'BEGIN { exit !(t < 2.0) }' || msg="${msg:+$msg; }pip took ${took}s (want < 2 s)"
grep -q '^moat:   dns pypi.org' "$W/pip.err" ||
    msg="${msg:+$msg; }moat's stderr does not name pypi.org: $(tr '\n' '|' <"$W/pip.err" | head -c 300)"
report "$msg"
