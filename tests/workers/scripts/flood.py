import json
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
out = sys.stdout
for i in range(n):
    out.write(json.dumps({"event": "log", "message": f"line {i} " + "x" * 60}) + "\n")
    if i % 1000 == 0:
        out.write(json.dumps({"event": "progress", "fraction": i / n, "step": f"{i}"}) + "\n")
        print(f"err {i}", file=sys.stderr)
out.write(json.dumps({"event": "result", "data": {"lines": n}}) + "\n")
