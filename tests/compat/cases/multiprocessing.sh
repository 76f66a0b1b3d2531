# multiprocessing: python multiprocessing: Pool, Lock, Semaphore, Value, shared_memory
case_ 'cd "$1" || exit 90
cat > mp.py <<"EOF"
import multiprocessing as mp, os, sys
from multiprocessing import shared_memory

def sq(x):
    return x * x

def pid(_):
    return os.getpid()

def bump(lock, counter, n):
    for _ in range(n):
        with lock:
            counter.value += 1

def fill(name, n):
    shm = shared_memory.SharedMemory(name=name)
    shm.buf[:n] = bytes(range(n))
    shm.close()

def run(method):
    ctx = mp.get_context(method)
    with ctx.Pool(4) as p:
        print(method, "pool", sum(p.map(sq, range(2000))), sorted(set(p.map(pid, range(8), 1)) - {os.getpid()}) != [])
    lock = ctx.Lock()
    counter = ctx.Value("i", 0, lock=False)
    ps = [ctx.Process(target=bump, args=(lock, counter, 300)) for _ in range(4)]
    for p in ps: p.start()
    for p in ps: p.join()
    print(method, "lock", counter.value, [p.exitcode for p in ps])
    sem = ctx.Semaphore(2)
    print(method, "sem", sem.acquire(), sem.acquire(), sem.acquire(timeout=0.05), sem.get_value())
    sem.release(); sem.release()
    print(method, "sem after", sem.get_value())
    shm = shared_memory.SharedMemory(create=True, size=4096)
    print(method, "shm in /dev/shm", os.path.exists("/dev/shm/" + shm.name.lstrip("/")))
    p = ctx.Process(target=fill, args=(shm.name, 200)); p.start(); p.join()
    print(method, "shm", p.exitcode, sum(shm.buf[:200]), shm.size >= 4096)
    q = ctx.Queue(); p = ctx.Process(target=q.put, args=([1, "two", 3.0],)); p.start()
    print(method, "queue", q.get(timeout=30)); p.join()
    shm.close(); shm.unlink()
    print(method, "shm unlinked", os.path.exists("/dev/shm/" + shm.name.lstrip("/")))

if __name__ == "__main__":
    for m in sys.argv[1:]:
        run(m)
EOF
python3 mp.py fork spawn'
