"""The preset file format: data types, validation with file/line/field errors, and dumping.

Re-exported by :mod:`rocmpanel.jobs.presets` (import from there). The YAML is composed into
nodes (``yaml.compose`` with the safe loader) rather than loaded into Python objects, so
every error can say the line it is on, and a key written twice in one mapping is caught
(``yaml.safe_load`` silently keeps the last one).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import CONFIG_LIMIT, NotRegularFileError, TooLargeError, read_bytes
from rocmpanel.base.files import size_text as _size_text

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

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"


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


_UNSEEN = ("Cc", "Cf", "Cs", "Zl", "Zp")


def visible(text: str) -> str:
    """``text`` with each control or invisible character written as an escape (``\\x1b``,
    ``\\u202e``), for messages that echo what a file holds."""
    if all(unicodedata.category(char) not in _UNSEEN for char in text):
        return text
    return "".join(
        (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
        if unicodedata.category(char) in _UNSEEN
        else char
        for char in text
    )


def name_key(name: str) -> str:
    """What two preset names are compared by: NFKC-normalised and case-folded, so names
    that read the same ("Mine", "MINE", fullwidth "Ｍｉｎｅ") clash."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


#: Control characters a multi-line text may hold (a description's line breaks and tabs).
_LAYOUT = frozenset("\n\t")


def _unseen(value: str, allowed: frozenset[str]) -> str | None:
    """Why ``value`` is refused for holding a character that is not shown as written (a
    control character such as ESC, which a terminal obeys; a format character such as a
    zero-width space or a right-to-left override, which hides or reorders text), or None."""
    for char in value:
        if char in allowed:
            continue
        category = unicodedata.category(char)
        if category in _UNSEEN:
            label = unicodedata.name(char, "")
            shown = f"U+{ord(char):04X}" + (f" ({label})" if label else "")
            kind = "a control character" if category == "Cc" else "an invisible character"
            return (
                f"holds {kind}, {shown}, which is not shown as written and can hide or "
                "change what the text says; remove it"
            )
    return None


# ---- reading nodes ---------------------------------------------------------------------------


class _Reader:
    """Turns the composed nodes of one file into checked values; every error names the
    file, the node's line and the field path."""

    def __init__(self, file: str, builtin: bool) -> None:
        self.file = file
        self.builtin = builtin
        self._loader = yaml.SafeLoader("")

    def fail(self, node: yaml.Node | None, path: str, problem: str) -> PresetError:
        line = node.start_mark.line + 1 if node is not None else None
        return PresetError(self.file, line, path, problem)

    def scalar(self, node: yaml.Node) -> Any:
        return self._loader.construct_object(node, deep=True)

    def mapping(
        self, node: yaml.Node, path: str, what: str
    ) -> list[tuple[str, yaml.Node, yaml.Node]]:
        """(key, key node, value node) of a mapping; keys must be plain text, once each."""
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, path, f"must be a mapping of {what}; got {_kind(node)}")
        seen: dict[str, int] = {}
        pairs: list[tuple[str, yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail(
                    key_node, path or "preset", f"a key must be plain text; got {_kind(key_node)}"
                )
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise self.fail(
                    key_node,
                    _join(path, key),
                    f"written twice in one mapping (lines {seen[key]} and {line}); keep one",
                )
            seen[key] = line
            pairs.append((key, key_node, value_node))
        return pairs

    def text(
        self,
        node: yaml.Node,
        path: str,
        *,
        limit: int = TEXT_MAX,
        allowed: frozenset[str] = frozenset(),
    ) -> str:
        """A text scalar; refuses control and invisible characters except ``allowed``."""
        if not isinstance(node, yaml.ScalarNode) or node.tag != _STR:
            raise self.fail(node, path, f"must be text; got {_kind(node)}")
        value = str(node.value)
        if len(value) > limit:
            raise self.fail(node, path, f"is {len(value):,} characters long; at most {limit:,}")
        refused = _unseen(value, allowed)
        if refused is not None:
            raise self.fail(node, path, refused)
        return value

    def texts(self, node: yaml.Node, path: str, choices: tuple[str, ...]) -> tuple[str, ...]:
        """A list of distinct words from ``choices`` (one word alone is a list of one)."""
        nodes = [node] if isinstance(node, yaml.ScalarNode) else None
        if isinstance(node, yaml.SequenceNode):
            nodes = list(node.value)
        if nodes is None:
            raise self.fail(node, path, f"must be a list of {_words(choices)}; got {_kind(node)}")
        if not nodes:
            raise self.fail(node, path, f"must not be empty: list one or more of {_words(choices)}")
        out: list[str] = []
        for index, entry in enumerate(nodes):
            here = f"{path}[{index}]" if isinstance(node, yaml.SequenceNode) else path
            word = self.text(entry, here)
            if word not in choices:
                raise self.fail(entry, here, f"unknown {word!r}; use {_words(choices)}")
            if word in out:
                raise self.fail(entry, here, f"{word!r} is listed twice")
            out.append(word)
        return tuple(out)

    def boolean(self, node: yaml.Node, path: str) -> bool:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _BOOL:
            raise self.fail(node, path, f"must be true or false; got {_shown(node)}")
        return bool(self.scalar(node))

    def integer(self, node: yaml.Node, path: str, low: int, high: int | None) -> int:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _INT:
            raise self.fail(node, path, f"must be a whole number; got {_shown(node)}")
        value = int(self.scalar(node))
        if high is None and value < low:
            raise self.fail(node, path, f"must be at least {low}; got {value}")
        if high is not None and not low <= value <= high:
            raise self.fail(node, path, f"must be from {low} to {high}; got {value}")
        return value

    def number(self, node: yaml.Node, path: str) -> float:
        if not isinstance(node, yaml.ScalarNode) or node.tag not in (_INT, _FLOAT):
            raise self.fail(node, path, f"must be a number; got {_shown(node)}{_as_number(node)}")
        value = float(self.scalar(node))
        if not math.isfinite(value):
            raise self.fail(node, path, f"must be a finite number; got {node.value}")
        return value


def _as_number(node: yaml.Node) -> str:
    """A hint for a number YAML read as text: YAML 1.1 reads ``1e-3`` (no dot, no sign
    in the exponent) and quoted numbers as text, so say how to write it."""
    if not isinstance(node, yaml.ScalarNode) or node.tag != _STR:
        return ""
    try:
        number = Decimal(str(node.value).strip())
    except (InvalidOperation, ValueError):
        return ""
    if not number.is_finite():
        return ""
    return f"; write it as {number:f}"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _words(choices: tuple[str, ...]) -> str:
    return ", ".join(choices)


def _kind(node: yaml.Node | None) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if node is None or node.tag == "tag:yaml.org,2002:null":
        return "nothing"
    if node.tag == _STR:
        return "text"
    if node.tag == _BOOL:
        return f"the boolean {node.value}"
    if node.tag in (_INT, _FLOAT):
        return f"the number {node.value}"
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    return f"a value tagged {tag}"


def _shown(node: yaml.Node) -> str:
    if isinstance(node, yaml.ScalarNode) and node.tag == _STR:
        return f"the text {node.value!r}"
    return _kind(node)


# ---- the schema ------------------------------------------------------------------------------


def _preset(reader: _Reader, node: yaml.Node, prefix: str) -> Preset:
    if not isinstance(node, yaml.MappingNode):
        raise reader.fail(
            node,
            prefix or "preset",
            f"a preset must be a mapping with at least id and name; got {_kind(node)}",
        )
    fields: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key, key_node, value_node in reader.mapping(node, prefix, "fields"):
        if key not in TOP_KEYS:
            raise reader.fail(
                key_node, _join(prefix, key), f"unknown field; a preset has {_words(TOP_KEYS)}"
            )
        fields[key] = (key_node, value_node)
    for required in ("id", "name"):
        if required not in fields:
            raise reader.fail(node, _join(prefix, required), "missing; every preset needs one")
    id_node = fields["id"][1]
    ident = reader.text(id_node, _join(prefix, "id"), limit=ID_MAX)
    if ID_RE.fullmatch(ident) is None:
        raise reader.fail(
            id_node,
            _join(prefix, "id"),
            f"{ident!r} is not a usable id: use lower-case letters, digits and -, starting "
            "with a letter or digit",
        )
    if ident == NO_PRESET:
        raise reader.fail(
            id_node, _join(prefix, "id"), f"{NO_PRESET!r} means 'no preset'; choose another id"
        )
    if ident in RESERVED_IDS:
        raise reader.fail(
            id_node,
            _join(prefix, "id"),
            f"{ident!r} is a device name on Windows (like CON, NUL, COM1 and LPT1), so "
            f"{ident}.yaml cannot be a file there; choose another id",
        )
    name_node = fields["name"][1]
    name = reader.text(
        name_node, _join(prefix, "name"), limit=NAME_MAX, allowed=frozenset("\n")
    ).strip()
    if not name or "\n" in name:
        raise reader.fail(name_node, _join(prefix, "name"), "must be one non-empty line of text")
    description = ""
    if "description" in fields:
        description = reader.text(
            fields["description"][1], _join(prefix, "description"), allowed=_LAYOUT
        ).strip()
    archs: tuple[str, ...] = ("any",)
    if "archs" in fields:
        archs_node = fields["archs"][1]
        archs = reader.texts(archs_node, _join(prefix, "archs"), ARCHS)
        if "any" in archs and len(archs) > 1:
            raise reader.fail(
                archs_node, _join(prefix, "archs"), "'any' already covers every architecture"
            )
    env: tuple[Item, ...] = ()
    if "env" in fields and not _is_null(fields["env"][1]):
        env = _env_items(reader, fields["env"][1], _join(prefix, "env"))
    torch: tuple[Item, ...] = ()
    if "torch" in fields and not _is_null(fields["torch"][1]):
        torch = _torch_items(reader, fields["torch"][1], _join(prefix, "torch"))
    return Preset(
        id=ident,
        name=name,
        description=description,
        archs=archs,
        env=env,
        torch=torch,
        builtin=reader.builtin,
    )


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _item_parts(
    reader: _Reader, key_node: yaml.Node, node: yaml.Node, path: str
) -> tuple[yaml.Node, str, str, tuple[str, ...]]:
    """(value node, why, source, platforms) of a long (mapping with ``value``) or short item."""
    long_form = isinstance(node, yaml.MappingNode) and any(
        isinstance(k, yaml.ScalarNode) and k.value in ITEM_KEYS for k, _ in node.value
    )
    if not long_form:
        if reader.builtin:
            raise reader.fail(
                key_node, path, "a built-in item is written long: value, why and source"
            )
        return node, "", "", PLATFORMS
    parts: dict[str, yaml.Node] = {}
    for name, name_node, value_node in reader.mapping(node, path, "value, why, source"):
        if name not in ITEM_KEYS:
            raise reader.fail(
                name_node, _join(path, name), f"unknown field; an item has {_words(ITEM_KEYS)}"
            )
        parts[name] = value_node
    if "value" not in parts:
        raise reader.fail(node, _join(path, "value"), "missing; the item needs a value")
    why = ""
    if "why" in parts:
        why = reader.text(parts["why"], _join(path, "why"), allowed=_LAYOUT).strip()
    source = ""
    if "source" in parts:
        source = reader.text(parts["source"], _join(path, "source"), allowed=_LAYOUT).strip()
    if reader.builtin:
        for label, text in (("why", why), ("source", source)):
            if not text:
                raise reader.fail(
                    parts.get(label, node), _join(path, label), "a built-in item needs one"
                )
    platforms = PLATFORMS
    if "platforms" in parts:
        platforms = reader.texts(parts["platforms"], _join(path, "platforms"), PLATFORMS)
        platforms = tuple(p for p in PLATFORMS if p in platforms)
    return parts["value"], why, source, platforms


def _env_items(reader: _Reader, node: yaml.Node, path: str) -> tuple[Item, ...]:
    from rocmpanel.envvars.catalogue import NAME_RE, Status, load_catalogue

    catalogue = load_catalogue()
    items = []
    for name, key_node, value_node in reader.mapping(node, path, "variable names"):
        here = _join(path, name)
        if NAME_RE.fullmatch(name) is None:
            raise reader.fail(
                key_node,
                here,
                "not a usable variable name: use letters, digits and _, not starting with a digit",
            )
        if name in ALLOC_VARS:
            raise reader.fail(
                key_node,
                here,
                "set the allocator through the `alloc` torch setting; the worker writes it to "
                "the variable name its torch reads",
            )
        if name == HEADER_VAR or name.startswith("ROCMPANEL_"):
            raise reader.fail(key_node, here, "rocmpanel sets this variable itself")
        if name.startswith("PYTHON"):
            # The job layer sets PYTHONUNBUFFERED and PYTHONIOENCODING and clears
            # PYTHONPATH (jobs/spec.py); PYTHONHOME=/nonexistent stops the interpreter.
            raise reader.fail(
                key_node,
                here,
                "the panel sets the worker's Python variables itself; a preset that changes "
                "them can stop every job",
            )
        if name in catalogue.dangerous:
            raise reader.fail(
                key_node,
                here,
                f"a preset may not set {name}: {catalogue.dangerous[name].breaks}",
            )
        value_at, why, source, platforms = _item_parts(reader, key_node, value_node, here)
        value_path = _join(here, "value") if value_at is not value_node else here
        if not isinstance(value_at, yaml.ScalarNode) or value_at.tag != _STR:
            shown = value_at.value if isinstance(value_at, yaml.ScalarNode) else None
            hint = f': write "{shown}" in quotes' if shown not in (None, "", "~", "null") else ""
            raise reader.fail(
                value_at,
                value_path,
                f"an environment value must be text, got {_kind(value_at)}{hint}",
            )
        value = str(value_at.value)
        if value == "":
            why_empty = (
                "set but empty, it hides every GPU; leave the variable out instead"
                if name in VISIBLE_VARS
                else "an empty value is not the same as an unset one; leave the variable out"
            )
            raise reader.fail(value_at, value_path, why_empty)
        for platform in platforms:
            verdict = catalogue.validate(name, value, platform)
            if verdict.status is Status.INVALID:
                raise reader.fail(value_at, value_path, verdict.message)
        items.append(
            Item("env", name, value, why, source, platforms, line=key_node.start_mark.line + 1)
        )
    return tuple(items)


def _torch_items(reader: _Reader, node: yaml.Node, path: str) -> tuple[Item, ...]:
    items = []
    for key, key_node, value_node in reader.mapping(node, path, "torch settings"):
        here = _join(path, key)
        if key not in TORCH_SETTINGS:
            raise reader.fail(
                key_node, here, f"unknown torch setting; use {_words(TORCH_SETTINGS)}"
            )
        value_at, why, source, platforms = _item_parts(reader, key_node, value_node, here)
        value_path = _join(here, "value") if value_at is not value_node else here
        value = _torch_value(reader, key, value_at, value_path)
        items.append(
            Item("torch", key, value, why, source, platforms, line=key_node.start_mark.line + 1)
        )
    return tuple(items)


def _torch_value(reader: _Reader, key: str, node: yaml.Node, path: str) -> Any:
    if key == "float32_matmul_precision":
        word = reader.text(node, path)
        if word not in MATMUL_PRECISIONS:
            raise reader.fail(node, path, f"unknown {word!r}; use {_words(MATMUL_PRECISIONS)}")
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


def _alloc_value(reader: _Reader, node: yaml.Node, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, key_node, value_node in reader.mapping(node, path, "allocator options"):
        here = _join(path, name)
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
            raise reader.fail(key_node, here, f"unknown allocator option; use {_words(ALLOC_KEYS)}")
    if not out:
        raise reader.fail(node, path, f"must set at least one of {_words(ALLOC_KEYS)}")
    return dict(sorted(out.items()))


def _tunableop_value(reader: _Reader, node: yaml.Node, path: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for name, key_node, value_node in reader.mapping(node, path, "enabled, tuning"):
        if name not in TUNABLEOP_KEYS:
            raise reader.fail(
                key_node,
                _join(path, name),
                f"unknown TunableOp option; use {_words(TUNABLEOP_KEYS)}",
            )
        out[name] = reader.boolean(value_node, _join(path, name))
    if "enabled" not in out:
        raise reader.fail(node, _join(path, "enabled"), "missing; say true or false")
    return {"enabled": out["enabled"], "tuning": out.get("tuning", True)}


# ---- entry points ----------------------------------------------------------------------------


class _TooDeep(Exception):
    """A node nested deeper than MAX_DEPTH; ``line`` is where (1-based)."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _DepthLoader(yaml.SafeLoader):
    """The safe loader, stopping at MAX_DEPTH levels of nesting (its composer recurses
    once per level: a file of 1,000 brackets would otherwise raise RecursionError)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise _TooDeep(event.start_mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_TOO_DEEP = "nests too deeply to be a preset"


def _compose(text: str, file: str) -> yaml.Node | None:
    if len(text) > CONFIG_LIMIT:
        raise PresetError(file, None, "file", f"is larger than {_size_text(CONFIG_LIMIT)}")
    try:
        return yaml.compose(text, Loader=_DepthLoader)
    except _TooDeep as exc:
        raise PresetError(
            file,
            exc.line,
            "file",
            f"{_TOO_DEEP} (more than {MAX_DEPTH} levels of lists and mappings)",
        ) from None
    except RecursionError:
        # Only when called with little stack left: the depth limit comes first otherwise.
        raise PresetError(file, None, "file", _TOO_DEEP) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or "not valid YAML"
        raise PresetError(file, line, "file", f"not valid YAML: {problem}") from exc
    except yaml.YAMLError as exc:
        raise PresetError(file, None, "file", f"not valid YAML: {exc}") from exc


def parse_preset(text: str, file: str, *, builtin: bool = False) -> Preset:
    """Parse and validate one preset; PresetError names file, line and field."""
    node = _compose(text, file)
    if node is None or _is_null(node):
        raise PresetError(file, None, "file", "is empty; a preset needs at least id and name")
    try:
        return _preset(_Reader(file, builtin), node, "")
    except RecursionError:  # the composed tree is at most MAX_DEPTH deep; a safety net
        raise PresetError(file, None, "file", _TOO_DEEP) from None


def parse_preset_list(text: str, file: str, *, builtin: bool = False) -> tuple[Preset, ...]:
    """A YAML list of presets (resources/presets.yaml); ids and names must be unique."""
    node = _compose(text, file)
    reader = _Reader(file, builtin)
    if not isinstance(node, yaml.SequenceNode):
        raise reader.fail(node, "presets", f"must be a list of presets; got {_kind(node)}")
    presets: list[Preset] = []
    for index, entry in enumerate(node.value):
        preset = _preset(reader, entry, f"presets[{index}]")
        for other in presets:
            if other.id == preset.id or name_key(other.name) == name_key(preset.name):
                raise reader.fail(
                    entry, f"presets[{index}]", f"id or name clashes with {other.id!r}"
                )
        presets.append(preset)
    return tuple(presets)


def read_preset_file(path: Path, *, builtin: bool = False) -> Preset:
    """Read and parse a preset file (bounded read; regular files only)."""
    file = str(path)
    try:
        data = read_bytes(path, CONFIG_LIMIT)
    except NotRegularFileError as exc:
        raise PresetError(file, None, "file", "is not a regular file; it is not read") from exc
    except TooLargeError as exc:
        raise PresetError(file, None, "file", f"is larger than {_size_text(CONFIG_LIMIT)}") from exc
    except OSError as exc:
        raise PresetError(file, None, "file", f"cannot be read: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PresetError(file, line, "file", "is not UTF-8 text; save it as UTF-8") from exc
    preset = parse_preset(text, file, builtin=builtin)
    return Preset(**{**_fields(preset), "path": path})


def _fields(preset: Preset) -> dict[str, Any]:
    return {name: getattr(preset, name) for name in preset.__dataclass_fields__}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def preset_data(preset: Preset) -> dict[str, Any]:
    """The preset as plain data in the long form (what :func:`dump_preset` writes)."""

    def item(entry: Item) -> dict[str, Any]:
        out: dict[str, Any] = {"value": _plain(entry.value)}
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
