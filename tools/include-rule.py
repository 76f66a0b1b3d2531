#!/usr/bin/env python3
"""moat's include rule (docs/architecture.md, "Modules").

The folders form floors, lowest first:

    core < syscall-table < audit < fs-emulation < net-stub < interposer < cli

A file may include headers of its own folder and of the floors below it,
never of a floor above.  So no include runs back up across folders, and no
cycle of includes can span two folders.  Inside one folder a cycle is
still reported (it means two files that should be one, or a header that
should be split).

usage: tools/include-rule.py [ROOT]     exit 1 and one line per breach."""
import os, re, sys

FLOORS = ["core", "syscall-table", "audit", "fs-emulation", "net-stub", "interposer", "cli"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

def folder(path):
    return path.split("/", 1)[0]

def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    rank = {f: i for i, f in enumerate(FLOORS)}
    edges, bad = {}, []
    for top in FLOORS:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.relpath(os.path.join(d, f), root)
                text = open(os.path.join(root, path), encoding="utf-8").read()
                for inc in INCLUDE.findall(text):
                    if not os.path.exists(os.path.join(root, inc)):
                        bad.append(f"{path}: includes \"{inc}\", which does not exist "
                                   "(moat's headers are named from the root: \"core/call.h\")")
                        continue
                    edges.setdefault(path, set()).add(inc)
                    src, dst = folder(path), folder(inc)
                    if dst not in rank:
                        bad.append(f"{path}: includes \"{inc}\" from {dst}/, which is no floor")
                    elif rank[dst] > rank[src]:
                        bad.append(f"{path}: includes \"{inc}\": {dst}/ is above {src}/ "
                                   f"(floors: {' < '.join(FLOORS)})")
    # Cycles of files (a DFS over the include graph).
    state, stack = {}, []
    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                cyc = stack[stack.index(m):] + [m]
                bad.append("include cycle: " + " -> ".join(cyc))
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2
    for n in sorted(edges):
        if n not in state:
            visit(n)
    for b in bad:
        print("include-rule: " + b)
    if bad:
        sys.exit(1)
    print(f"include-rule: {sum(len(v) for v in edges.values())} includes in "
          f"{len(edges)} files keep the floors ({' < '.join(FLOORS)})")

main()
