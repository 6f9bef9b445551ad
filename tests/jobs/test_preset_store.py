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
from rocmpanel.jobs import preset_store
from rocmpanel.jobs.preset_store import slug
from rocmpanel.jobs.presets import (
    Item,
    Preset,
    PresetError,
    PresetStore,
    Problem,
    builtin_presets,
    dump_preset,
    parse_preset,
    read_preset_file,
    resolve,
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
    # Each message names its file once, first: a caller prints the message alone.
    for problem in store.problems:
        assert problem.message.startswith(str(problem.path))
        assert problem.message.count(str(problem.path)) == 1


DEEP = "nests too deeply to be a preset (more than 32 levels of lists and mappings)"


def test_a_deeply_nested_file_is_a_problem_and_the_rest_still_list(store: PresetStore) -> None:
    """One 1 KB file of brackets must not take the built-ins and the other presets with it."""
    store.save(_preset())
    head = "id: deep\nname: Deep\ndescription: "
    five = _damaged(store, "deep.yaml", (head + "[" * 500 + "]" * 500 + "\n").encode())
    open_ = _damaged(store, "open.yaml", (head + "[" * 100_000 + "\n").encode())
    assert [p.id for p in store.all()] == [*BUILTIN_IDS, "mine"]
    assert [(p.path, p.message) for p in store.problems] == [
        (five, f"{five}, line 3: file: {DEEP}"),
        (open_, f"{open_}, line 3: file: {DEEP}"),
    ]
    with pytest.raises(PresetError) as caught:
        read_preset_file(open_)
    assert (caught.value.line, caught.value.field, caught.value.problem) == (3, "file", DEEP)
    assert store.get("mine").name == "Mine"


def test_a_non_utf8_byte_is_reported_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"id: latin\nname: Latin\ndescription: caf\xe9\n")
    with pytest.raises(PresetError) as caught:
        read_preset_file(path)
    assert caught.value.message == f"{path}, line 3: file: is not UTF-8 text; save it as UTF-8"


def test_names_that_read_the_same_clash(store: PresetStore) -> None:
    store.save(_preset())
    with pytest.raises(PanelError) as caught:
        store.save(_preset("wide", "Ｍｉｎｅ"))
    assert caught.value.message == (
        "Preset not saved: the name 'Ｍｉｎｅ' is taken by the preset 'mine'; choose another name."
    )
    with pytest.raises(PanelError) as caught:
        store.save(_preset("debug-2", "ＤＥＢＵＧＧＩＮＧ"))
    assert caught.value.message == (
        "Preset not saved: the name 'ＤＥＢＵＧＧＩＮＧ' is a built-in preset's; "
        "choose another name."
    )
    wide = _damaged(store, "wide.yaml", dump_preset(_preset("wide", "Ｍｉｎｅ")).encode())
    assert [p.id for p in store.all()] == [*BUILTIN_IDS, "mine"]
    assert [(p.path, p.message) for p in store.problems] == [
        (wide, f"{wide}: the name 'Ｍｉｎｅ' is taken by 'mine'")
    ]
    assert store.get("ｍｉｎｅ").id == "mine"  # a name lookup compares the same way


def test_a_file_name_with_control_characters_is_shown_escaped(store: PresetStore) -> None:
    odd = _damaged(store, "\x1b]0;x\x07.yaml")
    store.all()
    shown = f"{store.root}/\\x1b]0;x\\x07.yaml"
    assert [(p.path, p.message) for p in store.problems] == [
        (odd, f"{shown}, line 2: file: not valid YAML: expected ',' or ']', but got '<stream end>'")
    ]


def test_a_name_that_slugs_to_a_device_name_gets_another_id(store: PresetStore) -> None:
    assert [slug(n) for n in ("CON", "Nul!", "com1", "Console")] == [
        "con-preset",
        "nul-preset",
        "com1-preset",
        "console",
    ]
    assert store.duplicate("safe-defaults", "CON").id == "con-preset"


# ---- looking up one preset by id reads only its file -----------------------------------------


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files the store parses, in order."""
    seen: list[str] = []
    real = preset_store.read_preset_file

    def counting(path: Path, *, builtin: bool = False) -> Preset:
        seen.append(path.name)
        return real(path, builtin=builtin)

    monkeypatch.setattr(preset_store, "read_preset_file", counting)
    return seen


def _many(store: PresetStore, count: int = 200) -> None:
    store.root.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        ident = f"other-{number:03d}"
        text = dump_preset(_preset(ident, f"Other {number}"))
        (store.root / f"{ident}.yaml").write_text(text, "utf-8")


def test_get_by_id_reads_only_that_file(store: PresetStore, reads: list[str]) -> None:
    _many(store)
    store.save(_preset())
    reads.clear()
    assert store.get("mine") == dataclasses.replace(_preset(), path=store.root / "mine.yaml")
    assert reads == ["mine.yaml"] and store.problems == []
    assert store.get("safe-defaults").builtin is True
    assert reads == ["mine.yaml"]  # a built-in reads no file
    assert resolve(None, "mine", store).id == "mine"  # a job start: one file
    assert resolve("other-007", "", store).name == "Other 7"
    assert reads == ["mine.yaml", "mine.yaml", "other-007.yaml"]


def test_get_by_name_or_unknown_id_reads_them_all(store: PresetStore, reads: list[str]) -> None:
    _many(store)
    store.save(_preset())
    reads.clear()
    assert store.get("MINE").id == "mine"
    assert len(reads) == 201
    reads.clear()
    with pytest.raises(PanelError) as caught:
        store.get("gone")
    assert caught.value.message.startswith("There is no preset 'gone'. Known presets: ")
    assert len(reads) == 201


def test_get_by_id_of_a_damaged_file_says_why(store: PresetStore, reads: list[str]) -> None:
    _many(store)
    broken = _damaged(store, "mine.yaml", b"id: mine\nname: Mine\narchs: [rdna9]\n")
    reads.clear()
    problem = (
        f"{broken}, line 3: archs[0]: unknown 'rdna9'; use any, rdna2, rdna3, rdna4, cdna2, "
        "cdna3, cdna4"
    )
    with pytest.raises(PanelError) as caught:
        store.get("mine")
    assert caught.value.message == f"The preset 'mine' cannot be used: {problem}"
    assert store.problems == [Problem(broken, problem)]
    assert reads == ["mine.yaml"]
    assert broken.read_bytes() == b"id: mine\nname: Mine\narchs: [rdna9]\n"
    assert resolve(None, "mine", store) is None  # a job runs without it (and it is logged)
    wrong = _damaged(store, "wrong.yaml", dump_preset(_preset("right", "Right")).encode())
    with pytest.raises(PanelError) as caught:
        store.get("wrong")
    assert caught.value.message == (
        f"The preset 'wrong' cannot be used: {wrong}: its id 'right' does not match the file "
        "name; rename the file to right.yaml"
    )


@pytest.mark.parametrize("depth", [0, 2])
def test_a_file_where_the_presets_folder_should_be_is_reported(tmp_path: Path, depth: int) -> None:
    """A file in the way (the folder itself, or a parent such as a home that is a file):
    the built-ins still list, and the problem says which file and what to do."""
    blocker = tmp_path / "home"
    blocker.write_bytes(b"x")
    folder = blocker / "config" / "presets" if depth else blocker
    store = PresetStore(folder)
    assert [p.id for p in store.all()] == BUILTIN_IDS
    assert [(p.path, p.message) for p in store.problems] == [
        (
            blocker,
            f"{blocker} is a file, not a folder, so presets in {folder} cannot be read or "
            "saved; move that file aside and try again",
        )
    ]
    assert blocker.read_bytes() == b"x"
    blocker.unlink()
    assert [p.id for p in store.all()] == BUILTIN_IDS and store.problems == []


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


def test_delete_looks_the_preset_up_under_the_lock(
    store: PresetStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextlib import contextmanager

    store.save(_preset())
    events: list[str] = []
    get = store.get

    @contextmanager
    def lock(refused: str):  # type: ignore[no-untyped-def]
        events.append(f"lock: {refused}")
        try:
            yield
        finally:
            events.append("unlock")

    def looked_up(ident: str) -> Preset:
        events.append(f"get {ident}")
        return get(ident)

    monkeypatch.setattr(store, "_lock", lock)
    monkeypatch.setattr(store, "get", looked_up)
    store.delete("mine")
    assert events == ["lock: Preset not deleted", "get mine", "unlock"]
    assert list(store.root.glob("*.yaml")) == []
    events.clear()
    with pytest.raises(PanelError) as caught:
        store.delete("debugging")
    assert caught.value.message == "'Debugging' is a built-in preset and cannot be deleted."
    assert events == ["lock: Preset not deleted", "get debugging", "unlock"]


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
