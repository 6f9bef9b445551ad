from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.atomic import backup_file, write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import SETTINGS, Settings


def test_settings_live_under_rocmpanel_home(_private_home: Path) -> None:
    assert paths.settings_file().is_relative_to(_private_home)
    assert paths.data_dir().is_relative_to(_private_home)


def test_defaults_roundtrip_and_unknown_keys_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text("future_key: 7\ntelemetry_interval_ms: 250\n")
    settings = Settings.load(path)
    assert settings.get("telemetry_interval_ms") == 250
    assert settings.get("workload_python") == ""
    settings.set("workload_python", "/opt/py")
    settings.save()
    again = Settings.load(path)
    assert again.get("workload_python") == "/opt/py"
    assert "future_key: 7" in path.read_text()


def test_bad_values_fall_back_and_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("telemetry_interval_ms: 5\njob_cancel_grace_s: yes\n")
    settings = Settings.load(path)
    assert settings.get("telemetry_interval_ms") == 500
    assert len(settings.problems) == 2


def test_broken_yaml_is_reported_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("a: [unclosed\n")
    settings = Settings.load(path)
    assert settings.problems and settings.get("last_tab") == ""


def test_every_setting_default_is_valid() -> None:
    for setting in SETTINGS:
        assert setting.coerce(setting.default) == setting.default
    with pytest.raises(KeyError):
        Settings().get("nope")


def test_write_atomic_keeps_mode_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "f.conf"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["f.conf"]


def test_crash_before_replace_leaves_old_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "f.conf"
    target.write_bytes(b"old")

    def boom(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(PanelError, match="No space left"):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.conf"]


def test_backups_are_kept_and_pruned(tmp_path: Path) -> None:
    target = tmp_path / "env.conf"
    backups = tmp_path / "backups"
    assert backup_file(target, backups) is None
    for i in range(5):
        target.write_bytes(f"v{i}".encode())
        backup_file(target, backups, keep=3)
    kept = sorted(backups.iterdir())
    assert [p.read_bytes() for p in kept] == [b"v2", b"v3", b"v4"]
