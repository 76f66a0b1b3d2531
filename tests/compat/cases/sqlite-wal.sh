# sqlite-wal: sqlite WAL: two connections, a second process, checkpoint
case_ 'cd "$1" || exit 90
cat > wal.py <<"EOF"
import os, sqlite3, subprocess, sys
d = sys.argv[1]
p = os.path.join(d, "db.sqlite")
a = sqlite3.connect(p, isolation_level=None)
print("mode", a.execute("pragma journal_mode=wal").fetchone())
a.execute("create table t(k integer primary key, v text)")
a.execute("begin")
a.executemany("insert into t(v) values (?)", [("row%d" % i,) for i in range(2000)])
a.execute("commit")
b = sqlite3.connect(p, isolation_level=None)
print("b sees", b.execute("select count(*), sum(length(v)) from t").fetchone())
b.execute("begin")
print("b snapshot", b.execute("select count(*) from t").fetchone())
a.execute("insert into t(v) values (?)", ("late",))
print("b still", b.execute("select count(*) from t").fetchone())
b.execute("commit")
print("b after", b.execute("select count(*) from t").fetchone())
r = subprocess.run(["sqlite3", p, "insert into t(v) values (\"cli\"); select count(*) from t;"], capture_output=True, text=True)
print("cli", r.returncode, r.stdout.strip(), r.stderr.strip())
print("a sees cli", a.execute("select v from t order by k desc limit 1").fetchone())
print("files", sorted(f for f in os.listdir(d) if f.startswith("db.")))
print("wal nonempty", os.path.getsize(p + "-wal") > 0)
print("checkpoint", a.execute("pragma wal_checkpoint(TRUNCATE)").fetchone())
print("wal size", os.path.getsize(p + "-wal"))
print("integrity", a.execute("pragma integrity_check").fetchone())
b.close(); a.close()
print("after close", sorted(f for f in os.listdir(d) if f.startswith("db.")))
c = sqlite3.connect(p)
print("reopen", c.execute("pragma journal_mode").fetchone(), c.execute("select count(*), max(k) from t").fetchone())
c.close()
EOF
python3 wal.py "$1"
sqlite3 db.sqlite "select v from t where k in (1, 2000, 2001, 2002) order by k"'
