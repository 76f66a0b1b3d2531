# exit-3: moat's own exit code for a plain exit code, and bash's natively.
exitcode_case 3 sh -c 'exit 3'
