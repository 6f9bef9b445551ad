"""base.subproc: no console window on Windows, and no module that starts a process
without it; base.registry: reads through the winreg seam never raise."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.base import registry, subproc

PACKAGE = Path(__file__).resolve().parents[2] / "rocmpanel"
# subprocess functions that start a process (subprocess.Popen subclasses included).
STARTERS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
# The one module allowed to call them, and the workers (stdlib only: they pass the flag
# themselves, checked in tests/workers).
ALLOWED = {PACKAGE / "base" / "subproc.py"}


def _direct_calls(path: Path, root: Path = PACKAGE) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "subprocess"
                and func.attr in STARTERS
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno}: subprocess.{func.attr}")
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "os"
                and func.attr in {"system", "popen", "startfile"}
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno}: os.{func.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "subprocess":
            names = {a.name for a in node.names} & STARTERS
            if names:
                found.append(f"{path.relative_to(root)}:{node.lineno}: from subprocess import")
    return sorted(found)


def test_every_process_the_panel_starts_goes_through_subproc() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in ALLOWED or "workers" in path.relative_to(PACKAGE).parts:
            continue
        found += _direct_calls(path)
    assert found == []


def test_the_scan_finds_a_direct_call(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import subprocess\nsubprocess.run(['x'])\nfrom subprocess import Popen\n")
    assert _direct_calls(bad, tmp_path) == [
        "bad.py:2: subprocess.run",
        "bad.py:3: from subprocess import",
    ]


def test_no_window_flag_on_windows_only() -> None:
    assert subproc.creation_flags(0, "win32") == 0x08000000
    assert subproc.creation_flags(0x200, "win32") == 0x08000200  # CREATE_NEW_PROCESS_GROUP kept
    assert subproc.creation_flags(0x200, "linux") == 0x200
    assert subproc.hidden({"text": True}, "linux") == {"text": True}
    assert subproc.hidden({"text": True}, "win32") == {"text": True, "creationflags": 0x08000000}
    assert subproc.hidden({"creationflags": 0x4}, "win32") == {"creationflags": 0x08000004}


def test_run_passes_the_flag_to_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(subproc.subprocess, "run", lambda argv, **kw: seen.append(kw))
    monkeypatch.setattr(subproc.subprocess, "Popen", lambda argv, **kw: seen.append(kw))
    subproc.run(["x"], platform="win32", capture_output=True)
    subproc.popen(["x"], platform="win32")
    subproc.run(["x"], platform="linux")
    assert seen == [
        {"capture_output": True, "creationflags": 0x08000000},
        {"creationflags": 0x08000000},
        {},
    ]


def test_run_really_runs_here() -> None:
    done = subproc.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True)
    assert done.stdout.strip() == "42"


def test_registry_reads_never_raise(fake_registry: Any) -> None:
    fake_registry.set("HKLM\\SYSTEM\\Key", "Value", 7, fake_registry.REG_DWORD)
    fake_registry.add_key("HKLM\\SYSTEM\\Key\\0001")
    fake_registry.add_key("HKLM\\SYSTEM\\Key\\0000")
    assert registry.read_value(fake_registry, "HKLM", "system\\key", "VALUE") == 7
    assert registry.read_value(fake_registry, "HKLM", "SYSTEM\\Key", "missing") is None
    assert registry.read_value(fake_registry, "HKLM", "SYSTEM\\Nope", "Value") is None
    assert registry.read_values(fake_registry, "HKLM", "SYSTEM\\Key") == {"Value": (7, 4)}
    assert registry.read_values(fake_registry, "HKCU", "Nope") == {}
    assert registry.subkeys(fake_registry, "HKLM", "SYSTEM\\Key") == ["0001", "0000"]
    assert registry.subkeys(fake_registry, "HKLM", "SYSTEM\\Nope") == []
    assert fake_registry.open_handles == 0


def test_no_registry_off_windows() -> None:
    assert registry.open_registry("linux") is None
