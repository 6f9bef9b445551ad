"""The README's test command works in its own environment and leaves the panel's alone.

``scripts/test-env.sh`` is run for real with a stand-in ``python3`` that makes a fake venv
whose interpreter records how it was called, so no package is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/bin/sh
# python3 -m venv DIR: make DIR/bin/python, which logs its arguments.
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    printf '#!/bin/sh\\necho "$0 $*" >> "%s"\\n' "$CALLS" > "$3/bin/python"
    chmod +x "$3/bin/python"
    echo "venv $3" >> "$CALLS"
fi
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout with the panel's own .venv already made (as the README's first command
    leaves it) and the test scripts."""
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    app_python = tmp_path / ".venv" / "bin" / "python"
    app_python.parent.mkdir(parents=True)
    app_python.write_text('#!/bin/sh\necho app-python-used >> "$CALLS"\n')
    app_python.chmod(0o755)
    fake = tmp_path / "fake-python3"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    return tmp_path


def _test_env(checkout: Path) -> list[str]:
    calls = checkout / "calls.log"
    env = {**os.environ, "PYTHON": str(checkout / "fake-python3"), "CALLS": str(calls)}
    subprocess.run(
        ["bash", "-c", ". scripts/test-env.sh && test_env"],
        cwd=checkout,
        env=env,
        check=True,
        timeout=30,
    )
    return calls.read_text().splitlines()


def test_the_test_environment_is_its_own_venv_and_never_the_apps(checkout: Path) -> None:
    before = (checkout / ".venv" / "bin" / "python").read_bytes()
    calls = _test_env(checkout)
    assert calls == [
        "venv .venv-test",
        ".venv-test/bin/python -m pip install --quiet --disable-pip-version-check -e .[test] "
        "-r requirements-test.txt",
    ]
    assert (checkout / ".venv" / "bin" / "python").read_bytes() == before
    assert sorted(p.name for p in (checkout / ".venv").iterdir()) == ["bin"]


def test_a_second_run_reuses_the_test_environment(checkout: Path) -> None:
    _test_env(checkout)
    (checkout / "calls.log").unlink()
    calls = _test_env(checkout)
    assert [c.split()[0] for c in calls] == [".venv-test/bin/python"]


def test_the_readme_and_ci_run_that_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "```sh\nbash scripts/test.sh\n```" in readme
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_sh = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert ".venv/" not in test_sh.replace(".venv-test", "")
