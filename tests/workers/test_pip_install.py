"""The pip_install worker's lifeline: once the panel is gone (its end of the stdin pipe
closed, as a kill -9 closes it), the worker ends itself and everything it started. And on
Windows no program it starts (venv, pip, the checks) gets a console window."""

from __future__ import annotations

import ast
import importlib.util
import io
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import psutil
import pytest

from rocmpanel.base import subproc
from rocmpanel.jobs import lifetime
from rocmpanel.workers import WORKERS_DIR, worker_script

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def _load_worker() -> ModuleType:
    sys.path.insert(0, str(WORKERS_DIR))
    try:
        spec = importlib.util.spec_from_file_location("pip_install_t", worker_script("pip_install"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(WORKERS_DIR))


WORKER = _load_worker()

# Runs the worker's lifeline and a child the way an install runs pip (stream_lines), then
# waits; prints the child's pid first.
LIFELINE_SCRIPT = textwrap.dedent(
    """
    import importlib.util, sys, threading, time
    sys.path.insert(0, sys.argv[1])
    spec = importlib.util.spec_from_file_location("w", sys.argv[2])
    w = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(w)
    w._wire.watch_lifeline()
    code = "import os, time; print(os.getpid(), flush=True); time.sleep(600)"
    threading.Thread(
        target=w.stream_lines,
        args=([sys.executable, "-c", code], dict(w.os.environ), lambda t: print(t, flush=True)),
        daemon=True,
    ).start()
    time.sleep(600)
    """
)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _start(argv: list[str], *, lifeline: bool) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != lifetime.LIFELINE_ENV}
    if lifeline:
        env[lifetime.LIFELINE_ENV] = lifetime.LIFELINE_STDIN
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def _finish(proc: subprocess.Popen[str], *, kill: bool = True) -> str:
    """Kill the test's whole group if asked and it still runs; close the pipes; what was
    left on stdout."""
    if kill and proc.poll() is None:
        os.killpg(proc.pid, 9)
    proc.wait(10)
    out = ""
    if proc.stdout is not None and not proc.stdout.closed:
        out = proc.stdout.read()
        proc.stdout.close()
    if proc.stdin is not None and not proc.stdin.closed:
        proc.stdin.close()
    return out


def _child_pid(proc: subprocess.Popen[str]) -> int:
    """The child's pid, the first line that is one (the worker logs its command first)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip().isdigit():
            return int(line)
    raise AssertionError("the child never said its pid")


def _script(tmp_path: Path) -> list[str]:
    path = tmp_path / "lifeline.py"
    path.write_text(LIFELINE_SCRIPT, encoding="utf-8")
    return [sys.executable, str(path), str(WORKERS_DIR), str(worker_script("pip_install"))]


@posix
def test_end_of_stdin_kills_the_worker_and_its_group(tmp_path: Path) -> None:
    proc = _start(_script(tmp_path), lifeline=True)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        child = _child_pid(proc)
        assert os.getpgid(child) == proc.pid  # pip shares the worker's group
        proc.stdin.close()  # what the panel's death does to the pipe
        assert proc.wait(5) == -9  # SIGKILL to the whole group, the worker included
        assert _gone_within(child, 3)
    finally:
        _finish(proc)


@posix
def test_not_a_group_leader_it_kills_its_child_and_exits(tmp_path: Path) -> None:
    # A shell leads the group: the worker must not take the shell with it.
    argv = ["/bin/sh", "-c", '"$@"; echo "worker exited $?"', "sh", *_script(tmp_path)]
    proc = _start(argv, lifeline=True)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        child = _child_pid(proc)
        proc.stdin.close()
        assert proc.wait(10) == 0  # the shell lived on to report
        assert _finish(proc, kill=False).splitlines()[-1] == "worker exited 1"
        assert _gone_within(child, 3)
    finally:
        _finish(proc)


@posix
def test_without_the_panels_word_stdin_is_not_watched(tmp_path: Path) -> None:
    proc = _start(_script(tmp_path), lifeline=False)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        child = _child_pid(proc)
        proc.stdin.close()
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(1)  # run by hand: stdin is the user's, its end means nothing
        assert _alive(child)
    finally:
        _finish(proc)


def test_pip_does_not_inherit_the_lifeline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lifetime.LIFELINE_ENV, lifetime.LIFELINE_STDIN)
    assert lifetime.LIFELINE_ENV not in WORKER.child_env(False)
    assert (WORKER.LIFELINE_ENV, WORKER.LIFELINE_STDIN) == (
        lifetime.LIFELINE_ENV,
        lifetime.LIFELINE_STDIN,
    )


@posix
def test_pip_reads_nothing_from_the_lifeline() -> None:
    lines: list[str] = []
    code = "import sys; print(repr(sys.stdin.read()))"
    assert WORKER.stream_lines([sys.executable, "-c", code], dict(os.environ), lines.append) == 0
    assert lines == ["''"]


# -- Windows: no console window for anything the worker starts ---------------------------------
def test_the_no_window_flag_is_base_subprocs_and_only_for_windows() -> None:
    wire = WORKER._wire
    assert wire.CREATE_NO_WINDOW == subproc.CREATE_NO_WINDOW == 0x08000000
    assert wire.no_window("win32") == {"creationflags": 0x08000000}
    assert wire.no_window("linux") == {}


def test_every_subprocess_call_of_the_worker_passes_the_flag() -> None:
    tree = ast.parse(worker_script("pip_install").read_text(encoding="utf-8"))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "subprocess"
    ]
    flagged = [
        any(k.arg is None and ast.unparse(k.value) == "_wire.no_window()" for k in c.keywords)
        for c in calls
    ]
    assert [c.func.attr for c in calls] == ["Popen", "run", "run", "run"]  # type: ignore[attr-defined]
    assert flagged == [True] * 4


def test_on_windows_pip_and_the_checks_run_without_a_console(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[str, list[str], dict[str, Any]]] = []

    class Done:
        def __init__(self, out: str) -> None:
            self.stdout = out

    class Child:
        def __init__(self, argv: list[str], **kwargs: Any) -> None:
            seen.append(("Popen", argv, kwargs))
            self.stdout = io.StringIO("Collecting tinypkg\n")

        def wait(self) -> int:
            return 0

    def run(argv: list[str], **kwargs: Any) -> Done:
        seen.append(("run", argv, kwargs))
        return Done("pip 24.2 from x\n" if "pip" in argv else '{"tinypkg": "1.0"}\n')

    fake = SimpleNamespace(
        Popen=Child, run=run, DEVNULL=subprocess.DEVNULL, PIPE=subprocess.PIPE, STDOUT=-2
    )
    real_no_window = WORKER._wire.no_window
    monkeypatch.setattr(WORKER, "subprocess", fake)
    monkeypatch.setattr(WORKER._wire, "no_window", lambda: real_no_window("win32"))
    lines: list[str] = []
    assert WORKER.stream_lines(["pip", "install", "tinypkg"], {}, lines.append) == 0
    assert WORKER.pip_version("python.exe", {}) == (24, 2)
    assert WORKER.installed_versions("python.exe", ["tinypkg"], {}) == {"tinypkg": "1.0"}
    assert lines == ["Collecting tinypkg"]
    assert [(kind, kwargs["creationflags"]) for kind, _argv, kwargs in seen] == [
        ("Popen", 0x08000000),
        ("run", 0x08000000),
        ("run", 0x08000000),
    ]


def test_ending_itself_on_windows_kills_the_children_and_never_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wire = WORKER._wire
    killed: list[str] = []

    class Child:
        def __init__(self, name: str, error: BaseException | None) -> None:
            self.name, self.error = name, error

        def kill(self) -> None:
            killed.append(self.name)
            if self.error is not None:
                raise self.error

    class Exited(Exception):
        pass

    def exit_(code: int) -> None:
        raise Exited(code)

    children = {Child("gone", SystemError("kill failed")), Child("pip", None)}
    monkeypatch.setattr(wire, "running_children", children)
    monkeypatch.setattr(wire.os, "_exit", exit_)
    monkeypatch.delattr(wire.os, "getpgrp")  # as on Windows
    for posix_flag in (False, True):
        with pytest.raises(Exited) as exited:
            wire.end_own_group(posix=posix_flag)
        assert exited.value.args == (1,)
    assert sorted(killed) == ["gone", "gone", "pip", "pip"]


def test_no_lifeline_is_watched_off_posix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lifetime.LIFELINE_ENV, lifetime.LIFELINE_STDIN)
    monkeypatch.setattr(WORKER._wire.os, "name", "nt")
    assert WORKER._wire.watch_lifeline() is None
