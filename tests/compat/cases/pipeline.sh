# pipeline: shell pipelines: many fork/execs
case_ 'for i in $(seq 50); do echo $i | sed s/1/x/ | tr a-z A-Z; done | sort | md5sum
seq 200 | while read n; do expr $n \* 3; done | awk '"'"'{ s += $1 } END { print s }'"'"'
printf "%s\n" c b a | sort -r | head -2 | tail -1
ls / >/dev/null && echo ls-ok'
