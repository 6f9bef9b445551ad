"""``rocmpanel report --out``: a real subprocess on a recorded tree, and its refusals."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from rocmpanel.shell.cli import main

SECRET_VALUE = "sk-live-0123456789abcdef"


def _env(tmp_path: Path, tree: Path) -> dict[str, str]:
    """A process environment with a user, a home, a secret and a host name to hide."""
    home = tmp_path / "home" / "alicebob"
    home.mkdir(parents=True)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ROCM", "HIP", "HSA", "PYTORCH"))
    }
    env.update(
        ROCMPANEL_HOME=str(tmp_path / "rp"),
        ROCMPANEL_SYSFS_ROOT=str(tree),
        HOME=str(home),
        USER="alicebob",
        LOGNAME="alicebob",
        ROCM_PATH=f"{home}/rocm",
        MY_API_KEY=SECRET_VALUE,
        HIP_LAUNCH_NOTE=f"--key {SECRET_VALUE} on {socket.gethostname()}",
        PATH=f"{home}/bin:" + env.get("PATH", ""),
    )
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmpanel", "report", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path, kfd: ModuleType) -> Path:
    return kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX)


def test_markdown_file_from_a_recorded_tree(tmp_path: Path, tree: Path) -> None:
    env = _env(tmp_path, tree)
    out = tmp_path / "report.md"
    proc = _run(["--out", str(out)], env)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    assert "gfx1100" in text and "| HSA_OVERRIDE_GFX_VERSION |" in text
    assert "ROCM_PATH | ~/rocm" in text
    assert "alicebob" not in text and SECRET_VALUE not in text
    host = socket.gethostname()
    # A host name of one or two letters is left in text (it would take letters out).
    shown = "\\<host\\>" if len(host.split(".")[0]) >= 3 else host
    assert f"HIP_LAUNCH_NOTE | --key \\<secret\\> on {shown} |" in text
    assert "MY_API_KEY" not in text  # not a ROCm variable: not listed at all
    assert "Traceback" not in proc.stderr


def test_keep_paths_keeps_the_user_name_only(tmp_path: Path, tree: Path) -> None:
    env = _env(tmp_path, tree)
    proc = _run(["--out", "-", "--keep-paths"], env)
    assert proc.returncode == 0, proc.stderr
    assert "/home/alicebob/rocm" in proc.stdout and SECRET_VALUE not in proc.stdout


def test_html_file_and_stdout_markdown(tmp_path: Path, tree: Path) -> None:
    env = _env(tmp_path, tree)
    out = tmp_path / "Report.HTML"
    assert _run(["--out", str(out)], env).returncode == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    proc = _run(["--out", "-"], env)
    assert proc.returncode == 0 and proc.stdout.startswith("## rocmpanel health report")


def test_an_existing_file_is_backed_up_before_it_is_replaced(tmp_path: Path, tree: Path) -> None:
    env = _env(tmp_path, tree)
    out = tmp_path / "notes.md"
    out.write_text("my own notes\n")
    assert _run(["--out", str(out)], env).returncode == 0
    backups = list((tmp_path / "rp" / "data" / "backups" / "reports").iterdir())
    assert [b.read_text() for b in backups] == ["my own notes\n"]


def test_backups_of_same_named_reports_in_two_folders_are_told_apart(
    tmp_path: Path, monkeypatch
) -> None:
    """A relative --out named the backup by "report.md" alone: the notes of two folders
    shared one rotation, and the backup did not say which folder it came from."""
    from rocmpanel.base import paths
    from rocmpanel.shell.report_file import save_report

    monkeypatch.setenv("ROCMPANEL_HOME", str(tmp_path / "rp"))
    for folder in ("alpha", "beta"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "report.md").write_text(f"notes of {folder}\n")
        monkeypatch.chdir(tmp_path / folder)
        save_report(Path("report.md"), "## report\n")
    backups = sorted((paths.backups_dir() / "reports").iterdir())
    assert len(backups) == 2
    for backup in backups:
        folder = "alpha" if "alpha" in backup.name else "beta"
        assert backup.read_text() == f"notes of {folder}\n"


def test_a_bad_suffix_is_refused(tmp_path: Path, capsys) -> None:
    assert main(["report", "--out", str(tmp_path / "r.txt")]) == 2
    err = capsys.readouterr().err
    assert "ending in .html or .md" in err and "Traceback" not in err
    assert not (tmp_path / "r.txt").exists()


def test_a_folder_a_fifo_and_a_missing_folder_are_refused(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "r.md"
    folder.mkdir()
    assert main(["report", "--out", str(folder)]) == 2
    assert "it is a folder" in capsys.readouterr().err
    assert main(["report", "--out", str(tmp_path / "nowhere" / "r.md")]) == 2
    assert "does not exist" in capsys.readouterr().err
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.html"
        os.mkfifo(fifo)
        assert main(["report", "--out", str(fifo)]) == 2
        err = capsys.readouterr().err
        assert "not a regular file" in err and "Traceback" not in err
        assert fifo.is_fifo()  # left as it was


def test_an_unwritable_folder_is_a_message(tmp_path: Path, tree: Path, monkeypatch, capsys) -> None:
    if os.name != "posix" or os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(tree))
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert main(["report", "--out", str(folder / "r.md")]) == 2
    finally:
        folder.chmod(0o700)
    err = capsys.readouterr().err
    assert "Could not write" in err and "Traceback" not in err


def test_demo_report_says_demo_and_has_telemetry(tmp_path: Path, tree: Path) -> None:
    proc = _run(["--demo", "--out", "-"], _env(tmp_path, tree))
    assert proc.returncode == 0, proc.stderr
    assert "**DEMO:" in proc.stdout and "Recent telemetry peaks (last 10 min)" in proc.stdout
    assert "gfx1100" in proc.stdout and "alicebob" not in proc.stdout
    assert "ROCM_PATH" not in proc.stdout  # this machine's variables are not the demo's


def test_report_imports_no_qt(tmp_path: Path, tree: Path) -> None:
    code = (
        "import sys\nfrom rocmpanel.shell.cli import main\n"
        "main(['report', '--out', '-'])\n"
        "assert 'PySide6' not in sys.modules, 'Qt imported'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=_env(tmp_path, tree),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_a_failed_write_is_a_message(tmp_path: Path, tree: Path, monkeypatch, capsys) -> None:
    """What a full disk does (root can write anywhere, so the failure is made here)."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.shell import report_file

    def full(path: Path, data: bytes) -> Path:
        raise PanelError(f"Could not write {path}: No space left on device.")

    monkeypatch.setattr(report_file, "write_atomic", full)
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(tree))
    assert main(["report", "--out", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "Traceback" not in err
