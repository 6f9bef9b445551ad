"""The preset store: user presets one file each, atomic and backed-up writes, unreadable
files reported and never touched, and two processes saving at once."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.jobs.presets import (
    Item,
    Preset,
    PresetError,
    PresetStore,
    builtin_presets,
    dump_preset,
    parse_preset,
    read_preset_file,
)

BUILTIN_IDS = [p.id for p in builtin_presets()]


def _preset(ident: str = "mine", name: str = "Mine", level: str = "2") -> Preset:
    return Preset(
        ident,
        name,
        "My settings.",
        ("rdna3",),
        env=(Item("env", "AMD_LOG_LEVEL", level, "Logs.", "hip_env"),),
        torch=(Item("torch", "cpu_threads", 4),),
    )


@pytest.fixture
def store() -> PresetStore:
    return PresetStore()


def _backups() -> list[Path]:
    folder = paths.backups_dir()
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_the_default_folder_is_in_the_config_dir(store: PresetStore) -> None:
    assert store.root == paths.config_dir() / "presets"
    assert [p.id for p in store.all()] == BUILTIN_IDS
    assert store.problems == []


def test_save_writes_one_file_that_reads_back(store: PresetStore) -> None:
    saved = store.save(_preset())
    path = store.root / "mine.yaml"
    assert saved.path == path and saved.builtin is False
    assert path.read_text(encoding="utf-8") == dump_preset(_preset())
    assert read_preset_file(path) == dataclasses.replace(_preset(), path=path)
    assert [p.id for p in store.all()] == [*BUILTIN_IDS, "mine"]
    assert store.get("MINE") == saved
    assert _backups() == []  # nothing existed: nothing to back up


def test_user_presets_are_listed_by_name(store: PresetStore) -> None:
    store.save(_preset("zeta", "alpha"))
    store.save(_preset("alpha", "Beta"))
    assert [p.id for p in store.all()][len(BUILTIN_IDS) :] == ["zeta", "alpha"]


def test_an_update_is_backed_up_first(store: PresetStore) -> None:
    store.save(_preset(level="2"))
    store.save(_preset(level="4"))
    assert store.get("mine").env[0].value == "4"
    (backup,) = _backups()
    assert backup.read_text(encoding="utf-8") == dump_preset(_preset(level="2"))


def test_a_rename_writes_the_new_file_then_removes_the_old(store: PresetStore) -> None:
    store.save(_preset())
    renamed = store.save(_preset("ours", "Ours"), replace="mine")
    assert renamed.path == store.root / "ours.yaml"
    assert sorted(p.name for p in store.root.glob("*.yaml")) == ["ours.yaml"]
    assert [b.read_text(encoding="utf-8") for b in _backups()] == [dump_preset(_preset())]


def test_save_refuses_built_ins_and_clashes(store: PresetStore) -> None:
    with pytest.raises(PanelError) as caught:
        store.save(_preset("throughput", "Mine"))
    assert caught.value.message == (
        "Preset not saved: 'throughput' is a built-in preset and cannot be changed; duplicate "
        "it and edit the copy."
    )
    with pytest.raises(PanelError) as caught:
        store.save(_preset("mine", "THROUGHPUT"))
    assert caught.value.message == (
        "Preset not saved: the name 'THROUGHPUT' is a built-in preset's; choose another name."
    )
    store.save(_preset())
    with pytest.raises(PanelError) as caught:
        store.save(_preset("other", "mine"))
    assert caught.value.message == (
        "Preset not saved: the name 'mine' is taken by the preset 'mine'; choose another name."
    )
    store.save(_preset("other", "Other"))
    with pytest.raises(PanelError) as caught:
        store.save(_preset("mine", "Renamed"), replace="other")
    assert caught.value.message == (
        "Preset not saved: the id 'mine' is taken by 'Mine'; choose another id."
    )
    with pytest.raises(PanelError) as caught:
        store.save(_preset("new", "New"), replace="ghost")
    assert caught.value.message == "Preset not saved: there is no user preset 'ghost' to rename."
    assert sorted(p.name for p in store.root.glob("*.yaml")) == ["mine.yaml", "other.yaml"]


def test_save_refuses_a_bad_value_built_in_code(store: PresetStore) -> None:
    bad = dataclasses.replace(_preset(), env=(Item("env", "HIP_VISIBLE_DEVICES", ""),))
    with pytest.raises(PanelError) as caught:
        store.save(bad)
    assert caught.value.message == (
        "Preset not saved: env.HIP_VISIBLE_DEVICES.value: set but empty, it hides every GPU; "
        "leave the variable out instead."
    )
    assert not store.root.exists() or list(store.root.iterdir()) == []


# ---- a damaged file is reported and never touched ----------------------------------------------


def _damaged(store: PresetStore, name: str = "broken.yaml", data: bytes = b"id: [x\n") -> Path:
    store.root.mkdir(parents=True, exist_ok=True)
    path = store.root / name
    path.write_bytes(data)
    return path


def test_a_damaged_file_is_listed_and_left_as_it_is(store: PresetStore) -> None:
    broken = _damaged(store)
    store.save(_preset())
    store.save(_preset("other", "Other"))
    store.delete("other")
    assert [p.id for p in store.all()] == [*BUILTIN_IDS, "mine"]
    assert [(p.path, p.message) for p in store.problems] == [
        (
            broken,
            f"{broken}, line 2: file: not valid YAML: expected ',' or ']', but got '<stream end>'",
        )
    ]
    assert broken.read_bytes() == b"id: [x\n"


def test_save_never_overwrites_an_unreadable_file_of_that_id(store: PresetStore) -> None:
    broken = _damaged(store, "mine.yaml", b"\xff\xfe not text")
    with pytest.raises(PanelError) as caught:
        store.save(_preset())
    assert caught.value.message == (
        f"Preset not saved: {broken} exists but cannot be read, and rocmpanel never overwrites "
        "such a file; fix or move it, or choose another id."
    )
    assert broken.read_bytes() == b"\xff\xfe not text"
    assert (
        store.problems[0].message == f"{broken}, line 1: file: is not UTF-8 text; save it as UTF-8"
    )


def test_files_the_store_does_not_read(store: PresetStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(dump_preset(_preset("linked", "Linked")), encoding="utf-8")
    store.root.mkdir(parents=True)
    (store.root / "linked.yaml").symlink_to(outside)
    (store.root / "folder.yaml").mkdir()
    (store.root / "wrong.yaml").write_text(dump_preset(_preset("right", "Right")), "utf-8")
    (store.root / "fast.yaml").write_text(dump_preset(_preset("fast", "Throughput")), "utf-8")
    (store.root / "big.yaml").write_bytes(b"#" * (4 * 1024 * 1024 + 1))
    (store.root / "notes.txt").write_text("not a preset", "utf-8")
    if hasattr(os, "mkfifo"):
        os.mkfifo(store.root / "pipe.yaml")
    assert [p.id for p in store.all()] == BUILTIN_IDS
    root = store.root
    expected = {
        "big.yaml": f"{root / 'big.yaml'}: file: is larger than 4 MiB",
        "fast.yaml": f"{root / 'fast.yaml'}: the name 'Throughput' is taken by 'throughput'",
        "folder.yaml": f"{root / 'folder.yaml'}: file: is not a regular file; it is not read",
        "linked.yaml": f"{root / 'linked.yaml'}: file: is a symbolic link; presets are read "
        "from regular files only",
        "wrong.yaml": f"{root / 'wrong.yaml'}: its id 'right' does not match the file name; "
        "rename the file to right.yaml",
    }
    if hasattr(os, "mkfifo"):
        expected["pipe.yaml"] = f"{root / 'pipe.yaml'}: file: is not a regular file; it is not read"
    assert {p.path.name: p.message for p in store.problems} == expected


def test_import_of_a_file_with_a_syntax_error_names_it(store: PresetStore, tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text("id: a\nname: A\ntorch:\n  memory_fraction: 2\n", "utf-8")
    with pytest.raises(PresetError) as caught:
        store.import_file(path)
    assert caught.value.message == (
        f"{path}, line 4: torch.memory_fraction: must be above 0 and at most 1 (a share of GPU "
        "memory); got 2.0"
    )


# ---- delete, duplicate, import, export ------------------------------------------------------


def test_delete_backs_up_and_refuses_built_ins(store: PresetStore) -> None:
    store.save(_preset())
    store.delete("Mine")
    assert list(store.root.glob("*.yaml")) == []
    assert [b.read_text(encoding="utf-8") for b in _backups()] == [dump_preset(_preset())]
    with pytest.raises(PanelError) as caught:
        store.delete("debugging")
    assert caught.value.message == "'Debugging' is a built-in preset and cannot be deleted."
    with pytest.raises(PanelError) as caught:
        store.delete("mine")
    assert caught.value.message.startswith("There is no preset 'mine'. Known presets: ")


def test_duplicate_makes_a_free_id_and_name(store: PresetStore) -> None:
    first = store.duplicate("rdna3-consumer")
    assert (first.id, first.name, first.builtin) == (
        "rdna3-consumer-copy",
        "RDNA3 consumer (copy)",
        False,
    )
    assert first.items() == next(p for p in builtin_presets() if p.id == "rdna3-consumer").items()
    second = store.duplicate("rdna3-consumer")
    assert (second.id, second.name) == ("rdna3-consumer-copy-2", "RDNA3 consumer (copy) (2)")
    named = store.duplicate("rdna3-consumer-copy", "For games")
    assert (named.id, named.name) == ("for-games", "For games")


def test_import_gives_a_clashing_preset_a_new_id_and_name(
    store: PresetStore, tmp_path: Path
) -> None:
    store.save(_preset())
    path = tmp_path / "shared.yaml"
    path.write_text(dump_preset(_preset(level="5")), "utf-8")
    imported = store.import_file(path)
    assert (imported.id, imported.name, imported.env[0].value) == ("mine-2", "Mine (2)", "5")
    assert path.read_text("utf-8") == dump_preset(_preset(level="5"))  # the source is untouched
    fresh = tmp_path / "fresh.yaml"
    fresh.write_text(dump_preset(_preset("fresh", "Fresh")), "utf-8")
    assert store.import_file(fresh).path == store.root / "fresh.yaml"


def test_export_writes_any_preset_and_backs_up_what_it_replaces(
    store: PresetStore, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "cdna3.yaml"
    store.export("cdna3", target)
    cdna3 = next(p for p in builtin_presets() if p.id == "cdna3")
    assert parse_preset(target.read_text("utf-8"), "x") == dataclasses.replace(cdna3, builtin=False)
    store.save(_preset())
    store.export("mine", target)
    assert target.read_text("utf-8") == dump_preset(_preset())
    assert [b.read_text("utf-8") for b in _backups()] == [dump_preset(cdna3)]


# ---- two processes ---------------------------------------------------------------------------

_SAVER = """
import sys
from rocmpanel.jobs.presets import Item, Preset, PresetStore
ident = sys.argv[1]
store = PresetStore()
for level in "012345":
    store.save(Preset(ident, ident.upper(), env=(Item("env", "AMD_LOG_LEVEL", level),)))
"""


def test_two_processes_saving_at_once_both_land(store: PresetStore) -> None:
    env = {**os.environ}
    runs = [
        subprocess.Popen([sys.executable, "-c", _SAVER, ident], env=env)
        for ident in ("left", "right")
    ]
    assert [run.wait(timeout=60) for run in runs] == [0, 0]
    users = store.all()[len(BUILTIN_IDS) :]
    assert [(p.id, p.env[0].value) for p in users] == [("left", "5"), ("right", "5")]
    assert store.problems == []
    assert [p.name for p in store.root.iterdir() if p.name.endswith(".tmp")] == []
