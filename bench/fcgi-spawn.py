# Starts N copies of a FastCGI program sharing one listening Unix socket, as spawn-fcgi does
# (bench/remote.sh, server apache-pf: mod_proxy_fcgi in front of processes started up front).
#   python3 bench/fcgi-spawn.py SOCKET N PROGRAM
import os, socket, sys
path, n, prog = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try: os.unlink(path)
except FileNotFoundError: pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path); os.chmod(path, 0o777); s.listen(1024)
for i in range(n):
    if os.fork() == 0:
        os.dup2(s.fileno(), 0)
        os.execv(prog, [prog])
print("started", n, flush=True)
