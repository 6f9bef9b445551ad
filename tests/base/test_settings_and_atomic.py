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


def test_a_settings_object_that_is_not_writable_saves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    settings = Settings.load(path)
    settings.writable = False
    settings.monitor.interval_ms = 1000
    assert settings.save() == []
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_a_save_writes_only_what_changed_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("chat_device: cuda\nzz_unknown: [1, {a: b}]\ntelemetry_interval_ms: 1\n")
    settings = Settings.load(path, tell=False)
    assert settings.changed() == {}
    settings.chat.top_k = 7
    assert settings.changed() == {"chat_top_k": 7}
    settings.save()
    assert settings.changed() == {}
    # The old spelling of a value is written in the current one; a value that does not
    # fit is kept as the user wrote it; unknown keys stay.
    assert path.read_text() == (
        "chat_device: gpu\nchat_top_k: 7\ntelemetry_interval_ms: 1\nzz_unknown:\n- 1\n- a: b\n"
    )


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


def test_write_atomic_writes_through_a_symlink(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "profile"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link = tmp_path / ".profile"
    link.symlink_to(target)
    assert write_atomic(link, b"new") == target
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == b"new" and target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == [".profile", "dotfiles"]
    assert [p.name for p in dotfiles.iterdir()] == ["profile"]


def test_temp_files_name_their_writer_and_only_dead_writers_are_cleaned(tmp_path: Path) -> None:
    import subprocess
    import sys

    from rocmpanel.base.atomic import remove_stale_temp_files, temp_prefix

    assert temp_prefix(".profile") == f"..profile.rocmpanel-{os.getpid()}."
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(dead.stdout)
    names = {
        "dead": f"..profile.rocmpanel-{dead_pid}.ab12_x.tmp",
        "alive": f"..profile.rocmpanel-{os.getpid()}.cd34.tmp",
        "other_file": f".notes.rocmpanel-{dead_pid}.ef56.tmp",
        "not_ours": "..profile.k2j3h4.tmp",
    }
    for name in names.values():
        (tmp_path / name).write_bytes(b"x")
    removed = remove_stale_temp_files(tmp_path, ".profile")
    assert [p.name for p in removed] == [names["dead"]]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([names["alive"], names["other_file"], names["not_ours"]])
    assert [p.name for p in remove_stale_temp_files(tmp_path)] == [names["other_file"]]


def test_backups_are_numbered_after_the_highest_and_protected_ones_stay(tmp_path: Path) -> None:
    from rocmpanel.base.atomic import backup_bytes

    backups = tmp_path / "backups"
    backups.mkdir()
    target = tmp_path / "env.conf"
    slug = str(target).strip("/").replace("/", "_")
    # Clock-named backups of an older rocmpanel count as older than every numbered one.
    (backups / f"{slug}.20991231-235959-999999999.bak").write_bytes(b"clock")
    (backups / f"{slug}.00000007.bak").write_bytes(b"seven")
    first = backup_bytes(target, b"a", backups, keep=2)
    assert first.name == f"{slug}.00000008.bak" and first.read_bytes() == b"a"
    assert not (backups / f"{slug}.20991231-235959-999999999.bak").exists()
    second = backup_bytes(target, b"b", backups, keep=1, protect=[str(first)])
    third = backup_bytes(target, b"c", backups, keep=1, protect=[first])
    assert sorted(p.name for p in backups.iterdir()) == [first.name, third.name]
    assert not second.exists() and third.name == f"{slug}.00000010.bak"


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
