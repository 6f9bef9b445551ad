"""Create a venv and pip-install into it, reporting pip's output as progress events.

Usage: ``pip_install.py (--env-dir DIR | --python PY) [--isolated-config] -- PIP_INSTALL_ARGS...``

``--env-dir`` makes a new venv and installs into it; ``--python`` installs into an existing
interpreter (the active workload environment: e.g. the chat packages it lacks) and touches
nothing else.

Several pip calls (packages that must be installed before torch, such as AMD's rocm_sdk
wheels on Windows) are separated by ``--then``; they run in order, each must succeed.

Runs in the base Python the venv is made from. The venv goes into DIR, which must not exist
yet; on failure or cancel the panel removes DIR (the job runner kills this worker's whole
process group, pip included). ``--isolated-config`` hides the user's and the system's pip
configuration and PIP_* variables, so only the index the plan chose is used.

The panel's lifeline (``_wire.watch_lifeline``) ends pip and its builds with this worker when
the panel is gone, even after a kill -9: no install runs on orphaned.

A failed pip run is diagnosed from all of pip's output, not only its last ERROR line: a
network failure (DNS, refused, timeout, TLS, proxy), a full disk or a permission problem
becomes the headline, with what to do, instead of the "Could not find a version that
satisfies ... (from versions: none)" pip prints after its retries gave up.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

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

# Copy of rocmpanel.jobs.lifetime's names (a worker cannot import rocmpanel).
LIFELINE_ENV = _wire.LIFELINE_ENV
LIFELINE_STDIN = _wire.LIFELINE_STDIN
TAIL_LINES = 60  # pip's last output lines kept for the diagnosis (a traceback's end)

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
    env.pop(LIFELINE_ENV, None)
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
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
        encoding="utf-8",
        errors="replace",
        **_wire.no_window(),
    )
    assert proc.stdout is not None
    _wire.running_children.add(proc)
    try:
        for line in proc.stdout:
            text = line.rstrip()
            if text:
                on_line(text)
        return proc.wait()
    finally:
        _wire.running_children.discard(proc)
        proc.stdout.close()


def run_logged(argv: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    lines: list[str] = []

    def keep(text: str) -> None:
        lines.append(text)
        _wire.log(text)

    return stream_lines(argv, env, keep), lines


def pip_version(python: str, env: dict[str, str]) -> tuple[int, ...]:
    out = subprocess.run(
        [python, "-m", "pip", "--version"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        **_wire.no_window(),
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


# -- why pip failed --------------------------------------------------------------------
class Cause(NamedTuple):
    """What made pip fail, in one sentence that says what to do (``kind`` for the panel)."""

    kind: str
    message: str
    evidence: str = ""  # the line of pip's output it was read from


# Lines that come from pip's network layer (urllib3/requests), wherever pip prints them.
_NETWORK_LINE_RE = re.compile(
    r"Retrying \(Retry\(|Could not fetch URL|ConnectionPool\(host=|NewConnectionError|"
    r"NameResolutionError|urllib3\.exceptions\.|requests\.exceptions\.|ProxyError|SSLError|"
    r"ReadTimeoutError|ConnectTimeoutError|Connection broken:|IncompleteRead|"
    r"RemoteDisconnected|Connection aborted"
)
# Network failures, most specific first: the first kind seen in this order is the headline.
_NETWORK_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(regex, re.IGNORECASE))
    for kind, regex in (
        (
            "network_proxy",
            r"ProxyError|Cannot connect to proxy|Tunnel connection failed|"
            r"Proxy Authentication Required",
        ),
        (
            "network_tls",
            r"SSLError|\[SSL|SSL:|CERTIFICATE_VERIFY_FAILED|certificate verify failed|"
            r"problem confirming the ssl certificate",
        ),
        (
            "network_dns",
            r"Name or service not known|Temporary failure in name resolution|"
            r"nodename nor servname|getaddrinfo failed|Failed to resolve|NameResolutionError|"
            r"No address associated with hostname",
        ),
        ("network_refused", r"Connection refused|ConnectionRefusedError|actively refused"),
        ("network_unreachable", r"Network is unreachable|No route to host"),
        ("network_timeout", r"timed out|TimeoutError|Timeout\("),
        ("network", r"."),
    )
)
_DISK_FULL_RE = re.compile(r"\[Errno 28\]|No space left on device|Disk quota exceeded")
_PERMISSION_RE = re.compile(r"\[Errno 13\]|Permission denied|\[WinError 5\]|Access is denied")
_ERRNO_PATH_RE = re.compile(r"(?:\[Errno \d+\]|\[WinError \d+\])[^:]*: '([^']+)'")
_HOST_PORT_RE = re.compile(r"host='([^']+)', port=(\d+)")
_RESOLVE_RE = re.compile(r"Failed to resolve '([^']+)'")
_URL_RE = re.compile(r"https?://[^\s'\"<>),]+")
_RETRY_PATH_RE = re.compile(r"\)': (/\S*)\s*$")
_NO_VERSION_RE = re.compile(
    r"Could not find a version that satisfies the requirement (.+?) \(from versions: (.*)\)"
)
# pip skips an http:// index whose host is not trusted, and says so only in a warning.
_UNTRUSTED_RE = re.compile(
    r"repository located at (\S+) is not a trusted or secure host and is being ignored"
)
_CERT_REASON_RE = re.compile(r"certificate verify failed: ([^(')\"]+)")
_PROXY_STATUS_RE = re.compile(r"Tunnel connection failed: (\d{3}[^'\")]*)")
# How a connection broke, most telling first.
_BROKEN = tuple(
    re.compile(regex)
    for regex in (
        r"Connection reset by peer",
        r"RemoteDisconnected\([^)]*\)",
        r"IncompleteRead\([^)]*\)",
        r"Connection aborted",
    )
)


def _netloc(url: str) -> str:
    try:
        return urlsplit(url).netloc.rsplit("@", 1)[-1]
    except ValueError:
        return ""


def _times(count: int) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count} times"


class PipDiagnosis:
    """Reads every line pip prints and, if pip fails, says why (:meth:`cause`)."""

    def __init__(self) -> None:
        self.indexes: list[str] = []
        self.retries = 0
        self.network: dict[str, str] = {}  # kind -> the first line of that kind
        self.disk_full = ""
        self.permission = ""
        self.errors: list[str] = []
        self.no_version: tuple[str, str] | None = None
        self.untrusted: dict[str, str] = {}  # host -> pip's warning that it ignored it
        self.crashed = False
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)

    def feed_all(self, lines: Iterable[str]) -> PipDiagnosis:
        for line in lines:
            self.feed(line)
        return self

    def feed(self, line: str) -> None:
        text = line.strip()
        if not text:
            return
        self.tail.append(text)
        if text.startswith("Looking in indexes:"):
            self.indexes = [u.strip() for u in text.split(":", 1)[1].split(",") if u.strip()]
            return
        if text.startswith("ERROR:"):
            error = text[len("ERROR:") :].strip()
            self.errors.append(error)
            if error.startswith("Exception:"):
                self.crashed = True
            found = _NO_VERSION_RE.search(error)
            if found and self.no_version is None:
                self.no_version = (found.group(1), found.group(2).strip())
        untrusted = _UNTRUSTED_RE.search(text)
        if untrusted:
            self.untrusted.setdefault(untrusted.group(1), text)
            return
        if _NETWORK_LINE_RE.search(text):
            if "Retrying (Retry(" in text:
                self.retries += 1
            for kind, regex in _NETWORK_KINDS:
                if regex.search(text):
                    self.network.setdefault(kind, text)
                    break
            return
        if not self.disk_full and _DISK_FULL_RE.search(text):
            self.disk_full = text
        elif not self.permission and _PERMISSION_RE.search(text):
            self.permission = text

    # -- what it means -----------------------------------------------------------------
    def _host(self, line: str) -> str:
        """The host a network line is about: from the line itself, else the index whose
        path the retried URL starts with, else the first index."""
        found = _HOST_PORT_RE.search(line)
        if found:
            port = found.group(2)
            return found.group(1) + ("" if port in ("80", "443") else f":{port}")
        found = _RESOLVE_RE.search(line)
        if found:
            return found.group(1)
        for url in _URL_RE.findall(line):
            if _netloc(url):
                return _netloc(url)
        path = _RETRY_PATH_RE.search(line)
        if path:
            for index in self.indexes:
                index_path = urlsplit(index).path.rstrip("/")
                if index_path and path.group(1).startswith(index_path + "/"):
                    return _netloc(index)
        for index in self.indexes:
            if _netloc(index):
                return _netloc(index)
        return ""

    def _retried(self) -> str:
        return f"; pip retried {_times(self.retries)}" if self.retries else ""

    def _network_cause(self) -> Cause | None:
        for kind, _regex in _NETWORK_KINDS:
            line = self.network.get(kind)
            if line is not None:
                return Cause(kind, self._network_message(kind, line), line)
        return None

    def _what(self, kind: str, line: str) -> str:
        """What went wrong on the network, in a few words naming the host."""
        host = self._host(line)
        where = host or "the package index"
        if kind == "network_dns":
            return f"DNS lookup failed for {host}" if host else "a DNS lookup failed"
        if kind == "network_refused":
            return f"{where} refused the connection"
        if kind == "network_unreachable":
            return f"no network route to {where}"
        if kind == "network_timeout":
            how = "reading from" if "Read timed out" in line else "connecting to"
            return f"{how} {where} timed out"
        if kind == "network_tls":
            reason = _CERT_REASON_RE.search(line)
            if reason:
                return (
                    f"the TLS certificate of {where} could not be verified: "
                    f"{reason.group(1).strip()}"
                )
            return f"a TLS (SSL) error with {where}"
        if kind == "network_proxy":
            status = _PROXY_STATUS_RE.search(line)
            if status:
                return f"the proxy answered {status.group(1).strip()}"
            return "the proxy could not be reached"
        how = next((m.group(0) for m in (r.search(line) for r in _BROKEN) if m), "")
        return f"the connection to {where} failed" + (f": {how}" if how else "")

    def _network_message(self, kind: str, line: str) -> str:
        what = self._what(kind, line)
        retried = self._retried()
        if kind == "network_refused":
            advice = "Check the index URL and that its server is up, or the proxy settings"
        elif kind == "network_unreachable":
            advice = "Check the network connection"
        elif kind == "network_timeout":
            return (
                f"the package index did not answer in time ({what}). Check the network "
                f"connection or the proxy settings, or try again later{retried}."
            )
        elif kind == "network_tls":
            return (
                f"the package index could not be reached securely ({what}). A proxy or "
                "firewall that inspects HTTPS needs its certificate authority trusted, and "
                f"the system clock must be right{retried}."
            )
        elif kind == "network_proxy":
            return (
                f"the package index could not be reached through the proxy ({what}). Check "
                f"the proxy settings (HTTPS_PROXY, HTTP_PROXY, NO_PROXY){retried}."
            )
        elif kind == "network":
            return f"{what}. Check the network connection and try again{retried}."
        else:  # DNS
            advice = "Check the network connection or the proxy settings"
        return f"the package index could not be reached ({what}). {advice}{retried}."

    def local_cause(self) -> Cause | None:
        """A full disk or a refused write, seen in the output (pip's or venv's)."""
        if self.disk_full:
            found = _ERRNO_PATH_RE.search(self.disk_full)
            full = "Disk quota exceeded" if "quota" in self.disk_full else "No space left on device"
            what = f"pip could not write {found.group(1)}" if found else "a write failed"
            return Cause(
                "disk_full",
                f"the disk is full ({what}: {full}). Free some space, or put ROCMPANEL_HOME "
                "(the environments) and TMPDIR (pip's downloads) on a larger disk, then "
                "install again.",
                self.disk_full,
            )
        if self.permission:
            found = _ERRNO_PATH_RE.search(self.permission)
            what = f"writing {found.group(1)} was refused" if found else "a write was refused"
            return Cause(
                "permission",
                f"permission denied ({what}). Check who owns that folder and that this user "
                "may write there (and in ROCMPANEL_HOME), then install again.",
                self.permission,
            )
        return None

    def cause(self, code: int) -> Cause:
        """Why pip exited with ``code`` (not 0): the most telling thing it printed."""
        local = self.local_cause()
        if local is not None:
            return local
        offered = self.no_version[1] if self.no_version else "none"
        if offered == "none" and self.untrusted:  # pip never asked the plain-http index
            host, line = next(iter(self.untrusted.items()))
            return Cause(
                "untrusted_host",
                f"pip ignored the plain-http index {host}: use https, or add it as a trusted "
                f"host (trusted-host = {host} in pip.conf, or PIP_TRUSTED_HOST={host}, with "
                "the setting torch_use_pip_config on), then install again.",
                line,
            )
        if offered == "none":  # the index gave nothing: a network failure explains that
            network = self._network_cause()
            if network is not None:
                return network
        if self.no_version is not None:
            requirement, versions = self.no_version
            host = next((_netloc(i) for i in self.indexes if _netloc(i)), "")
            where = f" on {host}" if host else " on the package index"
            offers = "it offers none" if versions == "none" else f"it offers {versions}"
            network = self._network_cause()
            also = (
                f" Another source failed: {self._what(network.kind, network.evidence)}."
                if network is not None
                else ""
            )
            return Cause(
                "no_version",
                f"pip found no version of {requirement}{where} ({offers}). Check the index "
                "URL, the version asked for, and that the build has wheels for this "
                f"Python.{also}",
            )
        if self.crashed:
            last = next(
                (t for t in reversed(self.tail) if not t.startswith(("File ", "^", "~"))), ""
            )
            return Cause("pip_crash", f"pip stopped with an internal error ({last}).", last)
        if self.errors:
            first = self.errors[0].rstrip(".")
            return Cause("pip", f"pip reported: {first}.", self.errors[0])
        return Cause(
            "pip",
            f"pip exited with code {code} without an error message; its output is in the "
            "job's log.",
        )

    def detail(self, cause: Cause) -> str:
        """The lines behind ``cause`` for the log: its evidence, then pip's errors."""
        lines = [cause.evidence] if cause.evidence else []
        lines += [f"ERROR: {e}" for e in self.errors[-20:] if f"ERROR: {e}" not in lines]
        return "\n".join(lines)


class PipProgress:
    """Turns pip's output lines into progress events (one bar across all phases)."""

    def __init__(self) -> None:
        self.fraction = RESOLVE_BAND[0]
        self.collected = 0
        self.current = ""
        self.largest = 0.0
        self.errors: list[str] = []
        self.diagnosis = PipDiagnosis()

    def _emit(self, fraction: float, step: str) -> None:
        self.fraction = max(self.fraction, fraction)
        _wire.progress(self.fraction, step)

    def feed(self, line: str) -> bool:
        """Handle one line; True when it should also go to the log."""
        text = line.strip()
        raw = _RAW_PROGRESS_RE.match(text)
        if raw is None:
            self.diagnosis.feed(text)
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
        [python, "-c", code, *names],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        **_wire.no_window(),
    )
    try:
        data = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}
    return {str(k): str(v) for k, v in data.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--env-dir")
    target.add_argument("--python", dest="into_python")
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
    env = child_env(args.isolated_config)
    started = time.monotonic()
    if args.into_python:
        python = args.into_python
        if not Path(python).is_file():
            _wire.error(
                f"{python} does not exist: there is no environment to install into.",
                kind="missing_python",
            )
            sys.exit(2)
        env_dir: Path | None = None
        _wire.progress(VENV_BAND[1], "Starting pip")
    else:
        env_dir = Path(args.env_dir)
        python = create_venv(env_dir, env)
    install(python, pip_args, env, env_dir, started)


def create_venv(env_dir: Path, env: dict[str, str]) -> str:
    """Make a new venv in ``env_dir`` (which must not exist); its interpreter's path."""
    if env_dir.exists():
        _wire.error(
            f"{env_dir} already exists; an install always goes into a new folder.", kind="exists"
        )
        sys.exit(2)
    _wire.progress(VENV_BAND[0], "Creating the environment")
    code, lines = run_logged([sys.executable, "-m", "venv", str(env_dir)], env)
    python = str(env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    if code != 0 or not Path(python).exists():
        local = PipDiagnosis().feed_all(lines).local_cause()
        _wire.error(
            "creating the environment failed: " + local.message
            if local is not None
            else f"creating the environment failed (python -m venv exit code {code}).",
            kind="venv",
            detail="\n".join(lines[-20:]),
            cause=local.kind if local is not None else "venv",
        )
        sys.exit(1)
    _wire.progress(VENV_BAND[1], "Environment created; starting pip")
    return python


def install(
    python: str, pip_args: list[str], env: dict[str, str], env_dir: Path | None, started: float
) -> None:
    """Run the pip calls in order in ``python``, check what they installed, send the result."""
    calls = split_calls(pip_args)
    for number, call in enumerate(calls, 1):
        if len(calls) > 1:
            _wire.log(f"pip call {number} of {len(calls)}")
        code, tracker = run_pip(python, call, env)
        if code != 0:
            diagnosis = tracker.diagnosis
            cause = diagnosis.cause(code)
            _wire.error(
                cause.message,
                kind="pip",
                detail=diagnosis.detail(cause),
                cause=cause.kind,
                retries=diagnosis.retries,
                exit_code=code,
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
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        **_wire.no_window(),
    ).stdout.strip()
    _wire.progress(1.0, "Done")
    _wire.result(
        {
            "env_dir": str(env_dir) if env_dir is not None else None,
            "python": python,
            "python_version": version or None,
            "installed": installed,
            "seconds": round(time.monotonic() - started, 1),
        }
    )


if __name__ == "__main__":
    _wire.run_main(main)
