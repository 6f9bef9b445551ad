#!/usr/bin/env python3
"""Download every pinned upstream source into the local sources folder.

    python scripts/fetch_data_sources.py [--sources DIR] [--pins-dir DIR] [KEY ...]

Reads every ``sources_*.yaml`` in scripts/datagen/ (or ``--pins-dir``) and fetches each
entry's ``url`` (a raw download URL at the pinned commit) to ``<sources>/<file>``. Each file
is written to a temporary name first and renamed into place, so an interrupted download
never leaves half a file. Errors are reported per source; the exit status is 1 if any failed.
This is the only step of the data generator that uses the network.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TIMEOUT_S = 60
USER_AGENT = "rocmpanel-data-fetch/1 (+https://github.com/ROCm)"


def load_all_pins(pins_dir: Path) -> dict[str, dict[str, str]]:
    """Every pinned source of every ``sources_*.yaml`` in ``pins_dir``, by key."""
    pins: dict[str, dict[str, str]] = {}
    for path in sorted(pins_dir.glob("sources_*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for key, entry in raw.items():
            if key in pins:
                raise ValueError(f"source key {key!r} is pinned twice (again in {path.name})")
            if not isinstance(entry, dict) or not entry.get("url") or not entry.get("file"):
                raise ValueError(f"{path.name}: source {key!r} needs a url and a file")
            pins[str(key)] = {str(k): str(v) for k, v in entry.items()}
    return pins


def fetch(url: str, target: Path, timeout: float = TIMEOUT_S) -> int:
    """Download ``url`` to ``target`` atomically; the number of bytes written."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data = response.read()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return len(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, default=ROOT / ".data-sources")
    parser.add_argument("--pins-dir", type=Path, default=HERE / "datagen")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S)
    parser.add_argument("keys", nargs="*", help="fetch only these sources")
    args = parser.parse_args(argv)
    try:
        pins = load_all_pins(args.pins_dir)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    unknown = [k for k in args.keys if k not in pins]
    if unknown:
        print(f"error: no pinned source {', '.join(unknown)}", file=sys.stderr)
        return 2
    failed = 0
    for key in args.keys or list(pins):
        entry = pins[key]
        target = args.sources / entry["file"]
        try:
            size = fetch(entry["url"], target, args.timeout)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            failed += 1
            print(f"FAILED {key}: {entry['url']}: {exc}", file=sys.stderr)
            continue
        print(f"ok     {key}: {target} ({size} bytes)")
    if failed:
        print(f"{failed} of {len(args.keys or pins)} sources failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
