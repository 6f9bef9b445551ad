"""Environment folder names on Windows: short enough that PyTorch's deepest file stays under
MAX_PATH when long paths are off; Linux (and Windows with long paths on) unchanged."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs import workload
from rocmpanel.pytorch import environments

FILESYSTEM = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem"
WINDOWS_BUILD = "amd-multiarch-rocm7.14.1-torch2.12-windows"  # 42 characters
ENABLE = (
    'New-ItemProperty -Path "HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem" '
    "-Name LongPathsEnabled -Value 1 -PropertyType DWORD -Force"
)


def plan(build_id: str | None = WINDOWS_BUILD):
    return SimpleNamespace(build_id=build_id)


@pytest.fixture
def envs_of(monkeypatch):
    """Point ROCMPANEL_HOME so that envs_dir() is exactly ``length`` characters long (as
    C:\\Users\\<name>\\AppData\\Local\\rocmpanel\\envs would be on Windows)."""
    base = Path(tempfile.mkdtemp(prefix="e", dir="/tmp"))

    def make(length: int, *, create: bool = True) -> Path:
        pad = length - len(str(base / "data" / "envs")) - 1
        assert pad >= 1
        monkeypatch.setenv("ROCMPANEL_HOME", str(base / ("h" * pad)))
        root = workload.envs_dir()
        assert len(str(root)) == length
        if create:
            root.mkdir(parents=True)
        return root

    yield make
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def long_paths_off(fake_registry):
    return fake_registry.set(FILESYSTEM, "LongPathsEnabled", 0, fake_registry.REG_DWORD)


def test_the_rule_numbers():
    # 259 - 19 (\Lib\site-packages\) - 161 - 24 for files; 247 - 19 - 150 - 24 for folders
    assert environments.SITE_PACKAGES == 19
    assert environments.ENV_PATH_LIMIT == 54
    assert environments.TORCH_DEPTH == 204


@pytest.mark.parametrize(
    ("value", "kind", "limit"),
    [
        (1, 4, None),  # on: REG_DWORD 1
        (0, 4, 54),
        ("1", 1, 54),  # a REG_SZ "1" is not what Windows reads
        (2, 4, 54),
    ],
)
def test_the_limit_follows_long_paths_enabled(fake_registry, value, kind, limit):
    fake_registry.set(FILESYSTEM, "LongPathsEnabled", value, kind)
    assert environments.env_path_limit("win32", fake_registry) == limit


def test_a_missing_or_unreadable_value_counts_as_off(fake_registry):
    assert environments.env_path_limit("win32", fake_registry) == 54  # no key at all
    fake_registry.set(FILESYSTEM, "NtfsDisable8dot3NameCreation", 2, fake_registry.REG_DWORD)
    assert environments.env_path_limit("win32", fake_registry) == 54  # key, no value


def test_linux_has_no_limit_and_reads_no_registry(envs_of):
    envs_of(120)
    assert environments.env_path_limit("linux", None) is None
    assert environments.default_env_name(plan(), platform="linux") == WINDOWS_BUILD
    ticket = environments.begin_install("x" * 64, ["torch"], needed_bytes=1, platform="linux")
    assert len(str(ticket.path)) == 185 and ticket.path.is_dir() is False
    environments.discard(ticket)


def test_long_paths_on_keeps_the_build_id(envs_of, fake_registry):
    envs_of(46)  # C:\Users\jsmith12\AppData\Local\rocmpanel\envs
    fake_registry.set(FILESYSTEM, "LongPathsEnabled", 1, fake_registry.REG_DWORD)
    assert environments.default_env_name(plan(), platform="win32", reg=fake_registry) == (
        WINDOWS_BUILD
    )


def test_long_paths_off_gives_a_short_name(envs_of, long_paths_off):
    root = envs_of(46)  # room for 54 - 46 - 1 = 7 characters
    name = environments.default_env_name(plan(), platform="win32", reg=long_paths_off)
    assert name == "t1"
    (root / "t1").mkdir()
    (root / "t2").mkdir()
    assert environments.default_env_name(plan(), platform="win32", reg=long_paths_off) == "t3"


@pytest.mark.parametrize(("length", "expected"), [(34, "pytorch-2.9-rocm6.4"), (35, "t1")])
def test_the_build_id_is_kept_while_it_fits(envs_of, long_paths_off, length, expected):
    envs_of(length)  # 54 - 34 - 1 = 19 = len("pytorch-2.9-rocm6.4"); one more and it does not fit
    got = environments.default_env_name(
        plan("pytorch-2.9-rocm6.4"), platform="win32", reg=long_paths_off
    )
    assert got == expected


def test_a_taken_build_id_gets_a_suffix_only_while_it_fits(envs_of, long_paths_off):
    root = envs_of(30)  # room 23
    (root / "pytorch-2.9-rocm6.4").mkdir()
    got = environments.default_env_name(
        plan("pytorch-2.9-rocm6.4"), platform="win32", reg=long_paths_off
    )
    assert got == "pytorch-2.9-rocm6.4-2"
    root = envs_of(33)  # room 20: "pytorch-2.9-rocm6.4-2" (21) no longer fits
    (root / "pytorch-2.9-rocm6.4").mkdir()
    got = environments.default_env_name(
        plan("pytorch-2.9-rocm6.4"), platform="win32", reg=long_paths_off
    )
    assert got == "t1"


def test_the_shortest_name_fits_at_51(envs_of, long_paths_off):
    envs_of(51)  # room 2
    assert environments.default_env_name(plan(), platform="win32", reg=long_paths_off) == "t1"


def test_no_name_fits_a_long_profile_path(envs_of, long_paths_off):
    root = envs_of(52)  # room 1: even "t1" would make the folder 55 characters
    with pytest.raises(PanelError) as caught:
        environments.default_env_name(plan(), platform="win32", reg=long_paths_off)
    assert caught.value.message == (
        f"The environment folder {root / 't1'} is 55 characters long, but with long paths off "
        "Windows refuses paths over 259 characters and PyTorch's files lie up to 204 "
        "characters below that folder: pip would fail (Errno 2 or WinError 206). The folder "
        "may be at most 54 characters long. "
        f"The folder of environments, {root}, is 52 characters long, which leaves no room for "
        f"a name. Turn on Windows long paths (in an elevated PowerShell: {ENABLE}), then "
        "restart rocmpanel; or set ROCMPANEL_HOME to a short folder such as C:\\rp."
    )
    assert caught.value.detail == ""  # the panel shows the message only: the fix is in it


def test_a_typed_name_too_long_is_refused_before_anything_is_made(envs_of, long_paths_off):
    root = envs_of(46, create=False)
    with pytest.raises(PanelError) as caught:
        environments.begin_install(
            "my-long-name", ["torch"], needed_bytes=1, platform="win32", reg=long_paths_off
        )
    assert caught.value.message == (
        f"The environment folder {root / 'my-long-name'} is 59 characters long, but with long "
        "paths off Windows refuses paths over 259 characters and PyTorch's files lie up to 204 "
        "characters below that folder: pip would fail (Errno 2 or WinError 206). The folder "
        "may be at most 54 characters long. "
        "Use a name of at most 7 characters, or turn on Windows long paths (in an elevated "
        f"PowerShell: {ENABLE})."
    )
    assert not root.exists()  # no folder, no marker of an install in progress


@pytest.mark.parametrize(("name", "fits"), [("abcdefg", True), ("abcdefgh", False)])
def test_begin_install_allows_exactly_the_limit(envs_of, long_paths_off, name, fits):
    root = envs_of(46)  # 46 + 1 + 7 = 54
    if fits:
        ticket = environments.begin_install(
            name, ["torch"], needed_bytes=1, platform="win32", reg=long_paths_off
        )
        assert ticket.path == root / name and len(str(ticket.path)) == 54
        environments.discard(ticket)
    else:
        with pytest.raises(PanelError, match="is 55 characters long"):
            environments.begin_install(
                name, ["torch"], needed_bytes=1, platform="win32", reg=long_paths_off
            )


def test_long_paths_on_lets_any_name_in(envs_of, fake_registry):
    root = envs_of(46)
    fake_registry.set(FILESYSTEM, "LongPathsEnabled", 1, fake_registry.REG_DWORD)
    ticket = environments.begin_install(
        WINDOWS_BUILD, ["torch"], needed_bytes=1, platform="win32", reg=fake_registry
    )
    assert ticket.path == root / WINDOWS_BUILD
    environments.discard(ticket)
