#!/usr/bin/env bash
# moat benchmarks in one run: per call (natively and under moat, next to the
# bare seccomp-notify round trip of the same run, with the supervisor's own
# syscalls per call), the workloads natively and under moat, strace -f, proot,
# gVisor's runsc (ptrace platform) and bwrap (`make bench` installs runsc,
# bubblewrap and perf; a tool not installed leaves its cells saying so;
# BENCH_RUNSC=0 leaves gVisor out), and the scaling rows.  Prints markdown
# tables; writes build/bench-results.json; then the sessions' table
# (bench/session_bench.py).  Never fails the build: it reports.
# About 8-10 minutes on the project's 2-core VM.
#
#     bench/run.sh            (from anywhere; MOAT=path overrides ./moat)
#     BENCH_QUICK=1 bench/run.sh     fewer runs, for a smoke test
cd "$(dirname "$0")/.." || exit 0
/usr/bin/python3 bench/run.py "$@" || echo "bench: the harness failed (exit $?); see above" >&2
# Sessions (issue 14): create, a cell's round trip, an idle session's memory.
/usr/bin/python3 bench/session_bench.py "${MOAT:-./moat}" ||
	echo "bench: the session bench failed (exit $?)" >&2
exit 0
