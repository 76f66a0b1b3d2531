# exit-missing: moat's own exit code for a command that does not exist, and bash's natively.
exitcode_case 127 no-such-command-moat-compat
