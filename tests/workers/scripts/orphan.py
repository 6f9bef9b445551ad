import subprocess
import sys
import time

# The worker dies on SIGTERM at once, but leaves a child that ignores it and still holds
# the worker's stdout (a pip build, say): cancel must reach that child too.
IGNORING_CHILD = (
    "import os, signal, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    'print(\'{"event": "log", "message": "child %d ignores SIGTERM"}\' % os.getpid(), flush=True)\n'
    "time.sleep(600)\n"
)
subprocess.Popen([sys.executable, "-c", IGNORING_CHILD])
while True:
    time.sleep(1)
