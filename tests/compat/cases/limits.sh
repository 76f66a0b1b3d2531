# limits: every verdict with a real offender, moat choosing its enforcement (--cgroup auto).
limits_pass auto
