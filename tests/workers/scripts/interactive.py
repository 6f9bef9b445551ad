import json
import sys

print(json.dumps({"event": "log", "message": "ready"}), flush=True)
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd["op"] == "echo":
        print(json.dumps({"event": "token", "text": cmd["text"]}), flush=True)
    elif cmd["op"] in ("stop", "exit"):
        break
