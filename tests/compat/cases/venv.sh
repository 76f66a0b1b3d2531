# venv: python venv: created in /tmp, used from there
# Without pip: ensurepip alone costs ~10 s a side (a pip install of two
# wheels with bytecode compilation), too much for the suite's budget; the
# second venv sees the system's site-packages (pandas, pip) instead.
case_ 'cd "$1" || exit 90
python3 -m venv --without-pip v || exit 91
python3 -m venv --without-pip --system-site-packages v2 || exit 92
v/bin/python -c "import sys, os, json, sqlite3, decimal
print(os.path.relpath(sys.prefix, sys.argv[1]), sys.base_prefix, sys.prefix != sys.base_prefix)
print(os.path.relpath(os.path.dirname(json.__file__), sys.base_prefix))
print([os.path.relpath(p, sys.argv[1]) for p in sys.path if p.startswith(sys.argv[1])])
try:
    import pandas
except ImportError as e:
    print(type(e).__name__)" "$1" || exit 93
readlink v/bin/python v/bin/python3
sed "s|$1|X|g" v/pyvenv.cfg | grep -v "^version"
ls v/bin | sort | tr "\n" " "; echo
"$1/v2/bin/python" -c "import sys, pandas; print(pandas.DataFrame({\"a\": [1, 2, 3]}).a.sum(), sys.prefix == sys.argv[1] + \"/v2\")" "$1"
v2/bin/python -m pip --version | cut -d" " -f1,2
echo "print(__import__(\"sys\").prefix.endswith(\"/v\"))" > v/lib/python3.11/site-packages/probe.py
v/bin/python -c "import probe" && v2/bin/python -c "import probe" 2>/dev/null || echo "v2 isolated"'
