# exit-sigterm: moat's own exit code for death by SIGTERM, and bash's natively.
exitcode_case 143 sh -c 'kill -TERM $$'
