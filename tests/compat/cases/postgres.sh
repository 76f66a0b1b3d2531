# postgres: PostgreSQL as an agent runs it (issue 15): the root inside
# hands a directory to an unprivileged user (setpriv to nobody), initdb,
# pg_ctl start on a unix socket in /tmp (SysV shared memory in the
# sandbox's own IPC namespace), psql create/insert/select, stop.
# Natively this runs as root too.  Not run without root (make deps
# installs postgresql-15).
MOAT_ARGS=(--uid 0 --gid 0)
B=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1)
if [ -z "$B" ] || [ ! -x "$B/initdb" ] || [ "$(id -u)" != 0 ]; then
    echo "SKIP postgres: needs root and Debian's postgresql-15 (make deps)"
    not_run
else
case_ 'B='"$B"'
d=$(mktemp -d /tmp/pg.XXXXXX) && chmod 755 "$d" && chown nobody:nogroup "$d" || exit 90
setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c "
$B/initdb -D $d/data -A trust -U postgres >$d/initdb.log 2>&1; echo initdb=\$?
$B/pg_ctl -D $d/data -o \"-k $d -c listen_addresses=\" -l $d/log -w start >/dev/null; echo start=\$?
psql -h $d -U postgres -Atc \"create table t(x int); insert into t values (1),(2); select sum(x) from t;\"
psql -h $d -U postgres -Atc \"select current_user, count(*) from pg_stat_activity where backend_type = '"'"'client backend'"'"'\"
$B/pg_ctl -D $d/data -w stop >/dev/null; echo stop=\$?"
rm -rf "$d"'
fi
