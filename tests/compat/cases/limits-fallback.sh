# limits-fallback: the same with moat's own accounting forced (--cgroup off).
limits_pass off
