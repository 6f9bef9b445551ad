"""Fixtures of the chat tests: a real workload Python that lacks torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def python_without_torch(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh venv (no pip, no site packages): a real interpreter without torch or
    transformers, as a newcomer's first workload Python often is."""
    folder = tmp_path_factory.mktemp("venv-without-torch")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)],
        check=True,
        timeout=120,
        capture_output=True,
    )
    bin_dir = folder / ("Scripts" if sys.platform == "win32" else "bin")
    python = bin_dir / ("python.exe" if sys.platform == "win32" else "python")
    assert Path(python).exists()
    return str(python)
