"""The frozen panel's Python for jobs and the argv that starts the panel again."""

from __future__ import annotations

import sys

import pytest

from rocmpanel.base import frozen


def test_a_package_install_uses_its_own_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert frozen.own_python() == sys.executable
    assert frozen.panel_command("--demo") == [sys.executable, "-m", "rocmpanel", "--demo"]


def test_a_frozen_panel_uses_the_system_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    found = {"python3": "/usr/bin/python3"}
    monkeypatch.setattr(frozen.shutil, "which", found.get)
    assert frozen.own_python("linux") == "/usr/bin/python3"
    assert frozen.panel_command("--demo") == [sys.executable, "--demo"]
    found.clear()
    assert frozen.own_python("linux") == "python3"  # starting a job then says it is missing


def test_the_store_alias_is_not_a_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    found = {
        "python": r"C:\Users\a\AppData\Local\Microsoft\WindowsApps\python.exe",
        "py": r"C:\Windows\py.exe",
    }
    monkeypatch.setattr(frozen.shutil, "which", found.get)
    assert frozen.own_python("win32") == r"C:\Windows\py.exe"
