#!/usr/bin/env python3
"""Download every pinned upstream source into the local sources folder.

    python scripts/fetch_data_sources.py [--sources DIR] [--pins-dir DIR] [KEY ...]

Reads every ``sources_*.yaml`` in scripts/datagen/ (or ``--pins-dir``) and fetches each
entry's ``url`` (a raw download URL at the pinned commit) to ``<sources>/<file>``; a pin with
an ``excerpt`` rule keeps only that part of the download (scripts/datagen/excerpts.py). The
result is checked against the pin's ``bytes`` and ``sha256``: a copy that differs is not
written (the old one stays) and the source counts as failed; a pin without a hash gets its
copy written and the sha256 and size printed, to be added to the pin. Each file is written
to a temporary name first and renamed into place, so an interrupted download never leaves
half a file. Errors are reported per source; the exit status is 1 if any failed, 2 when the
pins cannot be read. This is the only step of the data generator that uses the network.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from datagen import common, excerpts  # noqa: E402
from datagen.common import DataError, Source  # noqa: E402

TIMEOUT_S = 60
USER_AGENT = "rocmpanel-data-fetch/1 (+https://github.com/ROCm)"


def load_all_pins(pins_dir: Path) -> dict[str, Source]:
    """Every pinned source of every ``sources_*.yaml`` in ``pins_dir``, by key (checked as
    the generator checks them); DataError for a bad file or a key pinned twice."""
    pins: dict[str, Source] = {}
    files = sorted(pins_dir.glob("sources_*.yaml"))
    if not files:
        raise DataError(f"no sources_*.yaml in {pins_dir}")
    for path in files:
        for key, pin in common.load_pins_file(path).items():
            if key in pins:
                raise DataError(f"source key {key!r} is pinned twice (again in {path.name})")
            pins[key] = pin
    return pins


def download(url: str, timeout: float = TIMEOUT_S, limit: int = common.MAX_READ_BYTES) -> bytes:
    """The body at ``url``, at most ``limit`` bytes (DataError beyond)."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data: bytes = response.read(limit + 1)
    if len(data) > limit:
        raise DataError(f"{url} is larger than {limit // (1024 * 1024)} MiB")
    return data


def local_copy(pin: Source, data: bytes) -> bytes:
    """What the sources folder keeps of a download: all of it, or the pin's excerpt."""
    if not pin.excerpt:
        return data
    text = common.decode(data, pin.url)
    try:
        return excerpts.cut(pin.excerpt, text).encode("utf-8")
    except ValueError as exc:
        raise DataError(f"{pin.url}: excerpt {pin.excerpt}: {exc}") from None


def install(data: bytes, target: Path) -> None:
    """Writes ``data`` to ``target`` atomically (temporary file, then rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def fetch(pin: Source, sources_dir: Path, timeout: float = TIMEOUT_S) -> str:
    """Downloads one pin, checks it and writes it; what to report. DataError when the copy
    is not the pinned one (nothing is written then)."""
    data = local_copy(pin, download(pin.url, timeout))
    target = sources_dir / pin.file
    common.check_copy(
        data,
        pin,
        f"the download of {pin.url}",
        "nothing written; if upstream changed on purpose, re-pin it (url, commit, date) and"
        " drop sha256 and bytes, and the next fetch prints the new ones",
    )
    install(data, target)
    if not pin.sha256:
        return (
            f"{target} ({len(data)} bytes); no hash pinned, add to the pin:"
            f" sha256: {common.digest(data)}  bytes: {len(data)}"
        )
    return f"{target} ({len(data)} bytes, sha256 as pinned)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, default=ROOT / ".data-sources")
    parser.add_argument("--pins-dir", type=Path, default=HERE / "datagen")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S)
    parser.add_argument("keys", nargs="*", help="fetch only these sources")
    args = parser.parse_args(argv)
    try:
        pins = load_all_pins(args.pins_dir)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    unknown = [k for k in args.keys if k not in pins]
    if unknown:
        print(f"error: no pinned source {', '.join(unknown)}", file=sys.stderr)
        return 2
    failed = 0
    for key in args.keys or list(pins):
        pin = pins[key]
        try:
            report = fetch(pin, args.sources, args.timeout)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            failed += 1
            print(f"FAILED {key}: {pin.url}: {exc}", file=sys.stderr)
            continue
        print(f"ok     {key}: {report}")
    if failed:
        print(f"{failed} of {len(args.keys or pins)} sources failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
