#!/usr/bin/env bash
# moat benchmarks, side by side with native (and proot, strace -f and
# gVisor's runsc with its ptrace platform when installed: `make bench`
# installs runsc; BENCH_RUNSC=0 leaves that column out), in one run.  Prints a markdown table; writes
# build/bench-results.json.  Never fails the build: it reports.
#
#     bench/run.sh            (from anywhere; MOAT=path overrides ./moat)
#     BENCH_QUICK=1 bench/run.sh     fewer runs, for a smoke test
cd "$(dirname "$0")/.." || exit 0
/usr/bin/python3 bench/run.py "$@" || echo "bench: the harness failed (exit $?); see above" >&2
exit 0
