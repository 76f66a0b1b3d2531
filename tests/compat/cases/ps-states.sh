# ps-states: ps of the sandbox's own processes in each state (issue 15): a
# stopped child (T), a child that exited and is not reaped yet (Z, still
# seen by kill(pid, 0), /proc and waitid(WNOWAIT) until its parent reaps
# it, then gone), and ps reading itself (R).
case_ 'python3 - <<"EOF"
import errno, os, signal, subprocess, sys, time
def state(pid):
    out = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout
    return out.strip()[:1] or "-"
stopped = os.fork()
if stopped == 0:
    time.sleep(30)
    os._exit(0)
os.kill(stopped, signal.SIGSTOP)
os.waitpid(stopped, os.WUNTRACED)
zombie = os.fork()
if zombie == 0:
    os._exit(3)
time.sleep(0.3)
print("stopped child:", state(stopped))
print("zombie child:", state(zombie), "kill 0:", os.kill(zombie, 0), "in /proc:", os.path.isdir("/proc/%d" % zombie))
print("waitid WNOWAIT:", os.waitid(os.P_PID, zombie, os.WEXITED | os.WNOWAIT).si_status)
print("reaped:", os.waitpid(zombie, 0)[1] >> 8)
try:
    os.kill(zombie, 0)
    print("after reap: still there")
except OSError as e:
    print("after reap:", errno.errorcode[e.errno], "in /proc:", os.path.isdir("/proc/%d" % zombie))
ps = subprocess.run(["ps", "-o", "stat=,comm="], capture_output=True, text=True).stdout
print("ps itself:", [l.split()[0][:1] for l in ps.splitlines() if l.split()[-1] == "ps"])
os.kill(stopped, signal.SIGKILL)
os.waitpid(stopped, 0)
sys.stdout.flush()
EOF'
