import signal
import subprocess
import sys
import time

# Ignores SIGTERM like a wedged GPU job would, and has a child of its own: cancel must
# still reap both (terminate, then kill the whole process group).
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(f'{{"event": "log", "message": "child {child.pid}"}}', flush=True)
print('{"event": "progress", "fraction": null, "step": "hanging"}', flush=True)
while True:
    time.sleep(1)
