"""Which copy of the panel's knowledge is in force: the shipped data set or a newer one.

The data files that say which GPU works with which ROCm and which PyTorch build to install
(``UPDATABLE``) ship in ``rocmpanel.resources``. ``rocmpanel data update`` can install a
newer, validated set into the user's data folder (``data/dataset/current``); it is used as
a whole, never mixed file by file with the shipped one, and only while it is at least as new
as the shipped set and of the same schema (so a panel upgrade is not shadowed by an older
download). A set that cannot be read is ignored (and reported), never deleted.

Every reader of those files goes through :func:`read_data`, so they all see the same set.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar, cast

import yaml

from rocmpanel.base import files, paths
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.base.resources import read_resource, resource_path

_T = TypeVar("_T")
MANIFEST = "dataset.yaml"
SCHEMA = 1
UPDATABLE: tuple[str, ...] = (
    "compat.yaml",
    "pci_ids.yaml",
    "gpus.yaml",
    "community.yaml",
    "torch_builds.yaml",
)
# A data set file larger than this is refused unread: the shipped ones are tens of KiB.
MAX_FILE_BYTES = 8 * 1024 * 1024
# The panel warns that its data may be stale once the newest release it knows is this old.
STALE_AFTER_DAYS = 120
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ROLLBACK_HINT = "`rocmpanel data rollback` puts the previous set back."


@dataclass(frozen=True)
class DatasetInfo:
    """What a data set is: where it lives, how fresh, and what was wrong with the others."""

    origin: str  # "built-in" or "installed"
    folder: Path
    schema: int
    data_as_of: str  # ISO date of the newest release the data knows
    generated_at: str  # ISO date the set was generated
    sources: tuple[Mapping[str, str], ...] = ()
    problems: tuple[str, ...] = field(default=())  # why an installed set is not in force

    def age_days(self, today: _dt.date | None = None) -> int | None:
        try:
            as_of = _dt.date.fromisoformat(self.data_as_of)
        except ValueError:
            return None
        return ((today or _dt.date.today()) - as_of).days

    def is_stale(self, today: _dt.date | None = None) -> bool:
        age = self.age_days(today)
        return age is not None and age > STALE_AFTER_DAYS

    def describe(self) -> str:
        """One line for the Setup tab and ``doctor``: "built-in data as of 2026-10-05"."""
        if self.origin == "installed":
            text = translate("DatasetInfo", "installed update, newest ROCm release known: {date}")
        else:
            text = translate("DatasetInfo", "built-in data, newest ROCm release known: {date}")
        return text.format(date=self.data_as_of)

    def as_dict(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "folder": str(self.folder),
            "schema": self.schema,
            "data_as_of": self.data_as_of,
            "generated_at": self.generated_at,
            "stale": self.is_stale(),
            "sources": [dict(s) for s in self.sources],
            "problems": list(self.problems),
        }


def installed_root() -> Path:
    """Folder holding the installed data sets (``current``, ``previous``)."""
    return paths.data_dir() / "dataset"


def installed_dir() -> Path:
    return installed_root() / "current"


def read_limited_bytes(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """A file's bytes (:func:`rocmpanel.base.files.read_bytes`): a FIFO, a device or a file
    larger than ``limit`` is refused with an OSError that says so, without blocking."""
    return files.read_bytes(path, limit)


def read_limited(path: Path) -> str:
    """A data file's text (see :func:`read_limited_bytes`)."""
    return read_limited_bytes(path).decode("utf-8")


def parse_manifest(text: str, folder: Path, origin: str) -> DatasetInfo:
    """A ``dataset.yaml`` as DatasetInfo; PanelError when it is not one."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PanelError(f"{folder / MANIFEST} is not valid YAML.", str(exc)) from exc
    if not isinstance(raw, dict):
        raise PanelError(f"{folder / MANIFEST} is not a mapping.")
    data = cast(dict[str, Any], raw)
    try:
        schema = int(data.get("schema", 0))
    except (TypeError, ValueError):
        schema = 0
    as_of = str(data.get("data_as_of") or "")
    try:
        if not _DATE_RE.match(as_of):
            raise ValueError(as_of)
        day = _dt.date.fromisoformat(as_of)
    except ValueError as exc:
        raise PanelError(
            f"{folder / MANIFEST} has no valid data_as_of date (YYYY-MM-DD): {as_of!r}."
        ) from exc
    if day > _dt.date.today() + _dt.timedelta(days=1):
        raise PanelError(f"{folder / MANIFEST} claims data as of {as_of}, a date in the future.")
    raw_sources = data.get("sources") or []
    if not isinstance(raw_sources, list):
        raise PanelError(f"{folder / MANIFEST}: sources must be a list.")
    sources = tuple(
        {str(k): str(v) for k, v in s.items()} for s in raw_sources if isinstance(s, dict)
    )
    return DatasetInfo(
        origin=origin,
        folder=folder,
        schema=schema,
        data_as_of=as_of,
        generated_at=str(data.get("generated_at") or ""),
        sources=sources,
    )


def builtin_info() -> DatasetInfo:
    folder = resource_path(MANIFEST).parent
    return parse_manifest(read_resource(MANIFEST), folder, "built-in")


def installed_info(folder: Path | None = None) -> DatasetInfo | None:
    """The installed set's manifest, or None when none is installed; PanelError when one is
    there but unreadable."""
    folder = folder or installed_dir()
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        text = read_limited(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise PanelError(f"{path} could not be read.", str(exc)) from exc
    return parse_manifest(text, folder, "installed")


_forced_builtin: list[str] = []  # why the installed set was dropped for this process


def _choose() -> DatasetInfo:
    builtin = builtin_info()
    if _forced_builtin:
        return _with_problem(builtin, _forced_builtin[0])
    try:
        installed = installed_info()
    except PanelError as exc:
        return _with_problem(
            builtin,
            f"The installed data update in {installed_dir()} was ignored: {exc.message} "
            + ROLLBACK_HINT,
        )
    if installed is None:
        if any(installed_root().glob(".incoming-*")):
            return _with_problem(
                builtin,
                f"A data update was cut short, so none is in force: {ROLLBACK_HINT}",
            )
        return builtin
    if installed.schema != SCHEMA:
        return _with_problem(
            builtin,
            f"The installed data update has schema {installed.schema}; this panel reads "
            f"schema {SCHEMA}: it was ignored.",
        )
    if installed.data_as_of < builtin.data_as_of:
        return _with_problem(
            builtin,
            f"The installed data update ({installed.data_as_of}) is older than the panel's "
            f"own data ({builtin.data_as_of}): the panel's own is used.",
        )
    missing = [n for n in UPDATABLE if not (installed.folder / n).is_file()]
    if missing:
        return _with_problem(
            builtin,
            f"The installed data update in {installed.folder} lacks {', '.join(missing)}: it "
            f"was ignored. {ROLLBACK_HINT}",
        )
    return installed


def _with_problem(info: DatasetInfo, problem: str) -> DatasetInfo:
    return DatasetInfo(
        info.origin,
        info.folder,
        info.schema,
        info.data_as_of,
        info.generated_at,
        info.sources,
        (*info.problems, problem),
    )


@lru_cache(maxsize=1)
def active() -> DatasetInfo:
    """The data set in force for this process (decided once; :func:`reset` forgets it)."""
    return _choose()


def reset(*, forget_fallback: bool = True) -> None:
    """Forget every cached decision and parsed file (after an install or in tests)."""
    if forget_fallback:
        _forced_builtin.clear()
    active.cache_clear()
    for hook in _RESET_HOOKS:
        hook()


def fall_back(problem: str) -> None:
    """Puts the built-in set in force, as a whole, for the rest of this process: a file of
    the installed set could not be used (``problem`` says which and why)."""
    if not _forced_builtin:
        _forced_builtin.append(f"{problem} The panel's own data is used instead. {ROLLBACK_HINT}")
    reset(forget_fallback=False)


def parse_data(name: str, parse: Callable[[str], _T]) -> _T:
    """``parse`` applied to data file ``name`` of the set in force. When the file of an
    installed set cannot be parsed (whatever the error: it is outside data), the built-in set
    takes over as a whole (:func:`fall_back`) and its file is parsed instead."""
    text = read_data(name)
    if active().origin != "installed":
        return parse(text)
    try:
        return parse(text)
    except Exception as exc:  # any failure of outside data means: fall back
        detail = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        fall_back(f"{name} of the installed data update could not be read ({detail}).")
        return parse(read_data(name))


_RESET_HOOKS: list[Callable[[], object]] = []


def on_reset(hook: Callable[[], object]) -> Callable[[], object]:
    """Registers a cache-clearing callable run by :func:`reset` (loaders' lru_caches)."""
    _RESET_HOOKS.append(hook)
    return hook


def read_data(name: str) -> str:
    """The text of one of the panel's data files from the set in force; OSError when it
    cannot be read. An installed file that cannot be read puts the built-in set in force as
    a whole (never a mix of the two)."""
    info = active()
    if name in UPDATABLE and info.origin == "installed":
        try:
            return read_limited(info.folder / name)
        except (OSError, UnicodeDecodeError) as exc:
            fall_back(f"{info.folder / name} could not be read ({exc}).")
    return read_resource(name)
