import sys

print('{"event": "progress", "fraction": 0.5, "step": "about to fail"}', flush=True)
for i in range(30):
    print(f"stderr line {i}", file=sys.stderr)
print("Segmentation fault (simulated)", file=sys.stderr)
sys.exit(139)
