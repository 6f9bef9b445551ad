"""Test-wide set-up: offscreen Qt, and a private ROCMPANEL_HOME for every test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SHARED = Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "fixtures"


@pytest.fixture(autouse=True)
def _private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """No test reads or writes the real user's settings, data or env files."""
    home = tmp_path_factory.mktemp("rocmpanel-home")
    monkeypatch.setenv("ROCMPANEL_HOME", str(home))
    user_home = home / "user"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))  # ~/.profile, ~/.config/environment.d
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


@pytest.fixture
def shared_fixtures() -> Path:
    """../shared/fixtures, or skip when this checkout has no ../shared next to it."""
    if not FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is not present")
    return FIXTURES
