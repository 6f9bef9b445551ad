"""`rocmpanel data`: which data set is in force, installing a newer one, rolling back."""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

from rocmpanel.base import datasets
from rocmpanel.base.errors import PanelError
from rocmpanel.base.resources import resource_path
from rocmpanel.knowledge import compat_data, update
from rocmpanel.shell.cli import main


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ROCMPANEL_HOME", str(tmp_path / "home"))
    datasets.reset()
    yield
    datasets.reset()


def _newer(days: int) -> str:
    """A data date ``days`` after the built-in one (never in the future: the built-in data
    is at least a few days old when the tests run)."""
    builtin = _dt.date.fromisoformat(datasets.builtin_info().data_as_of)
    return min(builtin + _dt.timedelta(days=days), _dt.date.today()).isoformat()


def _copy_builtin(folder: Path, *, as_of: str | None = None) -> Path:
    """A data set folder holding the shipped files, optionally re-dated (newer)."""
    folder.mkdir(parents=True)
    for name in update.FILES:
        shutil.copyfile(resource_path(name), folder / name)
    if as_of:
        for name in (datasets.MANIFEST, "compat.yaml"):
            doc = yaml.safe_load((folder / name).read_text(encoding="utf-8"))
            doc["data_as_of"] = as_of
            (folder / name).write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return folder


def test_builtin_in_force_and_shown(capsys: pytest.CaptureFixture[str]) -> None:
    info = datasets.active()
    assert info.origin == "built-in" and info.problems == ()
    assert info.data_as_of == compat_data.load().data_as_of
    assert main(["data", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["origin"] == "built-in" and shown["data_as_of"] == info.data_as_of
    assert shown["latest_known"]["linux"]
    assert main(["data", "show"]) == 0
    assert "Data as of" in capsys.readouterr().out


def test_update_installs_a_newer_set_and_rollback_restores(tmp_path: Path) -> None:
    newer = _copy_builtin(tmp_path / "set", as_of=_newer(1))
    assert main(["data", "update", "--from", str(newer)]) == 0
    info = datasets.active()
    assert info.origin == "installed" and info.data_as_of == _newer(1)
    assert compat_data.load().data_as_of == _newer(1)  # caches were reset
    assert main(["data", "rollback"]) == 0
    assert datasets.active().origin == "built-in"
    # The replaced set is kept: rolling back again brings it back.
    assert main(["data", "rollback"]) == 0
    assert datasets.active().data_as_of == _newer(1)


def test_update_from_a_zip_with_a_top_folder(tmp_path: Path) -> None:
    newer = _copy_builtin(tmp_path / "set", as_of=_newer(2))
    archive = tmp_path / "set.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in newer.iterdir():
            zf.write(path, f"rocmpanel-data/{path.name}")
        zf.writestr("../../evil.yaml", "x: 1")  # never extracted anywhere
    update.install(archive)
    assert datasets.active().data_as_of == _newer(2)
    assert not (tmp_path / "evil.yaml").exists()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda f: (f / "compat.yaml").write_text("linux: [", encoding="utf-8"), "compat.yaml"),
        (lambda f: (f / "community.yaml").write_text("- a list", encoding="utf-8"), "community"),
        (lambda f: (f / "torch_builds.yaml").unlink(), "lacks torch_builds.yaml"),
        (lambda f: (f / "gpus.yaml").write_text("products: 3", encoding="utf-8"), "products"),
        (
            lambda f: (f / "dataset.yaml").write_text(
                f"schema: 99\ndata_as_of: '{_newer(1)}'\n", encoding="utf-8"
            ),
            "schema 99",
        ),
    ],
)
def test_a_damaged_set_is_refused_and_nothing_changes(tmp_path: Path, damage, message) -> None:
    good = _copy_builtin(tmp_path / "good", as_of=_newer(1))
    update.install(good)
    bad = _copy_builtin(tmp_path / "bad", as_of=_newer(3))
    damage(bad)
    with pytest.raises(PanelError, match=message):
        update.install(bad)
    assert datasets.active().data_as_of == _newer(1)


def test_an_older_set_is_refused_unless_asked(tmp_path: Path) -> None:
    older = _copy_builtin(tmp_path / "old", as_of="2020-01-01")
    assert main(["data", "update", "--from", str(older)]) == 1
    assert datasets.active().origin == "built-in"
    update.install(older, allow_older=True)
    # Installed, but the panel's newer own data stays in force, and says why.
    info = datasets.active()
    assert info.origin == "built-in" and "older" in info.problems[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_and_missing_paths_do_not_hang(tmp_path: Path) -> None:
    folder = _copy_builtin(tmp_path / "set", as_of=_newer(1))
    (folder / "pci_ids.yaml").unlink()
    os.mkfifo(folder / "pci_ids.yaml")
    with pytest.raises(PanelError, match="not a regular file"):
        update.install(folder)
    with pytest.raises(PanelError, match="does not exist"):
        update.install(tmp_path / "nothing-here")
    fifo_zip = tmp_path / "set.zip"
    os.mkfifo(fifo_zip)
    with pytest.raises(PanelError, match="not a readable"):
        update.install(fifo_zip)


def test_an_unreadable_installed_set_is_kept_and_ignored(tmp_path: Path) -> None:
    update.install(_copy_builtin(tmp_path / "set", as_of=_newer(1)))
    manifest = datasets.installed_dir() / datasets.MANIFEST
    manifest.write_bytes(b"\xff\xfe not yaml")
    datasets.reset()
    info = datasets.active()
    assert info.origin == "built-in" and "ignored" in info.problems[0]
    assert manifest.read_bytes() == b"\xff\xfe not yaml"  # kept aside, not overwritten


def test_update_needs_from_and_rollback_needs_a_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "update"]) == 2  # a usage error, as argparse's
    assert capsys.readouterr().err == (
        "rocmpanel data: error: update needs --from FOLDER|ZIP (a data set to install).\n"
    )
    assert main(["data", "rollback", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["ok"] is False


def _plan_and_doctor_still_work() -> None:
    from rocmpanel.knowledge.torch_builds import load_manifest
    from rocmpanel.machine.gpu_model import GpuInfo
    from rocmpanel.pytorch.plan import plan
    from rocmpanel.setup.compat import verdict_for

    p = plan("gfx1100", None, "linux", "3.12", load_manifest())
    assert p.supported, p.refusal
    assert verdict_for(GpuInfo("gpu", gfx="gfx1100"), "linux", "7.2.4").kernels is not None


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("torch_builds.yaml", "builds: 5\n"),
        ("compat.yaml", "linux: [\n"),
        ("community.yaml", "overrides: 3\n"),
        ("pci_ids.yaml", "devices: [1, 2]\n"),
    ],
)
def test_a_damaged_installed_file_puts_the_builtin_set_in_force_as_a_whole(
    tmp_path: Path, name: str, text: str
) -> None:
    update.install(_copy_builtin(tmp_path / "set", as_of=_newer(1)))
    (datasets.installed_dir() / name).write_text(text, encoding="utf-8")
    datasets.reset()
    _plan_and_doctor_still_work()
    info = datasets.active()
    assert info.origin == "built-in"
    assert name in info.problems[0] and "rollback" in info.problems[0]


def test_a_broken_user_overlay_is_reported_not_raised(tmp_path: Path) -> None:
    from rocmpanel.base import paths
    from rocmpanel.knowledge.torch_builds import load_manifest

    overlay = paths.config_dir() / "torch_builds.yaml"
    overlay.parent.mkdir(parents=True, exist_ok=True)
    for text in ("builds: 5\n", "arch_sets: [a]\n", "builds: [{id: x, download_mb: .inf}]\n"):
        overlay.write_text(text, encoding="utf-8")
        manifest = load_manifest()
        assert manifest.problems and manifest.builds, text


@pytest.mark.parametrize(
    "packages",
    [["torch", "--extra-index-url=https://evil.example/simple"], ["torch", "a b"], ["-r"]],
)
def test_a_row_cannot_slip_options_into_pip(tmp_path: Path, packages: list[str]) -> None:
    folder = _copy_builtin(tmp_path / "set", as_of=_newer(1))
    doc = yaml.safe_load((folder / "torch_builds.yaml").read_text(encoding="utf-8"))
    doc["builds"][0]["packages"] = packages
    (folder / "torch_builds.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(PanelError, match="package name"):
        update.install(folder)


@pytest.mark.parametrize("as_of", ["2999-01-01", "20991231", "2026-1-5"])
def test_future_or_malformed_dates_are_refused(tmp_path: Path, as_of: str) -> None:
    folder = _copy_builtin(tmp_path / "set")
    for name in (datasets.MANIFEST, "compat.yaml"):
        doc = yaml.safe_load((folder / name).read_text(encoding="utf-8"))
        doc["data_as_of"] = as_of
        (folder / name).write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(PanelError, match=r"data_as_of|future"):
        update.install(folder)


def test_a_set_cut_short_is_refused(tmp_path: Path) -> None:
    folder = _copy_builtin(tmp_path / "set", as_of=_newer(1))
    doc = yaml.safe_load((folder / "pci_ids.yaml").read_text(encoding="utf-8"))
    doc["devices"] = dict(list(doc["devices"].items())[:40])
    (folder / "pci_ids.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(PanelError, match="cut short"):
        update.install(folder)
    bad = _copy_builtin(tmp_path / "bad", as_of=_newer(1))
    text = (bad / "compat.yaml").read_text(encoding="utf-8").replace("gfx1100", "gfxZZZ")
    (bad / "compat.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(PanelError, match=r"gfxZZZ|malformed"):
        update.install(bad)


def test_an_unwritable_data_folder_is_a_message(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "ro"
    home.mkdir()
    (home / "data").write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("ROCMPANEL_HOME", str(home))
    datasets.reset()
    with pytest.raises(PanelError, match="cannot be written"):
        update.install(_copy_builtin(tmp_path / "set", as_of=_newer(1)))
    with pytest.raises(PanelError, match="cannot be written"):
        update.rollback()


def test_an_update_cut_short_says_so_and_rollback_restores(tmp_path: Path) -> None:
    update.install(_copy_builtin(tmp_path / "a", as_of=_newer(1)))
    update.install(_copy_builtin(tmp_path / "b", as_of=_newer(2)))
    root = datasets.installed_root()
    # As if killed between "current -> previous" and "staging -> current":
    os.replace(root / "current", root / "previous.tmp")
    shutil.rmtree(root / "previous")
    os.replace(root / "previous.tmp", root / "previous")
    (root / ".incoming-x").mkdir()
    datasets.reset()
    info = datasets.active()
    assert info.origin == "built-in" and "cut short" in info.problems[0]
    update.rollback()
    assert datasets.active().data_as_of == _newer(2)
    assert not (root / ".incoming-x").exists()
