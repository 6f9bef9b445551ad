"""Create a venv and pip-install into it, reporting pip's output as progress events.

Usage: ``pip_install.py --env-dir DIR [--isolated-config] -- PIP_INSTALL_ARGS...``

Several pip calls (packages that must be installed before torch, such as AMD's rocm_sdk
wheels on Windows) are separated by ``--then``; they run in order, each must succeed.

Runs in the base Python the venv is made from. The venv goes into DIR, which must not exist
yet; on failure or cancel the panel removes DIR (the job runner kills this worker's whole
process group, pip included). ``--isolated-config`` hides the user's and the system's pip
configuration and PIP_* variables, so only the index the plan chose is used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import _wire

# Options of "pip install" that take a value (so the value is not a requirement).
_VALUE_OPTIONS = {
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "--trusted-host",
    "-c",
    "--constraint",
    "-r",
    "--requirement",
    "--target",
    "-t",
    "--prefix",
    "--root",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--cache-dir",
    "--progress-bar",
    "--timeout",
    "--retries",
    "--proxy",
    "--cert",
    "--client-cert",
    "--upgrade-strategy",
    "--src",
    "--log",
    "--only-binary",
    "--no-binary",
}
THEN = "--then"
_DOWNLOAD_RE = re.compile(r"^\s*Downloading\s+(\S+?)(?:\s+\((.+)\))?\s*$")
_RAW_PROGRESS_RE = re.compile(r"^\s*Progress\s+(\d+)\s+of\s+(\d+)\s*$")
_SIZE_RE = re.compile(r"([\d.]+)\s*([kMG]?B)")
_UNITS = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}

VENV_BAND = (0.0, 0.1)
RESOLVE_BAND = (0.1, 0.2)
DOWNLOAD_BAND = (0.2, 0.8)


def requirement_names(pip_args: list[str]) -> list[str]:
    names: list[str] = []
    skip = False
    for arg in pip_args:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            skip = arg in _VALUE_OPTIONS
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", arg)
        if match:
            names.append(match.group(0))
    return names


def split_calls(pip_args: list[str]) -> list[list[str]]:
    """The pip calls in ``pip_args``, split at ``--then`` (empty calls dropped)."""
    calls: list[list[str]] = [[]]
    for arg in pip_args:
        if arg == THEN:
            calls.append([])
        else:
            calls[-1].append(arg)
    return [c for c in calls if c]


def child_env(isolated: bool) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    if isolated:
        for key in [k for k in env if k.upper().startswith("PIP_")]:
            del env[key]
        # pip skips every config file (global, user, site) when this is the null device.
        env["PIP_CONFIG_FILE"] = os.devnull
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def stream_lines(argv: list[str], env: dict[str, str], on_line: Callable[[str], None]) -> int:
    """Run ``argv`` with stdout and stderr merged; each non-empty line goes to ``on_line``."""
    _wire.log("$ " + " ".join(argv))
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        text = line.rstrip()
        if text:
            on_line(text)
    return proc.wait()


def run_logged(argv: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    lines: list[str] = []

    def keep(text: str) -> None:
        lines.append(text)
        _wire.log(text)

    return stream_lines(argv, env, keep), lines


def pip_version(python: str, env: dict[str, str]) -> tuple[int, ...]:
    out = subprocess.run(
        [python, "-m", "pip", "--version"], capture_output=True, text=True, env=env, check=False
    )
    match = re.match(r"pip (\d+)\.(\d+)", out.stdout)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _size_bytes(text: str | None) -> float | None:
    if not text:
        return None
    match = _SIZE_RE.search(text)
    if not match:
        return None
    return float(match.group(1)) * _UNITS.get(match.group(2), 1)


def _band(band: tuple[float, float], part: float) -> float:
    return band[0] + (band[1] - band[0]) * min(1.0, max(0.0, part))


class PipProgress:
    """Turns pip's output lines into progress events (one bar across all phases)."""

    def __init__(self) -> None:
        self.fraction = RESOLVE_BAND[0]
        self.collected = 0
        self.current = ""
        self.largest = 0.0
        self.errors: list[str] = []

    def _emit(self, fraction: float, step: str) -> None:
        self.fraction = max(self.fraction, fraction)
        _wire.progress(self.fraction, step)

    def feed(self, line: str) -> bool:
        """Handle one line; True when it should also go to the log."""
        text = line.strip()
        raw = _RAW_PROGRESS_RE.match(text)
        if raw:
            done, total = int(raw.group(1)), max(1, int(raw.group(2)))
            step = f"Downloading {self.current}: {done / 1e6:.0f} of {total / 1e6:.0f} MB"
            # The file the bar follows is the largest one (torch); sizes in pip's
            # "Downloading" lines are rounded, hence the slack.
            if total >= 0.9 * self.largest:
                self._emit(_band(DOWNLOAD_BAND, done / total), step)
            else:
                _wire.progress(self.fraction, step)
            return False
        if text.startswith("Collecting "):
            self.collected += 1
            name = text.split()[1]
            self._emit(_band(RESOLVE_BAND, 1 - 1 / (1 + self.collected)), f"Resolving {name}")
        elif (download := _DOWNLOAD_RE.match(text)) is not None:
            self.current = download.group(1).rsplit("/", 1)[-1]
            size = _size_bytes(download.group(2))
            self.largest = max(self.largest, size or 0.0)
            label = f" ({download.group(2)})" if download.group(2) else ""
            self._emit(DOWNLOAD_BAND[0], f"Downloading {self.current}{label}")
        elif text.startswith("Installing collected packages:"):
            self._emit(0.85, "Installing " + text.split(":", 1)[1].strip())
        elif text.startswith("Successfully installed"):
            self._emit(0.95, "Installed")
        elif text.startswith("ERROR:"):
            self.errors.append(text[len("ERROR:") :].strip())
        return True


def run_pip(python: str, pip_args: list[str], env: dict[str, str]) -> tuple[int, PipProgress]:
    bar = "raw" if pip_version(python, env) >= (24, 1) else "off"
    argv = [
        python,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        bar,
        *pip_args,
    ]
    tracker = PipProgress()

    def feed(text: str) -> None:
        if tracker.feed(text):
            _wire.log(text)

    return stream_lines(argv, env, feed), tracker


def installed_versions(python: str, names: list[str], env: dict[str, str]) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, json, sys\n"
        "out = {}\n"
        "for n in sys.argv[1:]:\n"
        "    try: out[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run(
        [python, "-c", code, *names], capture_output=True, text=True, env=env, check=False
    )
    try:
        data = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}
    return {str(k): str(v) for k, v in data.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env-dir", required=True)
    parser.add_argument("--isolated-config", action="store_true")
    parser.add_argument("pip_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    pip_args = (
        [a for a in args.pip_args if a != "--"]
        if args.pip_args[:1] == ["--"]
        else list(args.pip_args)
    )
    if not pip_args:
        _wire.error("Nothing to install: no pip arguments were given.", kind="usage")
        sys.exit(2)
    env_dir = Path(args.env_dir)
    if env_dir.exists():
        _wire.error(
            f"{env_dir} already exists; an install always goes into a new folder.", kind="exists"
        )
        sys.exit(2)
    env = child_env(args.isolated_config)
    started = time.monotonic()
    _wire.progress(VENV_BAND[0], "Creating the environment")
    code, lines = run_logged([sys.executable, "-m", "venv", str(env_dir)], env)
    python = str(env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    if code != 0 or not Path(python).exists():
        _wire.error(
            f"Creating the environment failed (python -m venv exit code {code}).",
            kind="venv",
            detail="\n".join(lines[-20:]),
        )
        sys.exit(1)
    _wire.progress(VENV_BAND[1], "Environment created; starting pip")
    calls = split_calls(pip_args)
    for number, call in enumerate(calls, 1):
        if len(calls) > 1:
            _wire.log(f"pip call {number} of {len(calls)}")
        code, tracker = run_pip(python, call, env)
        if code != 0:
            reason = tracker.errors[0] if tracker.errors else f"pip exited with code {code}"
            _wire.error(
                f"pip install failed: {reason}",
                kind="pip",
                detail="\n".join(tracker.errors[-20:]),
            )
            sys.exit(1)
    _wire.progress(0.97, "Checking what was installed")
    names = requirement_names(pip_args)
    installed = installed_versions(python, names, env)
    missing = [n for n in names if n not in installed and n.replace("_", "-") not in installed]
    if missing:
        _wire.error(
            "pip finished, but these packages are not installed: " + ", ".join(missing),
            kind="verify",
        )
        sys.exit(1)
    version = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    ).stdout.strip()
    _wire.progress(1.0, "Done")
    _wire.result(
        {
            "env_dir": str(env_dir),
            "python": python,
            "python_version": version or None,
            "installed": installed,
            "seconds": round(time.monotonic() - started, 1),
        }
    )


if __name__ == "__main__":
    _wire.run_main(main)
