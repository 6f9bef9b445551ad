"""Installing a newer data set (``rocmpanel data update``), validated, with rollback.

A data set is a folder (or a .zip of one) holding ``dataset.yaml`` and every file of
:data:`rocmpanel.base.datasets.UPDATABLE`. Installing it:

1. reads every file with a size limit (no FIFOs, devices or archive members outside the set),
2. parses each with the loader the panel itself uses and cross-checks them (a file the
   panel could not read is refused, and nothing changes),
3. writes the set to a new folder beside the installed one, then, under a lock, moves the
   installed set to ``previous`` and the new one into place; if that fails half way the
   previous set is put back.

``rocmpanel data rollback`` swaps ``previous`` back in. Nothing is ever deleted that the
user could still want: the set replaced last stays in ``previous``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml
from filelock import FileLock, Timeout

from rocmpanel.base import datasets
from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.knowledge import community, compat_data, torch_builds
from rocmpanel.knowledge.compat_data import version_key
from rocmpanel.machine import pci_ids
from rocmpanel.machine.gfx import normalise_gfx

FILES = (datasets.MANIFEST, *datasets.UPDATABLE)
LOCK_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Validated:
    """A data set that every loader accepted, held in memory."""

    info: datasets.DatasetInfo
    texts: dict[str, str]
    summary: tuple[str, ...]  # one line per file: what it holds


def _read_folder(folder: Path) -> dict[str, str]:
    texts: dict[str, str] = {}
    for name in FILES:
        path = folder / name
        if not path.exists():
            raise PanelError(f"The data set in {folder} lacks {name}.")
        try:
            texts[name] = datasets.read_limited(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise PanelError(f"{path} could not be read: {exc}") from exc
    return texts


def _read_zip(path: Path) -> dict[str, str]:
    """The set's files from a .zip: flat, or inside one top folder; nothing else is read."""
    try:
        data = datasets.read_limited_bytes(path)
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (OSError, zipfile.BadZipFile) as exc:
        raise PanelError(f"{path} is not a readable .zip data set: {exc}") from exc
    texts: dict[str, str] = {}
    with archive:
        for member in archive.infolist():
            name = PurePosixPath(member.filename)
            if member.is_dir() or name.name not in FILES or len(name.parts) > 2:
                continue
            if member.file_size > datasets.MAX_FILE_BYTES:
                raise PanelError(f"{member.filename} in {path} is too large.")
            if name.name in texts:
                raise PanelError(f"{path} holds {name.name} twice.")
            try:
                # Bounded: a member whose header understates its size is cut, not inflated.
                with archive.open(member) as handle:
                    raw = handle.read(datasets.MAX_FILE_BYTES + 1)
                if len(raw) > datasets.MAX_FILE_BYTES:
                    raise PanelError(f"{member.filename} in {path} is too large.")
                texts[name.name] = raw.decode("utf-8")
            except (OSError, UnicodeDecodeError, zipfile.BadZipFile, EOFError) as exc:
                raise PanelError(f"{member.filename} in {path} could not be read.") from exc
    missing = [n for n in FILES if n not in texts]
    if missing:
        raise PanelError(f"The data set {path} lacks {', '.join(missing)}.")
    return texts


def read_set(source: Path) -> dict[str, str]:
    """The texts of a data set given as a folder, a .zip, or the folder's dataset.yaml."""
    if source.is_dir():
        return _read_folder(source)
    if source.name == datasets.MANIFEST:
        return _read_folder(source.parent)
    if source.suffix.lower() == ".zip":
        return _read_zip(source)
    if not source.exists():
        raise PanelError(f"{source} does not exist.")
    raise PanelError(
        f"{source} is not a data set: give a folder holding dataset.yaml and "
        f"{', '.join(datasets.UPDATABLE)}, or a .zip of one."
    )


def validate(texts: dict[str, str], origin: Path) -> Validated:
    """Every file parsed by the panel's own loaders, then checked for sense against the
    panel's own data (a set that would silently lose most GPUs or builds is refused);
    PanelError naming the first problem."""
    try:
        return _validate(texts, origin)
    except PanelError:
        raise
    except Exception as exc:  # outside data: any failure is a refusal, never a traceback
        raise PanelError(
            f"The data set in {origin} could not be read: {type(exc).__name__}: {exc}"
        ) from exc


# A new set may not be much smaller than the panel's own: a cut file parses fine but drops
# GPUs. The fraction of the built-in entries each part must keep.
KEEP_AT_LEAST = 0.8


def _validate(texts: dict[str, str], origin: Path) -> Validated:
    info = datasets.parse_manifest(texts[datasets.MANIFEST], origin, "installed")
    if info.schema != datasets.SCHEMA:
        raise PanelError(
            f"The data set has schema {info.schema}; this panel reads schema {datasets.SCHEMA}."
        )
    table = pci_ids.parse_table(texts["pci_ids.yaml"])
    known = community.parse(texts["community.yaml"])
    compat = compat_data.parse(texts["compat.yaml"], known, table)
    manifest = torch_builds.load_manifest(
        user_path=origin / "no-overlay", builtin=texts["torch_builds.yaml"], community=known
    )
    _check_sense(compat, table, manifest)
    try:
        gpus = yaml.safe_load(texts["gpus.yaml"])
    except yaml.YAMLError as exc:
        raise PanelError("gpus.yaml is not valid YAML.", str(exc)) from exc
    if not isinstance(gpus, dict) or not isinstance(gpus.get("products"), list):
        raise PanelError("gpus.yaml has no list of products.")
    if compat.data_as_of and compat.data_as_of != info.data_as_of:
        raise PanelError(
            f"dataset.yaml says data as of {info.data_as_of}, compat.yaml {compat.data_as_of}."
        )
    summary = (
        f"compat.yaml: {len(compat.releases)} release rows, newest Linux "
        f"{compat.latest_known['linux']}, Windows {compat.latest_known['windows']}",
        f"pci_ids.yaml: {len(table.devices)} PCI ids",
        f"gpus.yaml: {len(gpus['products'])} products",
        f"community.yaml: {len(known.overrides)} overrides, {len(known.harms)} known harms",
        f"torch_builds.yaml: {len(manifest.builds)} PyTorch builds",
    )
    return Validated(info, texts, summary)


def _check_sense(
    compat: compat_data.CompatData, table: pci_ids.PciTable, manifest: torch_builds.Manifest
) -> None:
    """PanelError when the set names no real targets or would drop most of what the
    panel's own data knows."""
    names = [g for r in compat.releases for g in (*r.supported, *r.deprecated, *r.runtime_only)]
    names += [e.gfx for e in table.devices.values() if e.gfx]
    names += [g for b in manifest.builds for g in b.gfx]
    bad = sorted({g for g in names if normalise_gfx(g) != g})
    if bad:
        raise PanelError(f"The data set names targets that are not gfx names: {', '.join(bad)}.")
    for os_name in ("linux", "windows"):
        if not compat.series_releases(os_name):
            raise PanelError(f"compat.yaml has no {os_name} releases.")
        if version_key(compat.latest_known[os_name]) is None:
            raise PanelError(f"compat.yaml: latest_known {os_name} is not a version.")
        if not manifest.for_os(os_name):
            raise PanelError(f"torch_builds.yaml has no {os_name} builds.")
    own_compat, own_table = compat_data.load(), pci_ids.load_table()
    own_builds = torch_builds.cached_manifest().builds
    for what, new, old in (
        ("PCI ids", len(table.devices), len(own_table.devices)),
        ("release rows", len(compat.releases), len(own_compat.releases)),
        ("PyTorch builds", len(manifest.builds), len(own_builds)),
    ):
        if new < KEEP_AT_LEAST * old:
            raise PanelError(
                f"The data set has {new} {what}, the panel's own data {old}: it looks cut "
                "short, and was refused."
            )


@contextlib.contextmanager
def _locked() -> Iterator[FileLock]:
    root = datasets.installed_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(root / ".lock"))
        lock.acquire(timeout=LOCK_TIMEOUT_S)
    except Timeout as exc:
        raise PanelError(
            "Another rocmpanel is installing data right now; try again when it is done."
        ) from exc
    except OSError as exc:
        raise PanelError(f"The data folder {root} cannot be written: {exc}") from exc
    try:
        yield lock
    finally:
        lock.release()


def _remove_leftovers(root: Path) -> None:
    """Staging folders of updates cut short (under the lock, nothing else uses them: they
    hold copies of sets the user still has at their source). A rollback cut short leaves
    its folder alone, with the set in it."""
    for stale in root.glob(".incoming-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _write_folder(parent: Path, texts: dict[str, str]) -> Path:
    staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=parent))
    for name, text in texts.items():
        write_atomic(staging / name, text.encode("utf-8"))
    return staging


def install(source: Path, *, allow_older: bool = False) -> Validated:
    """Validates the set at ``source`` and makes it the one in force; PanelError (with
    nothing changed) when it is refused."""
    validated = validate(read_set(source), source)
    builtin = datasets.builtin_info()
    if _day(validated.info.data_as_of) < _day(builtin.data_as_of) and not allow_older:
        raise PanelError(
            f"This data set ({validated.info.data_as_of}) is older than the panel's own data "
            f"({builtin.data_as_of}); nothing was installed."
        )
    root = datasets.installed_root()
    current, previous = root / "current", root / "previous"
    with _locked():
        try:
            _remove_leftovers(root)
            staging = _write_folder(root, validated.texts)
        except (OSError, PanelError) as exc:
            raise PanelError(f"Writing the data set into {root} failed: {exc}") from exc
        # current -> previous, then staging -> current. A crash between the two leaves no
        # set in force and the replaced one in previous (the panel says so; `data rollback`
        # puts it back); a failure of the second rename puts it back at once.
        try:
            if current.exists():
                shutil.rmtree(previous, ignore_errors=True)
                os.replace(current, previous)
            os.replace(staging, current)
        except OSError as exc:
            if not current.exists() and previous.exists():
                with contextlib.suppress(OSError):
                    os.replace(previous, current)
            shutil.rmtree(staging, ignore_errors=True)
            raise PanelError(f"Installing the data set failed: {exc}; nothing changed.") from exc
    datasets.reset()
    return validated


def _day(text: str) -> _dt.date:
    return _dt.date.fromisoformat(text)


def rollback() -> datasets.DatasetInfo:
    """Swaps the previous installed set back in (or removes the installed set when there
    was none before it, so the built-in data is in force again)."""
    root = datasets.installed_root()
    current, previous = root / "current", root / "previous"
    with _locked():
        if not current.exists() and not previous.exists():
            raise PanelError("No data update is installed: the panel's own data is in force.")
        try:
            _remove_leftovers(root)
            parked = Path(tempfile.mkdtemp(prefix=".rollback-", dir=root))
        except OSError as exc:
            raise PanelError(f"The data folder {root} cannot be written: {exc}") from exc
        try:
            if current.exists():
                os.replace(current, parked / "set")
            if previous.exists():
                os.replace(previous, current)
            if (parked / "set").exists():
                os.replace(parked / "set", previous)
        except OSError as exc:
            raise PanelError(f"Rolling back failed: {exc}; the sets are in {root}.") from exc
        finally:
            with contextlib.suppress(OSError):
                parked.rmdir()  # only when empty: a set left in it is never deleted
    datasets.reset()
    return datasets.active()
