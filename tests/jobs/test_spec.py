from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs.process import JobState, decide_outcome
from rocmpanel.jobs.protocol import WorkerError
from rocmpanel.jobs.spec import JobSpec, console_python, prepare, resolve_python, set_env


def test_prepare_builds_argv_with_the_worker_by_path() -> None:
    job = prepare(JobSpec("probe", "probe", args=("--x",)), base_env={"PATH": "/bin"})
    assert job.argv[0] == sys.executable
    assert job.argv[1] == "-u"
    assert Path(job.argv[2]).name == "probe.py" and Path(job.argv[2]).is_file()
    assert job.argv[3:] == ("--x",)
    assert job.env["PYTHONUNBUFFERED"] == "1"


def test_prepare_applies_and_removes_env() -> None:
    base = {"KEEP": "1", "DROP": "x", "PYTHONPATH": "/panel"}
    job = prepare(JobSpec("p", "probe", env={"NEW": "v", "DROP": None}), base_env=base)
    assert job.env["NEW"] == "v" and job.env["KEEP"] == "1"
    assert "DROP" not in job.env and "PYTHONPATH" not in job.env


def test_missing_python_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PanelError, match="does not exist"):
        prepare(JobSpec("p", "probe", python=str(tmp_path / "nope" / "python")))


def test_python_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PanelError, match="not an executable"):
        prepare(JobSpec("p", "probe", python=str(tmp_path)))


def test_missing_worker_script_is_a_clear_error() -> None:
    with pytest.raises(PanelError, match="worker script"):
        prepare(JobSpec("p", "no_such_worker"))


def test_python_found_on_path() -> None:
    job = prepare(JobSpec("p", "probe", python=Path(sys.executable).name))
    assert Path(job.argv[0]).is_absolute()


def _outcome(**kw):
    base = dict(
        exit_code=0,
        cancelled=False,
        interactive=False,
        result={"x": 1},
        error=None,
        stderr_tail=(),
        duration_s=0.1,
    )
    base.update(kw)
    return decide_outcome(**base)


def test_outcome_rules() -> None:
    assert _outcome().state is JobState.SUCCEEDED
    assert _outcome(result=None).state is JobState.CRASHED
    assert _outcome(result=None, interactive=True).state is JobState.SUCCEEDED
    assert _outcome(exit_code=3).state is JobState.CRASHED
    killed = _outcome(exit_code=-9, result=None)
    assert killed.state is JobState.CRASHED and killed.signal_name == "SIGKILL"
    assert "SIGKILL" in killed.message
    failed = _outcome(exit_code=1, error=WorkerError("no GPU", "nogpu"))
    assert failed.state is JobState.FAILED and failed.message == "no GPU"
    assert _outcome(exit_code=-15, cancelled=True).state is JobState.CANCELLED
    stale = WorkerError("folder refused", "refused")
    assert _outcome(exit_code=0, interactive=True, error=stale).state is JobState.SUCCEEDED
    assert _outcome(exit_code=-9, interactive=True, error=stale).state is JobState.CRASHED
    assert _outcome(exit_code=1, interactive=True, error=stale).state is JobState.FAILED


# -- Windows: python.exe for workers, case-insensitive environment names ---------------------
def _interpreters(folder: Path, *names: str) -> Path:
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"MZ")
    return folder


@pytest.mark.parametrize("gui_name", ["pythonw.exe", "PythonW.EXE"])
def test_on_windows_pythonw_becomes_the_python_exe_next_to_it(
    tmp_path: Path, gui_name: str
) -> None:
    folder = _interpreters(tmp_path / "Python311", gui_name, "python.exe")
    gui = str(folder / gui_name)
    assert resolve_python(gui, platform="win32") == str(folder / "python.exe")
    assert console_python(gui, platform="win32") == str(folder / "python.exe")


def test_pythonw_is_kept_without_a_python_exe_and_the_log_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gui = str(_interpreters(tmp_path / "embedded", "pythonw.exe") / "pythonw.exe")
    with caplog.at_level("WARNING", logger="rocmpanel.jobs.spec"):
        assert resolve_python(gui, platform="win32") == gui
    assert [r.getMessage() for r in caplog.records] == [
        f"{gui} has no python.exe next to it; workers run with pythonw.exe, so the programs "
        "they start (pip, compilers) may open console windows"
    ]


def test_pythonw_is_left_alone_off_windows_and_other_names_everywhere(tmp_path: Path) -> None:
    folder = _interpreters(tmp_path / "py", "pythonw.exe", "python.exe", "pythonw3.exe")
    assert console_python(str(folder / "pythonw.exe"), platform="linux") == str(
        folder / "pythonw.exe"
    )
    assert console_python(str(folder / "pythonw3.exe"), platform="win32") == str(
        folder / "pythonw3.exe"
    )
    assert console_python(str(folder / "python.exe"), platform="win32") == str(
        folder / "python.exe"
    )


def test_the_panels_own_pythonw_gives_workers_python_exe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _interpreters(tmp_path / "venv", "pythonw.exe", "python.exe")
    monkeypatch.setattr(sys, "executable", str(folder / "pythonw.exe"))
    assert resolve_python("", platform="win32") == str(folder / "python.exe")
    assert resolve_python("", platform="linux") == str(folder / "pythonw.exe")


@pytest.mark.parametrize(
    ("name", "value", "windows"),
    [
        # An existing name keeps its first spelling; every other spelling of it goes.
        ("Path", "C:\\new", {"PATH": "C:\\new", "Keep": "1"}),
        ("path", None, {"Keep": "1"}),
        # A new name keeps the override's spelling; other names are left as they are.
        ("Temp", "C:\\t", {"PATH": "C:\\a", "Path": "C:\\b", "Keep": "1", "Temp": "C:\\t"}),
        ("KEEP", "2", {"PATH": "C:\\a", "Path": "C:\\b", "Keep": "2"}),
        ("Gone", None, {"PATH": "C:\\a", "Path": "C:\\b", "Keep": "1"}),
    ],
)
def test_set_env_is_case_insensitive_on_windows_only(
    name: str, value: str | None, windows: dict[str, str]
) -> None:
    base = {"PATH": "C:\\a", "Path": "C:\\b", "Keep": "1"}
    on_windows = dict(base)
    set_env(on_windows, name, value, platform="win32")
    assert on_windows == windows
    on_linux = dict(base)
    set_env(on_linux, name, value, platform="linux")
    expected = {**base, name: value}
    assert on_linux == {k: v for k, v in expected.items() if v is not None}


def test_prepare_on_windows_replaces_mixed_case_names() -> None:
    base = {"PATH": "C:\\Windows", "PYTHONPATH": "C:\\panel", "PythonIOEncoding": "cp1252"}
    spec = JobSpec("p", "probe", env={"Path": "C:\\rocm\\bin;C:\\Windows", "hip_path": None})
    env = prepare(spec, base_env={**base, "HIP_PATH": "C:\\hip"}, platform="win32").env
    assert env == {
        "PATH": "C:\\rocm\\bin;C:\\Windows",
        "PythonIOEncoding": "utf-8",
        "PYTHONUNBUFFERED": "1",
    }


def test_prepare_elsewhere_keeps_names_case_sensitive() -> None:
    base = {"PATH": "/bin", "pythonpath": "/mine", "PYTHONPATH": "/panel"}
    spec = JobSpec("p", "probe", env={"Path": "/other", "path": None})
    env = prepare(spec, base_env=base, platform="linux").env
    assert env == {
        "PATH": "/bin",
        "Path": "/other",
        "pythonpath": "/mine",
        "PYTHONUNBUFFERED": "1",
        "PYTHONIOENCODING": "utf-8",
    }
