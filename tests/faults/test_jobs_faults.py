"""Issue 12, finding 13: no job outlives the panel, however the panel ends.

Each test runs a real parent (the ``rocmpanel`` CLI, or a small script using the job API)
with real children in their own sessions, ends the parent the way a user or the desktop
would (SIGTERM, SIGHUP, kill -9, a normal exit without cancelling), and checks that every
process of the job's tree is gone within a few seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from rocmpanel.jobs.process import JobProcess, JobState
from rocmpanel.jobs.spec import JobSpec, prepare

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX sessions and signals")

SCRIPTS = Path(__file__).resolve().parents[1] / "workers" / "scripts"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _still_alive(pids: list[int], seconds: float) -> list[int]:
    """The pids still running after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    alive = [p for p in pids if _alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if _alive(p)]
    return alive


def _tree(parent: int, at_least: int, seconds: float = 20.0) -> list[int]:
    """The descendants of ``parent`` once there are ``at_least`` of them."""
    deadline = time.monotonic() + seconds
    found: list[int] = []
    while time.monotonic() < deadline:
        try:
            found = [p.pid for p in psutil.Process(parent).children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        if len(found) >= at_least:
            return found
        time.sleep(0.05)
    raise AssertionError(f"the job tree of {parent} never had {at_least} processes: {found}")


def _finish(proc: subprocess.Popen[str]) -> None:
    """Kill ``proc`` if it still runs and close its pipes."""
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=10)


def _kill_leftovers(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            psutil.Process(pid).kill()


def _fake_python(tmp_path: Path, *, ignore_term: bool) -> Path:
    """An executable that stands in for the workload Python: a shell with two children
    that sleep for ten minutes (and, if asked, ignore SIGTERM and SIGHUP, as a wedged GPU
    job would)."""
    path = tmp_path / "fake-python"
    trap = "trap '' TERM HUP\n" if ignore_term else ""
    path.write_text(f"#!/bin/sh\n{trap}sleep 600 &\nsleep 600 &\nwait\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _cli(*args: str) -> subprocess.Popen[str]:
    """``rocmpanel ARGS`` in a session of its own (so a test can signal it alone); HOME and
    ROCMPANEL_HOME are the test's private ones (the conftest fixture set them)."""
    return subprocess.Popen(
        [sys.executable, "-m", "rocmpanel", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.mark.parametrize(
    ("signum", "ignore_term"),
    [
        (signal.SIGTERM, False),
        (signal.SIGHUP, False),
        (signal.SIGTERM, True),  # a job that ignores terminate is killed at exit
    ],
)
def test_a_signal_to_the_cli_ends_the_jobs_whole_tree(
    tmp_path: Path, signum: signal.Signals, ignore_term: bool
) -> None:
    fake = _fake_python(tmp_path, ignore_term=ignore_term)
    cli = _cli("probe", "--python", str(fake))
    tree: list[int] = []
    try:
        tree = _tree(cli.pid, at_least=3)  # the shell and its two sleeps
        assert len({os.getsid(pid) for pid in tree}) == 1
        assert os.getsid(tree[0]) != os.getsid(cli.pid)  # the job is in its own session
        started = time.monotonic()
        cli.send_signal(signum)
        _out, err = cli.communicate(timeout=15)
        assert time.monotonic() - started < 5
        assert cli.returncode == 128 + signum
        assert _still_alive(tree, 3.0) == []
        assert err.strip().splitlines()[-1] == (
            f"rocmpanel probe: stopped by {signum.name}; 1 background job ended."
        )
        assert "Traceback" not in err
    finally:
        _finish(cli)
        _kill_leftovers(tree)


class StalledIndex:
    """A TCP server that accepts connections and never answers: pip waits on it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/simple"
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self._held.append(conn)
            self.connected.set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for conn in self._held:
            conn.close()
        self.sock.close()


@pytest.fixture
def stalled_index() -> Iterator[StalledIndex]:
    index = StalledIndex()
    yield index
    index.close()


PARENT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from rocmpanel.jobs.process import JobProcess
    from rocmpanel.jobs.spec import JobSpec, prepare

    mode, env_dir, url = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "install":  # the real pip_install worker: pip waits on a stalled index
        spec = JobSpec(
            "install",
            "pip_install",
            ("--env-dir", env_dir, "--isolated-config", "--",
             "--no-cache-dir", "--retries", "0", "--timeout", "120", "--index-url", url,
             "tinypkg"),
        )
    else:  # a worker that ignores SIGTERM and has a child (no lifeline of its own)
        spec = JobSpec("hang", Path(url))
    job = JobProcess(prepare(spec), lambda e: None, lambda o: None, grace_s=30.0)
    job.start()
    print(job.pid, flush=True)
    if mode == "exit":
        sys.stdin.readline()  # the test says when: the interpreter then exits normally
        sys.exit(0)
    time.sleep(600)
    """
)


def _parent(tmp_path: Path, mode: str, url: str) -> subprocess.Popen[str]:
    script = tmp_path / "parent.py"
    script.write_text(PARENT, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, str(script), mode, str(tmp_path / "env"), url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _install_tree(parent: subprocess.Popen[str], index: StalledIndex) -> list[int]:
    """The pip_install worker and its children, once pip is waiting on the index."""
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    assert index.connected.wait(60), "pip never reached the index"
    tree = [worker, *(p.pid for p in psutil.Process(worker).children(recursive=True))]
    names = [psutil.Process(pid).cmdline() for pid in tree]
    assert any("pip_install.py" in " ".join(c) for c in names)
    assert any(c[1:4] == ["-m", "pip", "install"] for c in names), names
    return tree


def test_kill_9_of_the_parent_ends_the_install_worker_and_pip(
    tmp_path: Path, stalled_index: StalledIndex
) -> None:
    parent = _parent(tmp_path, "install", stalled_index.url)
    tree: list[int] = []
    try:
        tree = _install_tree(parent, stalled_index)
        started = time.monotonic()
        parent.kill()  # SIGKILL: nothing in the parent runs; the worker's lifeline ends
        parent.wait(10)
        assert _still_alive(tree, 5.0) == []
        assert time.monotonic() - started < 5
    finally:
        _finish(parent)
        _kill_leftovers(tree)


def test_a_normal_exit_without_cancelling_ends_the_jobs(tmp_path: Path) -> None:
    # hang.py ignores SIGTERM and reads no lifeline: only the exit hook can end it (its
    # own grace of 30 s is not waited for: terminate, 0.5 s, then kill).
    parent = _parent(tmp_path, "exit", str(SCRIPTS / "hang.py"))
    tree: list[int] = []
    try:
        assert parent.stdout is not None and parent.stdin is not None
        worker = int(parent.stdout.readline())
        tree = [worker, *_tree(worker, at_least=1)]
        parent.stdin.write("go\n")
        parent.stdin.flush()
        started = time.monotonic()
        assert parent.wait(10) == 0
        assert time.monotonic() - started < 3
        assert _still_alive(tree, 1.0) == []
    finally:
        _finish(parent)
        _kill_leftovers(tree)


GUI_PARENT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from PySide6.QtCore import QCoreApplication
    from rocmpanel.jobs.runner import JobManager, watch_exit_signals
    from rocmpanel.jobs.spec import JobSpec

    app = QCoreApplication([])
    manager = JobManager(grace_s=5.0)
    closed = []
    watch = watch_exit_signals(app, lambda: (closed.append(1), manager.shutdown()))
    assert watch is not None
    job = manager.start(JobSpec("hang", Path(sys.argv[1])))
    print(job.pid, flush=True)
    code = app.exec()
    print(f"exec {code} closed {len(closed)}", flush=True)
    sys.exit(code)
    """
)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_the_gui_closes_it_and_ends_its_jobs(
    tmp_path: Path, signum: signal.Signals
) -> None:
    script = tmp_path / "gui_parent.py"
    script.write_text(GUI_PARENT, encoding="utf-8")
    gui = subprocess.Popen(
        [sys.executable, str(script), str(SCRIPTS / "hang.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    tree: list[int] = []
    try:
        assert gui.stdout is not None
        worker = int(gui.stdout.readline())
        tree = [worker, *_tree(worker, at_least=1)]  # hang.py ignores SIGTERM; its child
        gui.send_signal(signum)
        out, err = gui.communicate(timeout=15)
        assert gui.returncode == 128 + signum, err
        assert out.strip() == f"exec {128 + signum} closed 1"
        assert _still_alive(tree, 3.0) == []
    finally:
        _finish(gui)
        _kill_leftovers(tree)


def test_an_exit_callback_that_raises_does_not_make_wait_hang() -> None:
    def broken(_outcome: object) -> None:
        raise RuntimeError("callback bug")

    job = JobProcess(prepare(JobSpec("ok", SCRIPTS / "ok.py")), lambda e: None, broken)
    job.start()
    outcome = job.wait(30)
    assert outcome is not None and outcome.state is JobState.SUCCEEDED
    assert not job.running


def test_an_exit_callback_that_raises_a_base_exception_does_not_make_wait_hang() -> None:
    def exits(_outcome: object) -> None:
        raise SystemExit(3)  # not an Exception: the old except clause let it through

    job = JobProcess(prepare(JobSpec("ok", SCRIPTS / "ok.py")), lambda e: None, exits)
    job.start()
    outcome = job.wait(30)
    assert outcome is not None and outcome.result == {"answer": 42, "argv": []}
    assert not job.running
