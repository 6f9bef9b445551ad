"""The serve API key: made once, stored 0600, unusable files kept aside, one key for two
processes starting at once."""

from __future__ import annotations

import multiprocessing
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.base import api_key, paths
from rocmpanel.base.api_key import key_file, key_problem, load_or_create, mask, regenerate
from rocmpanel.base.errors import PanelError

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
KEY_RE = re.compile(r"^rp-[A-Za-z0-9_-]{43}$")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _asides(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bad-*"))


def test_key_file_is_in_the_config_folder(_private_home: Path) -> None:
    assert key_file() == _private_home / "config" / "serve" / "api-key"
    assert key_file() == paths.config_dir() / "serve" / "api-key"


@posix_only
def test_first_use_makes_a_private_key_and_later_uses_read_it() -> None:
    first = load_or_create()
    assert KEY_RE.match(first.value)
    assert first.created is True
    assert first.note == ""
    assert first.path == key_file()
    assert key_file().read_text() == first.value + "\n"
    assert _mode(key_file()) == 0o600
    assert _mode(key_file().parent) == 0o700
    again = load_or_create()
    assert again == api_key.ApiKey(first.value, key_file(), created=False, note="")


def test_two_new_keys_differ() -> None:
    assert api_key.new_key() != api_key.new_key()


def test_a_key_written_by_hand_is_read_stripped() -> None:
    key_file().parent.mkdir(parents=True)
    key_file().write_text("  my-own-key-0123456789  \n\n")
    os.chmod(key_file(), 0o600)
    key = load_or_create()
    assert (key.value, key.created, key.note) == ("my-own-key-0123456789", False, "")
    assert key_file().read_text() == "  my-own-key-0123456789  \n\n"  # not rewritten
    key_file().write_bytes(b"\xef\xbb\xbfmy-own-key-0123456789\r\n")  # Notepad's UTF-8
    assert load_or_create().value == "my-own-key-0123456789"


@posix_only
@pytest.mark.parametrize("wide", [0o644, 0o640, 0o604, 0o660])
def test_permissions_wider_than_0600_are_fixed_with_a_note(wide: int) -> None:
    first = load_or_create()
    os.chmod(key_file(), wide)
    key = load_or_create()
    assert key.value == first.value
    assert _mode(key_file()) == 0o600
    assert key.note == (
        f"The API key file {key_file()} had permissions {wide:04o} (other users could read "
        "it); they were set to 0600. If someone else may have read the key, make a new one."
    )


@posix_only
def test_a_narrower_mode_is_left_as_it_is() -> None:
    load_or_create()
    os.chmod(key_file(), 0o400)
    assert load_or_create().note == ""
    assert _mode(key_file()) == 0o400


@posix_only
def test_a_folder_open_to_others_is_made_private() -> None:
    key_file().parent.mkdir(parents=True, mode=0o755)
    os.chmod(key_file().parent, 0o755)
    load_or_create()
    assert _mode(key_file().parent) == 0o700


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "it is empty"),
        (b"  \n", "it is empty"),
        (b"\xff\xfe-not-utf8-0123456789", "it is not UTF-8 text"),
        (b"short-key", "it has 9 characters; a key needs at least 16"),
        (b"x" * 513, "it has 513 characters; a key has at most 512"),
        (
            b"two words in a key file",
            "it holds spaces or characters other than printable ASCII",
        ),
        (
            "caf\u00e9-0123456789abcdef".encode(),
            "it holds spaces or characters other than printable ASCII",
        ),
        (b"a" * 5000, "{path} is larger than 4 KiB"),
    ],
)
def test_an_unusable_file_is_kept_aside_and_a_new_key_made(content: bytes, why: str) -> None:
    path = key_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    key = load_or_create()
    (kept,) = _asides(path)
    assert kept.read_bytes() == content  # never overwritten
    assert KEY_RE.match(key.value)
    assert key.created is True
    assert key.note == (
        f"The API key file {path} could not be used ({why.format(path=path)}); it was kept "
        f"as {kept.name}."
    )
    assert re.fullmatch(r"api-key\.bad-\d{8}-\d{6}", kept.name)
    assert path.read_text() == key.value + "\n"


@posix_only
def test_a_fifo_is_moved_aside_without_blocking() -> None:
    path = key_file()
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    key = load_or_create()  # a read of the FIFO would wait for a writer forever
    (kept,) = _asides(path)
    assert stat.S_ISFIFO(os.lstat(kept).st_mode)
    assert key.note == (
        f"The API key file {path} could not be used (it is a FIFO (named pipe), not a plain "
        f"file); it was kept as {kept.name}."
    )
    assert path.read_text() == key.value + "\n"


def test_a_folder_is_moved_aside_with_what_it_holds() -> None:
    path = key_file()
    path.mkdir(parents=True)
    (path / "inside.txt").write_text("kept")
    key = load_or_create()
    (kept,) = _asides(path)
    assert (kept / "inside.txt").read_text() == "kept"
    assert key.note.endswith(f"(it is a folder, not a plain file); it was kept as {kept.name}.")
    assert path.is_file()


@posix_only
def test_a_symlink_is_moved_aside_and_its_target_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("rp-someone-elses-key-0123456789\n")
    os.chmod(target, 0o644)
    path = key_file()
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    key = load_or_create()
    (kept,) = _asides(path)
    assert kept.is_symlink() and os.readlink(kept) == str(target)
    assert target.read_text() == "rp-someone-elses-key-0123456789\n"
    assert _mode(target) == 0o644  # its permissions were not changed through the link
    assert key.value != "rp-someone-elses-key-0123456789"
    assert not path.is_symlink()
    assert "(it is a symbolic link, not a plain file)" in key.note


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads anything")
def test_a_file_the_user_cannot_read_is_an_error_with_the_fix() -> None:
    load_or_create()
    os.chmod(key_file(), 0o000)
    try:
        with pytest.raises(PanelError) as caught:
            load_or_create()
    finally:
        os.chmod(key_file(), 0o600)
    assert caught.value.message == (
        f"The API key file {key_file()} cannot be read (Permission denied). Give your user "
        "read and write permission on it, or remove it to make a new key."
    )


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anything")
def test_a_folder_that_cannot_be_written_is_an_error_with_the_fix() -> None:
    folder = key_file().parent
    folder.mkdir(parents=True, mode=0o500)
    os.chmod(folder, 0o500)
    try:
        with pytest.raises(PanelError) as caught:
            load_or_create()
    finally:
        os.chmod(folder, 0o700)
    assert caught.value.message.startswith(f"The API key could not be saved: {key_file()}")
    assert not key_file().exists()


def test_regenerate_backs_up_the_old_key() -> None:
    old = load_or_create()
    new = regenerate()
    assert new.value != old.value and KEY_RE.match(new.value)
    assert new.created is True
    assert key_file().read_text() == new.value + "\n"
    (backup,) = paths.backups_dir().iterdir()
    assert backup.read_text() == old.value + "\n"
    assert new.note == f"The old key was backed up to {backup}."
    if sys.platform != "win32":
        assert _mode(backup) == 0o600
        assert _mode(key_file()) == 0o600
    assert load_or_create().value == new.value


def test_regenerate_without_a_key_makes_one() -> None:
    key = regenerate()
    assert (key.created, key.note) == (True, "")
    assert key_file().read_text() == key.value + "\n"
    assert not paths.backups_dir().exists()


def test_regenerate_moves_an_unusable_file_aside() -> None:
    key_file().parent.mkdir(parents=True)
    key_file().write_bytes(b"\x00\x01")
    key = regenerate()
    (kept,) = _asides(key_file())
    assert kept.read_bytes() == b"\x00\x01"
    assert key.note.startswith(f"The API key file {key_file()} could not be used (")


def test_on_windows_no_mode_is_checked_and_the_note_names_the_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(api_key, "_posix_permissions", lambda: False)
    chmods: list[tuple[object, int]] = []
    monkeypatch.setattr(api_key.os, "chmod", lambda p, m: chmods.append((p, m)))
    monkeypatch.setattr(api_key, "write_atomic", _plain_write)
    key = load_or_create()
    assert key.note == (
        f"The API key is stored in {key_file()}, inside your user profile: Windows keeps it "
        "private to your account through the profile's permissions."
    )
    assert chmods == []
    again = load_or_create()
    assert (again.value, again.created, again.note) == (key.value, False, "")
    assert chmods == []


def _plain_write(path: Path, data: bytes, **_: object) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "it is empty"),
        ("a" * 15, "it has 15 characters; a key needs at least 16"),
        ("a" * 16, None),
        ("a" * 512, None),
        ("a" * 513, "it has 513 characters; a key has at most 512"),
        ("a" * 15 + "\t", "it holds spaces or characters other than printable ASCII"),
    ],
)
def test_key_problem_boundaries(value: str, problem: str | None) -> None:
    assert key_problem(value) == problem


def test_mask_shows_only_the_ends() -> None:
    assert mask("rp-ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "rp-ABCD…WXYZ"
    assert mask("0123456789abcdefXYZ") == "0123…fXYZ"
    assert mask("short") == "…"


def _race(home: str, barrier: Any, out: Any) -> None:
    os.environ["ROCMPANEL_HOME"] = home
    barrier.wait(60)
    key = load_or_create()
    out.put((key.value, key.created))


def test_two_processes_starting_at_once_end_with_the_same_key(_private_home: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    out = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(_private_home), barrier, out)) for _ in range(2)]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    values = {value for value, _ in results}
    assert len(values) == 1
    assert sorted(created for _, created in results) == [False, True]
    assert key_file().read_text() == values.pop() + "\n"


def test_a_read_refused_by_the_system_is_an_error_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same path as a 0000 file for a user who is not root (the suite may run as root)."""
    load_or_create()

    def refuse(path: Path, limit: int) -> bytes:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(api_key, "read_bytes", refuse)
    with pytest.raises(PanelError) as caught:
        load_or_create()
    assert caught.value.message == (
        f"The API key file {key_file()} cannot be read (Permission denied). Give your user "
        "read and write permission on it, or remove it to make a new key."
    )
