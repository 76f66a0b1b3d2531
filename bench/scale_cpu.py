#!/usr/bin/python3
"""Wall and CPU time of commands, run in turns: python3 bench/scale_cpu.py N LABEL=CMD...

Each CMD is a shell command, run N times, the order reversed every other
round so that a drift of the machine falls on all alike.  Prints, for each,
the median wall time, the median CPU time (user + system of all its
processes, from getrusage) and their ratio: how many CPUs it kept busy.
docs/performance.md ("Issue 13, fourth pass") uses it for one and four
finds, natively and under moat."""
import resource
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit() or any('=' not in a for a in sys.argv[2:]):
        sys.exit('usage: scale_cpu.py N LABEL=CMD [LABEL=CMD...]')
    n = int(sys.argv[1])
    cmds = [a.split('=', 1) for a in sys.argv[2:]]
    wall = {label: [] for label, _ in cmds}
    cpu = {label: [] for label, _ in cmds}
    for i in range(n):
        for label, cmd in (cmds if i % 2 == 0 else cmds[::-1]):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall[label].append((time.perf_counter() - t0) * 1000)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[label].append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000)
    for label, _ in cmds:
        w, c = statistics.median(wall[label]), statistics.median(cpu[label])
        print(f'{label}: wall {w:.0f} ms  cpu {c:.0f} ms  cpu/wall {c / w:.2f}')


main()
