"""Real installs, no network: a wheel built here, a PEP 503 index served on 127.0.0.1.

Each install runs the pip_install worker as a real child process into a real venv. Every
scenario ends by checking that the environment installed before it still imports its package.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.base.settings import Settings
from rocmpanel.jobs import workload
from rocmpanel.jobs.process import JobProcess, JobState
from rocmpanel.jobs.protocol import LogLine, Progress
from rocmpanel.jobs.spec import prepare
from rocmpanel.pytorch import environments

pytestmark = pytest.mark.slow


class LocalIndex:
    """A PEP 503 simple index over some wheels; ``slowpkg`` answers only when released."""

    def __init__(self, wheels: list[Path]) -> None:
        self.wheels = {w.name: w for w in wheels}
        self.slow_requested = threading.Event()
        self.release = threading.Event()
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def _send(self, body: bytes, ctype: str = "text/html") -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                parts = [p for p in self.path.split("?")[0].split("/") if p]
                if parts[:1] == ["simple"] and len(parts) == 2:
                    project = parts[1]
                    if project == "slowpkg":
                        index.slow_requested.set()
                        index.release.wait(60)
                        self.send_error(404)
                        return
                    links = [
                        f'<a href="/files/{n}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}"'
                        f">{n}</a>"
                        for n, w in index.wheels.items()
                        if n.split("-")[0].replace("_", "-") == project
                    ]
                    if not links:
                        self.send_error(404)
                        return
                    self._send(("<html><body>" + "<br>".join(links) + "</body></html>").encode())
                elif parts[:1] == ["files"] and len(parts) == 2 and parts[1] in index.wheels:
                    self._send(index.wheels[parts[1]].read_bytes(), "application/octet-stream")
                else:
                    self.send_error(404)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, tiny_wheel: Any) -> Iterator[LocalIndex]:
    folder = tmp_path_factory.mktemp("wheels")
    wheels = [tiny_wheel(folder, "tinypkg", v) for v in ("1.0", "2.0")]
    served = LocalIndex(wheels)
    yield served
    served.close()


def install(name: str, pip_args: list[str], on_event=None, timeout: float = 120):
    """Run one install the way the panel does; returns (ticket, outcome, job)."""
    ticket = environments.begin_install(name, pip_args, needed_bytes=1)
    spec = environments.install_job_spec(ticket)
    job = JobProcess(prepare(spec), on_event or (lambda e: None), lambda o: None, grace_s=2.0)
    job.start()
    return ticket, job


def finish(ticket, job, timeout: float = 120):
    outcome = job.wait(timeout)
    assert outcome is not None, "the install did not finish in time"
    if outcome.was_successful():
        env = environments.finish_install(ticket, outcome.result)
        workload.activate(Settings.load(), str(env.python))
    else:
        environments.discard(ticket)
    return outcome


def imports_tinypkg(python: str | Path) -> str:
    out = subprocess.run(
        [str(python), "-c", "import tinypkg; print(tinypkg.VERSION)"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return out.stdout.strip()


@pytest.fixture(scope="module")
def home_with_env(tmp_path_factory: pytest.TempPathFactory, index: LocalIndex):
    """A data dir whose active environment has tinypkg 1.0 (installed for real)."""
    home = tmp_path_factory.mktemp("torch-install-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROCMPANEL_HOME", str(home))
        ticket, job = install(
            "previous", ["--no-cache-dir", "--index-url", index.url, "tinypkg==1.0"]
        )
        outcome = finish(ticket, job)
        assert outcome.was_successful(), str(outcome)
    return home


@pytest.fixture
def home(home_with_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROCMPANEL_HOME", str(home_with_env))
    return home_with_env


def previous_python() -> str:
    env = workload.find_env("previous")
    assert env is not None
    return str(env.python)


def test_success_switches_to_the_new_env_and_keeps_the_old(home: Path, index: LocalIndex):
    events: list[object] = []
    ticket, job = install(
        "newer", ["--no-cache-dir", "--index-url", index.url, "tinypkg==2.0"], events.append
    )
    outcome = finish(ticket, job)
    assert outcome.was_successful(), str(outcome)
    assert outcome.result is not None and outcome.result["installed"] == {"tinypkg": "2.0"}
    env = workload.find_env("newer")
    assert env is not None and imports_tinypkg(env.python) == "2.0"
    assert Settings.load().general.workload_python == str(env.python)
    assert imports_tinypkg(previous_python()) == "1.0"
    steps = [e.step for e in events if isinstance(e, Progress)]
    assert "Creating the environment" in steps and any(s.startswith("Resolving") for s in steps)
    assert any(s.startswith("Installing") for s in steps)
    fractions = [e.fraction for e in events if isinstance(e, Progress) and e.fraction is not None]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    # Remove (what the tab does after confirmation) deletes only that environment.
    workload.activate(Settings.load(), previous_python())
    environments.remove_env("newer")
    assert not env.path.exists() and workload.find_env("previous") is not None


def test_missing_package_fails_and_leaves_previous_env(home: Path, index: LocalIndex):
    before = Settings.load().general.workload_python
    ticket, job = install(
        "broken", ["--no-cache-dir", "--index-url", index.url, "doesnotexist==1.0"]
    )
    outcome = finish(ticket, job)
    assert outcome.state is JobState.FAILED
    assert outcome.message.startswith("pip found no version of doesnotexist==1.0 on 127.0.0.1:")
    assert outcome.error is not None and outcome.error.data["cause"] == "no_version"
    assert not ticket.path.exists()
    assert workload.find_env("broken") is None
    assert Settings.load().general.workload_python == before == previous_python()
    assert imports_tinypkg(previous_python()) == "1.0"


def test_cancel_mid_install_removes_partial_env(home: Path, index: LocalIndex):
    before = Settings.load().general.workload_python
    logs: list[str] = []

    def on_event(event: object) -> None:
        if isinstance(event, LogLine):
            logs.append(event.message)

    ticket, job = install(
        "cancelled", ["--no-cache-dir", "--index-url", index.url, "slowpkg"], on_event
    )
    assert index.slow_requested.wait(60), "pip never asked the index for slowpkg"
    assert ticket.path.exists()  # the venv is there, pip is waiting on the index
    job.cancel()
    outcome = finish(ticket, job)
    assert outcome.state is JobState.CANCELLED
    assert not ticket.path.exists()
    assert Settings.load().general.workload_python == before
    assert imports_tinypkg(previous_python()) == "1.0"
    assert any("slowpkg" in line for line in logs)


def test_isolated_config_hides_pip_configuration(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PIP_FIND_LINKS", "/opt/wheels")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "file:///elsewhere")
    module = _load_worker()
    env = module.child_env(True)
    assert not [k for k in env if k.startswith("PIP_") and k != "PIP_CONFIG_FILE"]
    assert env["PIP_CONFIG_FILE"] == os.devnull
    assert module.requirement_names(
        ["torch==2.12.*", "torchvision", "--index-url", "https://x/y", "-f", "z", "a[b]>=1"]
    ) == ["torch", "torchvision", "a"]


def test_pip_output_becomes_monotonic_progress(monkeypatch: pytest.MonkeyPatch):
    module = _load_worker()
    events: list[tuple[float, str]] = []
    monkeypatch.setattr(module._wire, "progress", lambda f, s="": events.append((f, s)))
    tracker = module.PipProgress()
    lines = [
        "Looking in indexes: https://download.pytorch.org/whl/rocm7.2",
        "Collecting torch==2.12.*",
        "  Downloading https://download.pytorch.org/whl/rocm7.2/torch-2.12.0%2Brocm7.2-cp311-"
        "cp311-manylinux_2_28_x86_64.whl (4512.3 MB)",
        "Progress 1000000000 of 4512300000",
        "Progress 4512300000 of 4512300000",
        "Collecting filelock (from torch==2.12.*)",
        "  Downloading filelock-3.20.0-py3-none-any.whl (16 kB)",
        "Progress 16000 of 16000",
        "Installing collected packages: filelock, torch",
        "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
    ]
    logged = [line for line in lines if tracker.feed(line)]
    assert not any(line.startswith("Progress") for line in logged)
    fractions = [f for f, _ in events]
    assert fractions == sorted(fractions)
    steps = [s for _, s in events]
    assert "Resolving torch==2.12.*" in steps
    assert any(s.startswith("Downloading torch-2.12.0") and "(4512.3 MB)" in s for s in steps)
    assert any("1000 of 4512 MB" in s for s in steps)
    assert abs(fractions[steps.index(next(s for s in steps if "4512 of 4512" in s))] - 0.8) < 1e-9
    assert steps[-1] == "Installing filelock, torch"
    assert tracker.errors == [
        "Could not install packages due to an OSError: [Errno 28] No space left on device"
    ]


def _worker_path() -> Path:
    from rocmpanel.workers import worker_script

    return worker_script("pip_install")


def _load_worker():
    import importlib.util
    import sys

    from rocmpanel.workers import WORKERS_DIR

    sys.path.insert(0, str(WORKERS_DIR))
    try:
        spec = importlib.util.spec_from_file_location("pip_install_worker", _worker_path())
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(WORKERS_DIR))
