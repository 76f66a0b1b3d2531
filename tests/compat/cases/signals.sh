# signals: handlers, job control stops, kill of a child
case_ 'trap "echo got USR1" USR1; kill -USR1 $$
sleep 5 & p=$!
kill -STOP $p; sleep 0.2
state() { cut -d" " -f3 "/proc/$1/stat"; }
echo "stopped: $(state $p)"
kill -CONT $p; sleep 0.2; echo "continued: $(state $p)"
kill -TERM $p; wait $p; echo "wait: $?"
( trap "echo child got TERM; exit 7" TERM; sleep 3 & wait ) & c=$!
sleep 0.3; kill -TERM $c; wait $c; echo "child exit: $?"'
