from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.atomic import backup_file, write_atomic
from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import ChatSettings, Settings, declared, option_of


def test_settings_live_under_rocmpanel_home(_private_home: Path) -> None:
    assert paths.settings_file().is_relative_to(_private_home)
    assert paths.data_dir().is_relative_to(_private_home)


def test_defaults_roundtrip_and_unknown_keys_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text("future_key: 7\ntelemetry_interval_ms: 250\n")
    settings = Settings.load(path)
    assert settings.monitor.interval_ms == 250
    assert settings.general.workload_python == ""
    settings.general.workload_python = "/opt/py"
    settings.save()
    again = Settings.load(path)
    assert again.general.workload_python == "/opt/py"
    assert "future_key: 7" in path.read_text()


def test_bad_values_fall_back_and_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("telemetry_interval_ms: 5\njob_cancel_grace_s: yes\n")
    settings = Settings.load(path)
    assert settings.monitor.interval_ms == 500
    assert len(settings.problems) == 2


def test_binary_or_fifo_settings_are_reported_not_fatal(tmp_path: Path) -> None:
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(bytes(range(256)) * 4)
    assert Settings.load(binary).problems
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    settings = Settings.load(fifo)  # would block forever reading a FIFO with no writer
    assert settings.problems and settings.monitor.interval_ms == 500


def test_broken_yaml_is_reported_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("a: [unclosed\n")
    settings = Settings.load(path)
    assert settings.problems and settings.window.last_tab == ""


def test_every_setting_default_is_valid_and_keys_are_unique() -> None:
    items = list(declared())
    settings = Settings()
    for item in items:
        settings.assign(item, item.default)  # a default outside its own range raises here
        assert settings.value(item) == item.default
    assert len({i.option.key for i in items}) == len(items)


def test_values_are_typed_and_checked_against_their_declaration() -> None:
    settings = Settings()
    assert isinstance(settings.chat.temperature, float)
    settings.chat.top_k = 40.0  # a whole float from YAML becomes an int
    assert settings.chat.top_k == 40 and isinstance(settings.chat.top_k, int)
    with pytest.raises(ValueError, match="at most 5"):
        settings.chat.temperature = option_of(ChatSettings, "temperature").maximum + 1  # type: ignore[operator]
    with pytest.raises(ValueError, match="true or false"):
        settings.monitor.alerts_enabled = "yes"  # type: ignore[assignment]
    with pytest.raises(ValueError, match="one of"):
        settings.chat.device = "tpu"  # type: ignore[assignment]


def test_enums_round_trip_through_the_file_and_old_spellings_load(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("chat_device: cuda\nchat_precision: ''\n")
    settings = Settings.load(path)
    assert settings.chat.device is Device.GPU and settings.chat.precision is None
    settings.chat.precision = Precision.NF4
    settings.save()
    text = path.read_text()
    assert "chat_precision: nf4" in text and "chat_device: gpu" in text
    assert Settings.load(path).chat.precision is Precision.NF4


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
    assert backup_file(target, backups, keep=20) is None
    for i in range(5):
        target.write_bytes(f"v{i}".encode())
        backup_file(target, backups, keep=3)
    kept = sorted(backups.iterdir())
    assert [p.read_bytes() for p in kept] == [b"v2", b"v3", b"v4"]


def test_defaults_are_not_checked_again_for_every_new_section(monkeypatch) -> None:
    from rocmpanel.base import settings as module

    Settings()  # the declarations are checked once, here at the latest
    checked: list[object] = []
    real = module._coerce
    monkeypatch.setattr(module, "_coerce", lambda o, h, v: checked.append(v) or real(o, h, v))
    settings = Settings()
    assert checked == []
    settings.chat.top_k = 40.0
    assert checked == [40.0]
