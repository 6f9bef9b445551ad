"""Linux stores on real files: byte-exact preservation, atomicity, refusals, undo."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.envvars import journal as env_journal
from rocmpanel.envvars.plan import EnvChange
from rocmpanel.envvars.store import EnvConflictError, make_stores, read_stores
from rocmpanel.envvars.stores.linux import EnvironmentDStore, ProfileStore
from rocmpanel.envvars.transaction import apply_plans, undo_last

EXISTING = st.one_of(st.none(), st.binary(max_size=300))


def _stores(home: Path, keep: int = 20) -> dict:
    stores = {"environment.d": EnvironmentDStore(home, keep), "profile": ProfileStore(home, keep)}
    return stores


def _apply(stores: dict, *changes: EnvChange) -> None:
    plans = [store.plan(store.read(), changes) for store in stores.values()]
    apply_plans(stores, plans)


def _put(path: Path, data: bytes | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is not None:
        path.write_bytes(data)


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(envd=EXISTING, profile=EXISTING, value=st.sampled_from(["10.3.0", "11.0.0", "9.0.10"]))
def test_existing_contents_survive_set_unset_undo_byte_for_byte(envd, profile, value):
    for data in (envd, profile):
        assume(data is None or (b"rocmpanel" not in data and b"HSA_OVERRIDE" not in data))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        stores = _stores(home)
        envd_path, profile_path = stores["environment.d"].path, stores["profile"].path
        _put(envd_path, envd)
        _put(profile_path, profile)
        _apply(stores, EnvChange("HSA_OVERRIDE_GFX_VERSION", value))
        for path, original in ((envd_path, envd), (profile_path, profile)):
            data = path.read_bytes()
            assert data.startswith(original or b"")
            store = stores["environment.d" if path == envd_path else "profile"]
            assert store.read().values["HSA_OVERRIDE_GFX_VERSION"] == value
        _apply(stores, EnvChange("HSA_OVERRIDE_GFX_VERSION", None))
        for path, original in ((envd_path, envd), (profile_path, profile)):
            data = _read(path) or b""
            assert data.startswith(original or b"")
            assert b"HSA_OVERRIDE" not in data
        undo_last(stores)  # back to "set"
        undo_last(stores)  # back to the very first bytes (or no file)
        assert _read(envd_path) == envd
        assert _read(profile_path) == profile


def test_crash_between_temp_file_and_replace_leaves_old_file(tmp_path: Path) -> None:
    """A real process dies inside os.replace: the old ~/.profile is intact."""
    home = tmp_path / "home"
    _put(home / ".profile", b"# mine\nexport KEEP=1\n")
    script = textwrap.dedent(
        f"""
        import os
        from pathlib import Path
        from rocmpanel.envvars.plan import EnvChange
        from rocmpanel.envvars.transaction import apply_plans
        from rocmpanel.envvars.stores.linux import ProfileStore
        store = ProfileStore(Path({str(home)!r}))
        plan = store.plan(store.read(), [EnvChange("HSA_ENABLE_SDMA", "0")])
        def crash(src, dst):
            if str(dst).endswith(".profile"):
                os._exit(9)
            return real(src, dst)
        real = os.replace
        os.replace = crash
        apply_plans({{"profile": store}}, [plan])
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=60, check=False)
    assert done.returncode == 9
    assert (home / ".profile").read_bytes() == b"# mine\nexport KEEP=1\n"
    leftovers = [p.name for p in home.iterdir() if p.name != ".profile"]
    assert all(name.startswith(".") and name.endswith(".tmp") for name in leftovers)


def test_exception_in_replace_leaves_old_file_and_no_temp(tmp_path, monkeypatch) -> None:
    stores = _stores(tmp_path)
    _put(stores["profile"].path, b"old\n")

    def boom(src, dst):
        raise OSError(errno.EIO, "Input/output error")

    plans = [s.plan(s.read(), [EnvChange("A", "1")]) for s in stores.values()]
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(PanelError, match="Input/output error"):
        apply_plans(stores, plans)
    monkeypatch.undo()
    assert stores["profile"].path.read_bytes() == b"old\n"
    assert not stores["environment.d"].path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".profile"]
    assert env_journal.peek() is None


def test_8kb_path_survives_apart_from_the_edit(tmp_path: Path) -> None:
    entries = [f"/opt/tool-{i:04d}/bin" for i in range(450)] + ["$PATH"]
    long_path = ":".join(entries)
    assert len(long_path) > 8192
    stores = _stores(tmp_path)
    _apply(stores, EnvChange("PATH", long_path))
    _apply(stores, EnvChange("PATH", "/opt/rocm/bin:" + long_path))
    for store in stores.values():
        value = store.read().values["PATH"]
        assert value.split(":") == ["/opt/rocm/bin", *entries]
    without = [e for e in entries if e != "/opt/tool-0200/bin"]
    _apply(stores, EnvChange("PATH", ":".join(without)))
    for store in stores.values():
        assert store.read().values["PATH"].split(":") == without
    undo_last(stores)
    undo_last(stores)
    assert all(store.read().values["PATH"] == long_path for store in stores.values())


@settings(max_examples=40, deadline=None)
@given(
    bad=st.text(max_size=12).filter(lambda v: v.count(".") != 2 or not v.replace(".", "").isdigit())
)
def test_invalid_values_never_reach_disk(bad: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        stores = _stores(Path(tmp))
        _put(stores["profile"].path, b"x\n")
        with pytest.raises(PanelError):
            _apply(stores, EnvChange("HSA_OVERRIDE_GFX_VERSION", bad))
        assert stores["profile"].path.read_bytes() == b"x\n"
        assert not stores["environment.d"].path.exists()


def test_read_only_file_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    stores = _stores(tmp_path)
    _put(stores["profile"].path, b"mine\n")
    stores["profile"].path.chmod(0o444)
    with pytest.raises(PanelError, match="read-only; nothing was changed"):
        _apply(stores, EnvChange("HSA_ENABLE_SDMA", "0"))
    assert stores["profile"].path.read_bytes() == b"mine\n"
    assert not stores["environment.d"].path.exists()
    assert env_journal.peek() is None


def test_permission_error_is_clear_and_nothing_changes(tmp_path, monkeypatch) -> None:
    stores = _stores(tmp_path)
    _put(stores["profile"].path, b"mine\n")
    plans = [s.plan(s.read(), [EnvChange("A", "1")]) for s in stores.values()]

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    with pytest.raises(PanelError, match="Permission denied"):
        apply_plans(stores, plans)
    monkeypatch.undo()
    assert stores["profile"].path.read_bytes() == b"mine\n"
    assert not stores["environment.d"].path.exists()


def test_full_disk_is_clear_and_nothing_changes(tmp_path, monkeypatch) -> None:
    stores = _stores(tmp_path)
    _put(stores["environment.d"].path, b"A=0\n")
    _put(stores["profile"].path, b"mine\n")
    plans = [s.plan(s.read(), [EnvChange("A", "1")]) for s in stores.values()]
    real_replace = os.replace

    def full(src, dst):
        if str(dst).endswith(".profile"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_replace(src, dst)

    # environment.d is written first and must be restored when ~/.profile fails.
    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(PanelError, match="No space left on device") as info:
        apply_plans(stores, plans)
    monkeypatch.undo()
    assert "restored; nothing changed" in info.value.message
    assert stores["environment.d"].path.read_bytes() == b"A=0\n"
    assert stores["profile"].path.read_bytes() == b"mine\n"
    assert env_journal.peek() is None


def test_changed_since_read_is_refused_with_a_diff(tmp_path: Path) -> None:
    stores = _stores(tmp_path)
    _put(stores["profile"].path, b"one\n")
    plans = [s.plan(s.read(), [EnvChange("A", "1")]) for s in stores.values()]
    stores["profile"].path.write_bytes(b"one\ntwo\n")
    with pytest.raises(EnvConflictError) as info:
        apply_plans(stores, plans)
    assert "+two" in info.value.diff
    assert stores["profile"].path.read_bytes() == b"one\ntwo\n"
    assert not stores["environment.d"].path.exists()


def test_undo_refuses_when_the_file_changed_after_apply(tmp_path: Path) -> None:
    stores = _stores(tmp_path)
    _apply(stores, EnvChange("A", "1"))
    with stores["profile"].path.open("ab") as handle:
        handle.write(b"# added by hand\n")
    with pytest.raises(EnvConflictError, match="changed after rocmpanel wrote it"):
        undo_last(stores)
    assert env_journal.peek() is not None
    assert stores["environment.d"].path.exists()


def test_backups_are_numbered_and_pruned_but_never_while_undo_needs_them(tmp_path: Path) -> None:
    stores = _stores(tmp_path, keep=2)
    _put(stores["profile"].path, b"# mine\n")
    for index in range(5):
        _apply(stores, EnvChange("A", str(index)))

    def profile_backups() -> list[str]:
        return sorted(p.name for p in paths.backups_dir().iterdir() if ".profile." in p.name)

    names = profile_backups()
    # Every apply's backup is referenced by the journal: none is pruned yet.
    assert [name.rsplit(".", 2)[-2] for name in names] == [f"{n:08d}" for n in range(1, 6)]
    for _ in range(5):
        undo_last(stores)
    assert stores["profile"].path.read_bytes() == b"# mine\n"
    numbered = [names[0].replace("00000001", f"{n:08d}") for n in range(1, 12)]
    # The last undo still needed backup 1 when it made its own copy (10); 2-8 are gone.
    assert profile_backups() == [numbered[0], numbered[8], numbered[9]]
    _apply(stores, EnvChange("A", "x"))  # nothing references 1 or 9 any more
    assert profile_backups() == [numbered[9], numbered[10]]


def test_broken_markers_show_as_a_problem(tmp_path: Path) -> None:
    stores = _stores(tmp_path)
    _put(stores["profile"].path, b"# >>> rocmpanel environment >>>\nexport A=1\n")
    snapshot = stores["profile"].read()
    assert "markers are broken" in snapshot.problem
    with pytest.raises(PanelError, match="markers are broken"):
        stores["profile"].plan(snapshot, [EnvChange("A", "2")])


def test_notes_warn_about_bash_profile_and_later_files(tmp_path: Path) -> None:
    stores = _stores(tmp_path)
    _apply(stores, EnvChange("ROCM_PATH", "/opt/rocm"))
    (tmp_path / ".bash_profile").write_text("true\n")
    (stores["environment.d"].path.parent / "90-other.conf").write_text("ROCM_PATH=/x\n")
    assert "bash_profile" in stores["profile"].notes()[0]
    assert "90-other.conf" in stores["environment.d"].notes()[0]


def test_factory_gives_linux_and_session_stores(tmp_path: Path) -> None:
    stores = make_stores("linux", home=tmp_path)
    assert list(stores) == ["environment.d", "profile", "session"]
    assert stores["environment.d"].target().endswith(".config/environment.d/60-rocmpanel.conf")
    assert not stores["session"].persistent
    kept = make_stores("linux", home=tmp_path, keep=3)  # the GUI passes the setting it holds
    assert {store.keep for store in kept.values()} == {3}


def test_read_stores_keeps_going_past_an_unreadable_store(tmp_path: Path) -> None:
    stores = _stores(tmp_path)
    _put(stores["environment.d"].path, b"MIOPEN_FIND_MODE=FAST\n")
    stores["profile"].path.mkdir(parents=True)  # reading it fails with EISDIR
    read = read_stores(stores)
    assert read.snapshots["environment.d"].values == {"MIOPEN_FIND_MODE": "FAST"}
    assert read.snapshots["profile"].problem.startswith("Could not read")
    assert [error.message for error in read.errors] == [read.snapshots["profile"].problem]


def test_applies_from_two_threads_do_not_interleave(tmp_path: Path) -> None:
    """The GUI applies on a pool thread: a second apply waits for the first one's whole
    step (writes, journal, broadcast), then finds the file changed and refuses."""
    import threading

    stores = _stores(tmp_path)
    in_broadcast, release = threading.Event(), threading.Event()

    def slow_broadcast() -> None:
        in_broadcast.set()
        release.wait(5)

    stores["profile"].after_change = slow_broadcast
    first = [s.plan(s.read(), [EnvChange("A", "1")]) for s in stores.values()]
    second = [s.plan(s.read(), [EnvChange("B", "2")]) for s in stores.values()]
    outcome: list[BaseException | None] = []

    def apply_second() -> None:
        try:
            apply_plans(stores, second)
            outcome.append(None)
        except PanelError as exc:
            outcome.append(exc)

    one = threading.Thread(target=apply_plans, args=(stores, first))
    one.start()
    try:
        assert in_broadcast.wait(5)
        two = threading.Thread(target=apply_second)
        two.start()
        two.join(0.3)
        assert outcome == []  # still waiting for the first apply's broadcast
    finally:
        release.set()
    one.join(5)
    two.join(5)
    assert len(outcome) == 1 and isinstance(outcome[0], EnvConflictError)
    assert b"B=" not in stores["profile"].path.read_bytes()


def test_unsaveable_undo_record_changes_nothing(tmp_path, monkeypatch) -> None:
    stores = _stores(tmp_path)
    _put(stores["profile"].path, b"mine\n")

    def broken(entries):
        raise PanelError("Could not write env_undo.json: No space left on device.")

    monkeypatch.setattr(env_journal, "save", broken)
    with pytest.raises(PanelError, match=r"could not be saved .* nothing was changed"):
        _apply(stores, EnvChange("A", "1"))
    assert stores["profile"].path.read_bytes() == b"mine\n"
    assert not stores["environment.d"].path.exists()


def test_without_sh_the_check_is_skipped_with_a_note(tmp_path, monkeypatch, caplog) -> None:
    import logging

    stores = _stores(tmp_path)
    _put(stores["profile"].path, b"mine\n")
    monkeypatch.setattr("rocmpanel.envvars.store.shutil.which", lambda name: None)
    with caplog.at_level(logging.INFO, logger="rocmpanel.envvars.store"):
        _apply(stores, EnvChange("A", "1"))
    assert f"No sh found: {stores['profile'].path} (rocmpanel block) was not checked" in caplog.text
    assert stores["profile"].read().values == {"A": "1"}


def test_a_profile_that_sh_refuses_is_not_written(tmp_path, monkeypatch) -> None:
    from rocmpanel.envvars import store as store_module

    stores = _stores(tmp_path)
    _put(stores["profile"].path, b"mine\n")
    seen: list[bytes] = []

    def refuse(text: bytes, label: str) -> str:
        seen.append(text)
        return f"{label}: 3: Syntax error: Unterminated quoted string"

    monkeypatch.setattr("rocmpanel.envvars.stores.linux.shell_syntax_problem", refuse)
    with pytest.raises(PanelError) as info:
        _apply(stores, EnvChange("A", "1"))
    assert info.value.message.startswith(
        f"The new {stores['profile'].path} would not pass `sh -n` ({stores['profile'].path} "
        "(rocmpanel block): 3: Syntax error: Unterminated quoted string), so nothing was written."
    )
    assert seen and seen[0].startswith(b"# >>> rocmpanel environment >>>\n")
    assert stores["profile"].path.read_bytes() == b"mine\n"
    assert not stores["environment.d"].path.exists() and env_journal.load() == []
    assert store_module.shell_syntax_problem(b"export A='1'\n", "x") is None
