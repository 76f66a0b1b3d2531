# exit-in-shell: exit codes as a shell inside the sandbox sees them.
case_ 'sh -c "exit 3"; echo "exit=$?"
sh -c "kill -TERM \$\$"; echo "term=$?"
no-such-command-moat-compat 2>/dev/null; echo "missing=$?"
/usr/include/stdio.h 2>/dev/null; echo "usr-noexec=$?"
printf "echo hi\n" > "$1/plain.sh"; "$1/plain.sh" 2>/dev/null; echo "tmp-noexec=$?"
chmod +x "$1/plain.sh"; "$1/plain.sh"; echo "tmp-exec=$?"
/tmp-missing-moat/x 2>/dev/null; echo "path-missing=$?"'
