"""Tuning presets: named sets of environment variables and torch runtime settings.

CONTRACT (filled in by the presets work; signatures are fixed, other modules code
against them):

A preset file is YAML (one preset per file; the built-ins are a list in
``resources/presets.yaml``)::

    id: rdna3-consumer            # slug [a-z0-9][a-z0-9-]*, max 48; file stem of a user preset
    name: RDNA3 consumer          # shown; unique (case-insensitive) among all presets
    description: One or two sentences.
    archs: [rdna3]                # any | rdna2 | rdna3 | rdna4 | cdna2 | cdna3 | cdna4
    env:                          # environment variables (values checked by envvars.catalogue)
      TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL:
        value: "1"
        why: One sentence: what it does.      # required in built-ins
        source: pt_sdpa                       # required in built-ins (free text or a key)
        platforms: [linux]                    # optional: only set there (default: both)
    torch:                        # torch runtime settings, keys of TORCH_SETTINGS
      float32_matmul_precision: {value: high, why: ..., source: ...}
      alloc: {value: {expandable_segments: true}, why: ..., source: ...}

An item may also be written short (``KEY: value``) in a user preset: why/source empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmpanel.base.errors import PanelError

#: The job preset meaning "no preset" (JobSpec.preset, `--a none`).
NO_PRESET = "none"
#: The environment variable carrying the settings header to workers (JSON, see
#: :func:`preset_job_env`); workers/_preset.py reads it before importing torch.
HEADER_VAR = "ROCMPANEL_PRESET"

ARCHS: tuple[str, ...] = ("any", "rdna2", "rdna3", "rdna4", "cdna2", "cdna3", "cdna4")

#: Torch runtime settings a preset may carry, and the value each takes:
#: - float32_matmul_precision: "highest" | "high" | "medium"
#: - sdpa_backends: list, a non-empty subset of "flash", "mem_efficient", "math"
#: - memory_fraction: float in (0, 1] (torch.cuda.set_per_process_memory_fraction, every GPU)
#: - cudnn_benchmark: bool (torch.backends.cudnn.benchmark: MIOpen exhaustive search)
#: - cpu_threads: int >= 1 (torch.set_num_threads: CPU intra-op threads)
#: - alloc: mapping with any of expandable_segments: bool,
#:   garbage_collection_threshold: float in (0, 1), max_split_size_mb: int >= 20;
#:   the worker writes it to the allocator variable its torch reads
#: - tunableop: mapping with enabled: bool, tuning: bool (default true); results go to a
#:   CSV per GPU and torch version under the panel's data dir (the worker names it)
TORCH_SETTINGS: tuple[str, ...] = (
    "float32_matmul_precision",
    "sdpa_backends",
    "memory_fraction",
    "cudnn_benchmark",
    "cpu_threads",
    "alloc",
    "tunableop",
)


class PresetError(PanelError):
    """A preset file that does not fit the schema: names the file, line and field."""

    def __init__(self, file: str, line: int | None, field: str, problem: str) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.problem = problem
        where = f"{file}, line {line}" if line else file
        super().__init__(f"{where}: {field}: {problem}")


@dataclass(frozen=True)
class Item:
    """One setting of a preset."""

    kind: str  # "env" | "torch"
    key: str  # variable name, or a TORCH_SETTINGS key
    value: Any  # str for env; per TORCH_SETTINGS for torch (tuples for lists)
    why: str = ""
    source: str = ""
    platforms: tuple[str, ...] = ("linux", "windows")
    line: int | None = None


@dataclass(frozen=True)
class Preset:
    id: str
    name: str
    description: str = ""
    archs: tuple[str, ...] = ("any",)
    env: tuple[Item, ...] = ()
    torch: tuple[Item, ...] = ()
    builtin: bool = False
    path: Path | None = None

    def items(self) -> tuple[Item, ...]:
        return self.env + self.torch


@dataclass(frozen=True)
class Target:
    """What an item's effect depends on; None = not known (the item is then assumed to
    apply, with a note saying it could not be checked)."""

    platform: str = "linux"  # "linux" | "windows"
    gfx: str | None = None  # e.g. "gfx1100"
    torch_version: str | None = None  # e.g. "2.13.0+rocm7.2"
    hip_version: str | None = None  # e.g. "7.2" (torch.version.hip major.minor)


@dataclass(frozen=True)
class Effect:
    item: Item
    applies: bool
    note: str = ""  # why it does not apply (or cannot be checked)


@dataclass(frozen=True)
class Problem:
    """A user preset file that could not be read; it is left where it is."""

    path: Path
    message: str


def parse_preset(text: str, file: str, *, builtin: bool = False) -> Preset:
    """Parse and validate one preset; PresetError names file, line and field."""
    raise NotImplementedError


def dump_preset(preset: Preset) -> str:
    """YAML text that :func:`parse_preset` reads back to an equal preset (builtin/path aside)."""
    raise NotImplementedError


def builtin_presets() -> tuple[Preset, ...]:
    """The built-ins from resources/presets.yaml (validated; a bad one is a bug: raises)."""
    raise NotImplementedError


def item_effects(preset: Preset, target: Target) -> list[Effect]:
    """Each item of ``preset`` and whether it does anything on ``target``."""
    raise NotImplementedError


def preset_job_env(preset: Preset | None, platform: str) -> dict[str, str | None]:
    """The env overrides a job under ``preset`` gets: its env items for ``platform`` and
    ``HEADER_VAR`` = JSON {"id", "name", "torch": {key: value}} (None preset: {}; the
    header then absent)."""
    raise NotImplementedError


@dataclass
class PresetStore:
    """Built-ins plus the user's presets in ``folder`` (default config_dir()/presets),
    one ``<id>.yaml`` each. Writes are atomic, backed up first and locked; a file that
    cannot be read is reported in ``problems`` and never overwritten."""

    folder: Path | None = None
    problems: list[Problem] = field(default_factory=list)

    def all(self) -> list[Preset]:
        """Built-ins first, then user presets by name; refreshes ``problems``."""
        raise NotImplementedError

    def get(self, ident: str) -> Preset:
        """By id or name (case-insensitive); PanelError naming the known ones."""
        raise NotImplementedError

    def save(self, preset: Preset, *, replace: str | None = None) -> Preset:
        """Create or update a user preset (``replace``: the id it had, when renamed);
        PanelError for a built-in id, a clash of id or name, or a bad value."""
        raise NotImplementedError

    def delete(self, ident: str) -> None:
        """Delete a user preset (backed up first); PanelError for a built-in."""
        raise NotImplementedError

    def duplicate(self, ident: str, name: str | None = None) -> Preset:
        """Copy any preset into a new user preset ("<name> (copy)" by default)."""
        raise NotImplementedError

    def import_file(self, path: Path) -> Preset:
        """Read, validate and add a preset file (a clash of id/name gets a new one)."""
        raise NotImplementedError

    def export(self, ident: str, path: Path) -> None:
        """Write a preset (built-in or user) as a preset file, atomically."""
        raise NotImplementedError


def resolve(ident: str | None, active: str, store: PresetStore | None = None) -> Preset | None:
    """The preset a job runs under: ``ident`` None means ``active`` ("" = none);
    NO_PRESET means none. An active id that no longer exists gives None and logs it; an
    explicit unknown ident raises PanelError."""
    raise NotImplementedError


def _unused(_: Mapping[str, Any]) -> None:  # keeps imports used until filled in
    return None
