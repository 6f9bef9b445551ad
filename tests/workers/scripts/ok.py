import json
import sys

for i in range(3):
    print(json.dumps({"event": "progress", "fraction": (i + 1) / 3, "step": f"step {i}"}))
print("a line on stderr", file=sys.stderr)
print(json.dumps({"event": "log", "message": "hello"}))
print(json.dumps({"event": "result", "data": {"answer": 42, "argv": sys.argv[1:]}}))
