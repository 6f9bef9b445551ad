"""A job for benchmarks/responsiveness.py: log lines at a steady rate through the jobs
protocol (stdlib only; run by path in the workload Python like any worker).

It writes ``--rate`` log events a second, in batches every 10 ms, plus a progress event
every second that says how many it has written, until it is cancelled or ``--seconds``
have passed; then a result with the total.

    python benchmarks/_log_flood.py [--rate 20000] [--seconds 600]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

BATCH_PERIOD_S = 0.01


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=600.0)
    args = parser.parse_args()
    out = sys.stdout
    started = time.monotonic()
    written = 0
    next_progress = started
    try:
        while True:
            now = time.monotonic()
            elapsed = now - started
            if elapsed >= args.seconds:
                break
            due = int(elapsed * args.rate) - written
            if due > 0:
                lines = [
                    json.dumps({"event": "log", "message": f"step {n}: loss 0.{n % 9973:04d}"})
                    for n in range(written, written + due)
                ]
                out.write("\n".join(lines) + "\n")
                written += due
            if now >= next_progress:
                step = f"{written} lines written"
                out.write(json.dumps({"event": "progress", "fraction": None, "step": step}) + "\n")
                next_progress += 1.0
            out.flush()
            time.sleep(BATCH_PERIOD_S)
        out.write(json.dumps({"event": "result", "data": {"lines": written}}) + "\n")
        out.flush()
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
