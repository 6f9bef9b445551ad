"""``rocmpanel.jobs.installed``: packages in a workload Python, read by running
``workers/packages.py`` there (a real venv without torch, the panel's own Python, and
interpreters that fail), and the chat's use of it (``rocmpanel.chat.installed``)."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.chat.installed import read_installed as read_chat_packages
from rocmpanel.chat.requirements import distributions
from rocmpanel.jobs import installed
from rocmpanel.jobs.installed import read_installed


def test_a_python_without_torch_lacks_every_chat_package(python_without_torch: str) -> None:
    found = read_chat_packages(python_without_torch)
    assert found.python == python_without_torch
    assert dict(found.versions) == {name: None for name in distributions()}


def test_the_panels_own_python_is_read_when_the_setting_is_empty() -> None:
    found = read_installed("", ("pytest",))
    assert found.versions == {"pytest": importlib.metadata.version("pytest")}
    assert found.python_version == ".".join(map(str, sys.version_info[:3]))


def test_a_missing_interpreter_is_a_plain_error(tmp_path: Path) -> None:
    python = str(tmp_path / "nope" / "python")
    with pytest.raises(PanelError) as caught:
        read_installed(python, ("torch",))
    assert caught.value.message == f"The workload Python {python!r} does not exist."


def test_an_interpreter_that_says_nothing_useful(tmp_path: Path, monkeypatch) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'broken: no site module' >&2\nexit 7\n")
    fake.chmod(0o755)
    if sys.platform == "win32":
        pytest.skip("a shell script as the interpreter")
    with pytest.raises(PanelError) as caught:
        read_installed(str(fake), ("torch",))
    assert caught.value.message == (
        f"The workload Python {fake} did not list its packages "
        "(exit code 7: broken: no site module)."
    )


def test_an_interpreter_that_hangs_is_given_up_on(tmp_path: Path, monkeypatch) -> None:
    if sys.platform == "win32":
        pytest.skip("a shell script as the interpreter")
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setattr(installed, "TIMEOUT_S", 0.2)
    with pytest.raises(PanelError) as caught:
        read_installed(str(fake), ("torch",))
    assert caught.value.message == (
        f"The workload Python {fake} did not answer within 0.2 s. "
        "Check that it starts, or pick another interpreter in Settings."
    )
