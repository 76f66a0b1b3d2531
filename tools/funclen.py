#!/usr/bin/env python3
"""List C functions longer than a limit.

moat's style puts a function's opening and closing braces alone in column
0, so a function is the lines from its '{' to the next '}' in column 0; its
name is the identifier before the first '(' of the lines above the brace.

usage: tools/funclen.py [--max N] [--allow FILE] DIR...
Exits 1 when a function over N lines (default 120) is not listed in FILE
(lines "path:function  reason")."""
import os, re, sys

def functions(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            # the signature: back to the previous blank line or column-0 '}'/';'
            j = i - 1
            sig = []
            while j >= 0 and lines[j].strip() and not lines[j].startswith(("}", "#")) \
                    and not lines[j].rstrip().endswith(";"):
                sig.insert(0, lines[j])
                j -= 1
            # the signature without the comment above it (a "(" there
            # is no function name)
            text = re.sub(r"/\*.*?\*/", " ", " ".join(sig))
            text = re.sub(r"^.*?\*/", " ", text)
            m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", text)
            k = i + 1
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            if m and "=" not in text.split("(")[0]:
                yield m.group(1), i + 1, k - i + 1
            i = k
        i += 1

def main():
    args = sys.argv[1:]
    limit, allow = 120, {}
    while args and args[0].startswith("--"):
        if args[0] == "--max":
            limit = int(args[1]); args = args[2:]
        elif args[0] == "--allow":
            for ln in open(args[1]):
                ln = ln.split("#")[0].strip()
                if ln:
                    key, _, why = ln.partition(" ")
                    allow[key] = why.strip()
            args = args[2:]
        else:
            sys.exit(f"funclen: unknown option {args[0]}")
    bad = 0
    seen = set()
    for d in args:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if not f.endswith(".c"):
                    continue
                p = os.path.join(root, f)
                for name, line, n in functions(p):
                    if n > limit:
                        key = f"{p}:{name}"
                        seen.add(key)
                        tag = "allowed" if key in allow else "TOO LONG"
                        if key not in allow:
                            bad += 1
                        print(f"{tag}: {p}:{line} {name} {n} lines")
    for key in sorted(set(allow) - seen):
        print(f"STALE: {key} is listed as allowed but is not over {limit} lines: "
              "take it off the list")
        bad += 1
    sys.exit(1 if bad else 0)

main()
