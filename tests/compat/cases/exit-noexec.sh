# exit-noexec: moat's own exit code for a file that is not executable, and bash's natively.
exitcode_case 126 /usr/include/stdio.h
