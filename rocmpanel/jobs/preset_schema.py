"""The preset file format: data types, limits, the torch settings' values, and dumping.

Re-exported by :mod:`rocmpanel.jobs.presets` (import from there). Reading a file, with
errors that name its file, line and field, is :mod:`rocmpanel.jobs.preset_yaml`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from rocmpanel.base.errors import PanelError

if TYPE_CHECKING:
    from rocmpanel.jobs.preset_yaml import Reader

#: The job preset meaning "no preset" (JobSpec.preset, `--a none`).
NO_PRESET = "none"
#: The environment variable carrying the settings header to workers (JSON).
HEADER_VAR = "ROCMPANEL_PRESET"

ARCHS: tuple[str, ...] = ("any", "rdna2", "rdna3", "rdna4", "cdna2", "cdna3", "cdna4")
PLATFORMS: tuple[str, ...] = ("linux", "windows")

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
#:   CSV per device index and torch version under the panel's data dir (the worker names it)
TORCH_SETTINGS: tuple[str, ...] = (
    "float32_matmul_precision",
    "sdpa_backends",
    "memory_fraction",
    "cudnn_benchmark",
    "cpu_threads",
    "alloc",
    "tunableop",
)
MATMUL_PRECISIONS: tuple[str, ...] = ("highest", "high", "medium")
SDPA_BACKENDS: tuple[str, ...] = ("flash", "mem_efficient", "math")
ALLOC_KEYS: tuple[str, ...] = (
    "expandable_segments",
    "garbage_collection_threshold",
    "max_split_size_mb",
)
TUNABLEOP_KEYS: tuple[str, ...] = ("enabled", "tuning")
#: The allocator variables: a preset sets them through the ``alloc`` torch setting.
ALLOC_VARS: tuple[str, ...] = (
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_HIP_ALLOC_CONF",
)
#: The TunableOp variables the worker sets from the ``tunableop`` torch setting (workers/
#: _preset.py): a preset sets TunableOp through that setting. Its other PYTORCH_TUNABLEOP_*
#: variables (tuning limits, verbosity) are not set by the worker and stay allowed.
TUNABLEOP_VARS: tuple[str, ...] = (
    "PYTORCH_TUNABLEOP_ENABLED",
    "PYTORCH_TUNABLEOP_TUNING",
    "PYTORCH_TUNABLEOP_FILENAME",
)
VISIBLE_VARS: tuple[str, ...] = (
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
)
TOP_KEYS: tuple[str, ...] = ("id", "name", "description", "archs", "env", "torch")
ITEM_KEYS: tuple[str, ...] = ("value", "why", "source", "platforms")
ID_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
ID_MAX = 48
NAME_MAX = 80
TEXT_MAX = 2000
MAX_THREADS = 4096
#: How deep a preset file may nest (mappings and lists inside each other). A real preset
#: needs at most 5 (preset > env > item > platforms > word); a deeper file is refused
#: before the YAML composer, which recurses once per level, runs out of stack.
MAX_DEPTH = 32
#: Ids Windows keeps for devices, so ``<id>.yaml`` cannot be a file there ("Naming Files,
#: Paths, and Namespaces", learn.microsoft.com/windows/win32/fileio/naming-a-file: CON,
#: PRN, AUX, NUL, COM0-COM9, LPT0-LPT9, also when followed by an extension).
RESERVED_IDS: frozenset[str] = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{port}{n}" for port in ("com", "lpt") for n in range(10)]
)
# The smallest max_split_size_mb the allocator accepts: its large-block size, 20 MiB
# (pytorch/pytorch c10/cuda/CUDAAllocatorConfig.cpp, kLargeBuffer; knobs.md section 3).
MIN_SPLIT_MB = 20


class PresetError(PanelError):
    """A preset file that does not fit the schema: names the file, line and field."""

    def __init__(self, file: str, line: int | None, field: str, problem: str) -> None:
        # A hostile file's key or value, echoed back, must not carry control characters
        # to the terminal or the window: they are shown escaped.
        file, field, problem = visible(file), visible(field), visible(problem)
        self.file = file
        self.line = line
        self.field = field
        self.problem = problem
        where = f"{file}, line {line}" if line else file
        super().__init__(f"{where}: {field}: {problem}")


@dataclass(frozen=True)
class Item:
    """One setting of a preset. ``value``: str for env; per TORCH_SETTINGS for torch
    (tuples for lists, a dict for alloc/tunableop). ``line`` is where it was read (not
    part of equality: a dumped and re-read preset equals the original)."""

    kind: str  # "env" | "torch"
    key: str  # variable name, or a TORCH_SETTINGS key
    value: Any
    why: str = ""
    source: str = ""
    platforms: tuple[str, ...] = PLATFORMS
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Preset:
    """A named set of env items and torch items (see the format in presets.py)."""

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
    """What an item's effect depends on; None = not known. With ``gfx`` None an item whose
    effect depends on the GPU is assumed to apply, unchecked ("not checked: no AMD GPU
    detected"); with ``gfx`` None and a torch that is not a ROCm build it is a CPU-only
    machine, where GPU settings do nothing."""

    platform: str = "linux"  # "linux" | "windows"
    gfx: str | None = None  # e.g. "gfx1100"
    torch_version: str | None = None  # e.g. "2.13.0+rocm7.2"
    hip_version: str | None = None  # e.g. "7.2" (torch.version.hip major.minor)


@dataclass(frozen=True)
class Effect:
    item: Item
    applies: bool
    #: Why it does not apply, why it could not be checked, or a caution when it applies
    #: (may be unneeded; an HSA_OVERRIDE_GFX_VERSION naming another family is harmful).
    note: str = ""
    #: False when what the item's effect depends on is not known here (no AMD GPU
    #: detected, torch version unknown): ``applies`` is then a guess, shown "not checked".
    checked: bool = True


@dataclass(frozen=True)
class Problem:
    """A user preset file that could not be read; it is left where it is."""

    path: Path
    #: The whole sentence, starting with the file's path (print it alone, not after it).
    message: str


#: Unicode categories of characters that are not shown as written (controls, format
#: characters such as zero-width spaces and direction overrides, surrogates, separators).
UNSEEN_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")


def visible(text: str) -> str:
    """``text`` with each control or invisible character written as an escape (``\\x1b``,
    ``\\u202e``), for messages that echo what a file holds."""
    if all(unicodedata.category(char) not in UNSEEN_CATEGORIES for char in text):
        return text
    return "".join(
        (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
        if unicodedata.category(char) in UNSEEN_CATEGORIES
        else char
        for char in text
    )


def name_key(name: str) -> str:
    """What two preset names are compared by: NFKC-normalised and case-folded, so names
    that read the same ("Mine", "MINE", fullwidth "Ｍｉｎｅ") clash."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def join_path(path: str, key: str) -> str:
    """The field path of ``key`` below ``path`` ("env" + "HIP_X" -> "env.HIP_X")."""
    return f"{path}.{key}" if path else key


def words(choices: tuple[str, ...]) -> str:
    return ", ".join(choices)


# ---- torch settings' values ------------------------------------------------------------------


def torch_value(reader: Reader, key: str, node: yaml.Node, path: str) -> Any:
    """The checked value of the torch setting ``key`` (one of TORCH_SETTINGS)."""
    if key == "float32_matmul_precision":
        word = reader.text(node, path)
        if word not in MATMUL_PRECISIONS:
            raise reader.fail(node, path, f"unknown {word!r}; use {words(MATMUL_PRECISIONS)}")
        return word
    if key == "sdpa_backends":
        return reader.texts(node, path, SDPA_BACKENDS)
    if key == "memory_fraction":
        fraction = reader.number(node, path)
        if not 0 < fraction <= 1:
            raise reader.fail(
                node, path, f"must be above 0 and at most 1 (a share of GPU memory); got {fraction}"
            )
        return fraction
    if key == "cudnn_benchmark":
        return reader.boolean(node, path)
    if key == "cpu_threads":
        return reader.integer(node, path, 1, MAX_THREADS)
    if key == "alloc":
        return _alloc_value(reader, node, path)
    return _tunableop_value(reader, node, path)


def _alloc_value(reader: Reader, node: yaml.Node, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, key_node, value_node in reader.mapping(node, path, "allocator options"):
        here = join_path(path, name)
        if name == "expandable_segments":
            out[name] = reader.boolean(value_node, here)
        elif name == "garbage_collection_threshold":
            threshold = reader.number(value_node, here)
            if not 0 < threshold < 1:
                raise reader.fail(
                    value_node, here, f"must be between 0 and 1 (exclusive); got {threshold}"
                )
            out[name] = threshold
        elif name == "max_split_size_mb":
            out[name] = reader.integer(value_node, here, MIN_SPLIT_MB, None)
        else:
            raise reader.fail(key_node, here, f"unknown allocator option; use {words(ALLOC_KEYS)}")
    if not out:
        raise reader.fail(node, path, f"must set at least one of {words(ALLOC_KEYS)}")
    return dict(sorted(out.items()))


def _tunableop_value(reader: Reader, node: yaml.Node, path: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for name, key_node, value_node in reader.mapping(node, path, "enabled, tuning"):
        if name not in TUNABLEOP_KEYS:
            raise reader.fail(
                key_node,
                join_path(path, name),
                f"unknown TunableOp option; use {words(TUNABLEOP_KEYS)}",
            )
        out[name] = reader.boolean(value_node, join_path(path, name))
    if "enabled" not in out:
        raise reader.fail(node, join_path(path, "enabled"), "missing; say true or false")
    return {"enabled": out["enabled"], "tuning": out.get("tuning", True)}


# ---- dumping ---------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """``value`` with tuples as lists, for JSON and YAML (a preset holds tuples)."""
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def preset_data(preset: Preset) -> dict[str, Any]:
    """The preset as plain data in the long form (what :func:`dump_preset` writes)."""

    def item(entry: Item) -> dict[str, Any]:
        out: dict[str, Any] = {"value": plain(entry.value)}
        if entry.why:
            out["why"] = entry.why
        if entry.source:
            out["source"] = entry.source
        if entry.platforms != PLATFORMS:
            out["platforms"] = list(entry.platforms)
        return out

    data: dict[str, Any] = {"id": preset.id, "name": preset.name}
    if preset.description:
        data["description"] = preset.description
    data["archs"] = list(preset.archs)
    if preset.env:
        data["env"] = {entry.key: item(entry) for entry in preset.env}
    if preset.torch:
        data["torch"] = {entry.key: item(entry) for entry in preset.torch}
    return data


def dump_preset(preset: Preset) -> str:
    """YAML text that :func:`parse_preset` reads back to an equal preset (builtin/path aside)."""
    return yaml.safe_dump(
        preset_data(preset),
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
