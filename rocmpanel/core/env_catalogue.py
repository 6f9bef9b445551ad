"""The environment variables rocmpanel knows (resources/env_catalogue.yaml) and value checks.

Every value is checked here before any store writes it: a known variable against its
format (``11.0`` for HSA_OVERRIDE_GFX_VERSION is refused with the reason), an unknown one
as a plain string. Some checks hold for every variable because every store must be able to
keep the value safely (no newline, no shell command substitution).
"""

from __future__ import annotations

import enum
import functools
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

import yaml

from rocmpanel.core import env_formats
from rocmpanel.core.errors import PanelError

# The Windows limit for one environment variable; a longer value is refused everywhere
# rather than silently cut.
MAX_VALUE_CHARS = 32_767
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
GFX_VERSION_RE = re.compile(r"^([0-9]+)\.([0-9]+)\.([0-9]+)$")
DEVICE_INDEX_RE = re.compile(r"^[0-9]+$")
DEVICE_UUID_RE = re.compile(r"^GPU-[0-9A-Fa-f-]+$")
ALLOC_KEYS = {
    "max_split_size_mb",
    "garbage_collection_threshold",
    "expandable_segments",
    "backend",
    "roundup_power2_divisions",
    "max_non_split_rounding_mb",
    "release_lock_on_cudamalloc",
    "release_lock_on_hipmalloc",
    "pinned_use_cuda_host_register",
    "pinned_use_hip_host_register",
    "pinned_num_register_threads",
    "pinned_use_background_threads",
    "graph_capture_record_stream_reuse",
    "per_process_memory_fraction",
}


class Status(enum.Enum):
    """How a value fares against the catalogue."""

    VALID = "valid"
    WARNING = "warning"
    INVALID = "invalid"
    UNKNOWN = "unknown"  # not in the catalogue: any safe string is accepted


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check; ``message`` says why (empty when there is nothing to say)."""

    status: Status
    message: str = ""

    @property
    def accepted(self) -> bool:
        return self.status is not Status.INVALID


@dataclass(frozen=True)
class VariableInfo:
    """One catalogue entry (see the header of resources/env_catalogue.yaml)."""

    name: str
    meaning: str
    kind: str
    platforms: tuple[str, ...]
    reader: str
    before_torch: bool
    sources: tuple[str, ...]
    status: str
    name_pattern: str | None = None
    empty_refused: bool = False
    empty_reason: str = ""
    choices: tuple[str, ...] = ()
    case_insensitive: bool = False
    minimum: int | None = None
    maximum: int | None = None
    exact: str | None = None
    warn: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_list(self) -> bool:
        """PATH-like: edited as a list of entries."""
        return self.kind == "path_list"

    def matches(self, name: str) -> bool:
        if self.name_pattern is not None:
            return re.fullmatch(self.name_pattern, name) is not None
        return name == self.name

    def format_hint(self) -> str:
        """The accepted values in a few words."""
        hints = {
            "gfx_version": "MAJOR.MINOR.STEP, three decimal numbers (10.3.0 = gfx1030)",
            "path": "a folder",
            "path_list": "a list of folders",
            "device_list": "comma list of device indices (or GPU-<uuid>)",
            "alloc_conf": "key:value pairs separated by commas",
            "string": "any text",
        }
        if self.kind == "choices":
            return "one of " + ", ".join(self.choices)
        if self.kind == "int":
            return f"a whole number from {self.minimum} to {self.maximum}"
        if self.kind == "exact":
            return f"exactly {self.exact}"
        return hints.get(self.kind, self.kind)


def current_platform() -> str:
    return "windows" if sys.platform == "win32" else "linux"


def list_separator(platform: str) -> str:
    return ";" if platform == "windows" else ":"


def gfx_target_for_override(value: str) -> str | None:
    """``10.3.0`` -> ``gfx1030``, ``9.0.10`` -> ``gfx90a``; None when not MAJOR.MINOR.STEP."""
    match = GFX_VERSION_RE.fullmatch(value)
    if match is None:
        return None
    major, minor, step = (int(part) for part in match.groups())
    return f"gfx{major}{minor:x}{step:x}"


class Catalogue:
    """The loaded catalogue: lookup by name and validation of values."""

    def __init__(self, variables: tuple[VariableInfo, ...], sources: Mapping[str, str]) -> None:
        self.variables = variables
        self.sources = dict(sources)

    def lookup(self, name: str) -> VariableInfo | None:
        for info in self.variables:
            if info.matches(name):
                return info
        return None

    def known_names(self) -> tuple[str, ...]:
        return tuple(info.name for info in self.variables if info.name_pattern is None)

    def describe(self, name: str) -> str:
        """A paragraph for tooltips and ``rocmpanel env get``."""
        info = self.lookup(name)
        if info is None:
            return f"{name} is not in rocmpanel's catalogue: it is kept as plain text."
        where = ", ".join(p.capitalize() for p in info.platforms)
        when = (
            "Read once at start-up: it must be in a program's environment when it starts "
            "(for Python, before `import torch`)."
            if info.before_torch
            else "Read when a tool needs it (not a PyTorch runtime switch)."
        )
        refs = "; ".join(self.sources.get(key, key) for key in info.sources)
        return (
            f"{info.meaning}\nFormat: {info.format_hint()}.\nPlatforms: {where}. Read by: "
            f"{info.reader}.\n{when}\nSource ({info.status}): {refs}"
        )

    def validate(self, name: str, value: str, platform: str | None = None) -> Verdict:
        """Check ``value`` for ``name``; INVALID verdicts must never reach a store."""
        platform = platform or current_platform()
        if NAME_RE.fullmatch(name) is None:
            return Verdict(
                Status.INVALID,
                f"{name!r} is not a usable variable name: use letters, digits and _ "
                "and do not start with a digit.",
            )
        problem = env_formats.unsafe_value_reason(value)
        if problem is not None:
            return Verdict(Status.INVALID, f"{name}: {problem}")
        if len(value) > MAX_VALUE_CHARS:
            return Verdict(
                Status.INVALID,
                f"{name} is {len(value):,} characters long; one variable may hold at most "
                f"{MAX_VALUE_CHARS:,} (the Windows limit), and rocmpanel never cuts a value.",
            )
        info = self.lookup(name)
        if info is None:
            return Verdict(Status.UNKNOWN, "Not in the catalogue: kept as plain text.")
        verdict = _check_format(info, name, value, platform)
        if verdict.status is Status.INVALID:
            return verdict
        notes = [verdict.message] if verdict.message else []
        warning = verdict.status is Status.WARNING
        if value in info.warn:
            notes.append(info.warn[value])
            warning = True
        if platform not in info.platforms:
            only = " and ".join(p.capitalize() for p in info.platforms)
            notes.append(f"{name} is read on {only} only: it does nothing on {platform.title()}.")
            warning = True
        return Verdict(Status.WARNING if warning else Status.VALID, " ".join(notes))


def _check_format(info: VariableInfo, name: str, value: str, platform: str) -> Verdict:
    if value == "" and info.empty_refused:
        return Verdict(
            Status.INVALID,
            f"An empty {name} is not the same as an unset one: {info.empty_reason}. "
            "Unset the variable instead.",
        )
    kind = info.kind
    if kind == "gfx_version":
        return _check_gfx_version(name, value)
    if kind == "choices":
        given = value.upper() if info.case_insensitive else value
        allowed = [c.upper() if info.case_insensitive else c for c in info.choices]
        if given not in allowed:
            return Verdict(
                Status.INVALID, f"{name} must be one of {', '.join(info.choices)}; got {value!r}."
            )
        return Verdict(Status.VALID)
    if kind == "int":
        if not value.isdigit() or not value.isascii():
            return Verdict(Status.INVALID, f"{name} must be a whole number; got {value!r}.")
        number = int(value)
        low, high = info.minimum, info.maximum
        if (low is not None and number < low) or (high is not None and number > high):
            return Verdict(Status.INVALID, f"{name} must be from {low} to {high}; got {number}.")
        return Verdict(Status.VALID)
    if kind == "exact":
        if value != info.exact:
            return Verdict(
                Status.INVALID, f"{name} must be exactly {info.exact!r} (not {value!r})."
            )
        return Verdict(Status.VALID)
    if kind == "device_list":
        return _check_device_list(name, value)
    if kind == "alloc_conf":
        return _check_alloc_conf(name, value)
    if kind == "path":
        return _check_path(name, value, platform)
    if kind == "path_list":
        return _check_path_list(name, value, platform)
    return Verdict(Status.VALID)


def _check_gfx_version(name: str, value: str) -> Verdict:
    match = GFX_VERSION_RE.fullmatch(value)
    if match is None:
        parts = len(value.split("."))
        shape = f"{value!r} has {parts} part{'s' if parts != 1 else ''}" if value else "it is empty"
        return Verdict(
            Status.INVALID,
            f"{name} must be MAJOR.MINOR.STEP, three decimal numbers such as 11.0.0 (gfx1100) "
            f"or 10.3.0 (gfx1030); {shape}. The ROCm runtime rejects any other form as "
            "invalid and then finds no GPU.",
        )
    major, minor, step = (int(part) for part in match.groups())
    if major > 63 or minor > 255 or step > 255:
        return Verdict(
            Status.INVALID,
            f"{name} {value!r} is out of range (MAJOR at most 63, MINOR and STEP at most 255); "
            "the ROCm runtime rejects it.",
        )
    return Verdict(Status.VALID, f"Makes the runtime report {gfx_target_for_override(value)}.")


def _check_device_list(name: str, value: str) -> Verdict:
    if value in ("", "-1"):
        return Verdict(Status.VALID)
    seen: set[str] = set()
    for token in value.split(","):
        if not (DEVICE_INDEX_RE.fullmatch(token) or DEVICE_UUID_RE.fullmatch(token)):
            return Verdict(
                Status.INVALID,
                f"{name}: {token!r} is neither a device index nor GPU-<uuid>; the runtime "
                "ignores it and every device after it. Use commas without spaces, e.g. 0,1.",
            )
        if token in seen:
            return Verdict(
                Status.INVALID,
                f"{name} lists {token} twice; the runtime stops reading at a repeated entry.",
            )
        seen.add(token)
    return Verdict(Status.VALID)


def _split_alloc_pairs(value: str) -> list[str]:
    """Split on commas that are not inside [...] (roundup_power2_divisions takes a list)."""
    pairs, depth, start = [], 0, 0
    for index, char in enumerate(value):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            pairs.append(value[start:index])
            start = index + 1
    pairs.append(value[start:])
    return pairs


def _check_alloc_conf(name: str, value: str) -> Verdict:
    notes: list[str] = []
    for pair in _split_alloc_pairs(value):
        key, sep, setting = pair.partition(":")
        if not sep or not key or not setting:
            return Verdict(
                Status.INVALID,
                f"{name}: {pair!r} is not key:value (e.g. garbage_collection_threshold:0.8).",
            )
        problem = _alloc_value_problem(key, setting)
        if problem is not None:
            return Verdict(Status.INVALID, f"{name}: {problem}")
        if key not in ALLOC_KEYS:
            notes.append(
                f"{key!r} is not an allocator key rocmpanel knows; older torch stops with an "
                "error at the first GPU allocation on an unknown key."
            )
        if key == "expandable_segments" and setting == "True":
            notes.append(
                "expandable_segments is unsupported on ROCm up to torch 2.10 (a warning, then "
                "ignored); newer torch enables it on ROCm 7.0 and later."
            )
    return Verdict(Status.WARNING if notes else Status.VALID, " ".join(notes))


def _alloc_value_problem(key: str, setting: str) -> str | None:
    if key == "max_split_size_mb" and not (setting.isdigit() and int(setting) >= 20):
        return f"max_split_size_mb must be a whole number of MiB, at least 20; got {setting!r}."
    if key == "garbage_collection_threshold":
        try:
            fraction = float(setting)
        except ValueError:
            fraction = -1.0
        if not 0.0 < fraction < 1.0:
            return f"garbage_collection_threshold must be between 0 and 1; got {setting!r}."
    if key == "expandable_segments" and setting not in ("True", "False"):
        return f"expandable_segments must be True or False; got {setting!r}."
    if key == "backend" and setting not in ("native", "cudaMallocAsync", "hipMallocAsync"):
        return f"backend must be native, cudaMallocAsync or hipMallocAsync; got {setting!r}."
    return None


def _is_absolute(entry: str, platform: str) -> bool:
    if platform == "windows":
        return PureWindowsPath(entry).is_absolute() or entry.startswith("\\\\")
    return entry.startswith("/")


def _check_path(name: str, value: str, platform: str) -> Verdict:
    if value.startswith("~"):
        home = "%USERPROFILE%" if platform == "windows" else "$HOME"
        return Verdict(
            Status.INVALID,
            f"{name}: ~ is not expanded in environment files or the registry; write {home} "
            "instead.",
        )
    if value.startswith(("$", "%")):
        return Verdict(Status.VALID)
    if not _is_absolute(value, platform):
        return Verdict(
            Status.WARNING, f"{value!r} is relative: each program resolves it in its own folder."
        )
    if platform == current_platform() and not Path(value).exists():
        return Verdict(Status.WARNING, f"{value} does not exist on this computer.")
    return Verdict(Status.VALID)


def _check_path_list(name: str, value: str, platform: str) -> Verdict:
    entries = env_formats.split_list(value, list_separator(platform))
    notes: list[str] = []
    if "" in entries:
        notes.append(
            "An empty entry means the current folder, which lets any folder you are in "
            "supply programs or libraries."
        )
    if any(entry.startswith("~") for entry in entries):
        notes.append("Entries starting with ~ are not expanded outside a shell; use $HOME.")
    if name == "PATH" and platform == "linux" and not {"$PATH", "${PATH}"} & set(entries):
        notes.append("PATH does not include $PATH: the system folders would be lost.")
    return Verdict(Status.WARNING if notes else Status.VALID, " ".join(notes))


def _info_from_yaml(name: str, raw: Mapping[str, Any]) -> VariableInfo:
    fmt = raw.get("format") or {"kind": "string"}
    return VariableInfo(
        name=name,
        meaning=" ".join(str(raw.get("meaning", "")).split()),
        kind=str(fmt.get("kind", "string")),
        platforms=tuple(str(p) for p in raw.get("platforms", ("linux", "windows"))),
        reader=str(raw.get("reader", "")),
        before_torch=bool(raw.get("before_torch", False)),
        sources=tuple(str(s) for s in raw.get("src", ())),
        status=str(raw.get("status", "unverified")),
        name_pattern=raw.get("name_pattern"),
        empty_refused=raw.get("empty") == "refuse",
        empty_reason=str(raw.get("empty_reason", "")),
        choices=tuple(str(c) for c in fmt.get("choices", ())),
        case_insensitive=bool(fmt.get("case_insensitive", False)),
        minimum=fmt.get("minimum"),
        maximum=fmt.get("maximum"),
        exact=fmt.get("value"),
        warn={str(k): str(v) for k, v in (raw.get("warn") or {}).items()},
    )


def parse_catalogue(text: str) -> Catalogue:
    """Build a Catalogue from YAML text; PanelError when it is malformed."""
    try:
        data = yaml.safe_load(text)
        variables = tuple(_info_from_yaml(str(k), v) for k, v in data["variables"].items())
        sources = {str(k): str(v) for k, v in data.get("sources", {}).items()}
    except (yaml.YAMLError, KeyError, TypeError, AttributeError) as exc:
        raise PanelError("The environment-variable catalogue is damaged.", str(exc)) from exc
    return Catalogue(variables, sources)


def _catalogue_text() -> str:
    from importlib import resources

    try:
        return (
            resources.files("rocmpanel.resources")
            .joinpath("env_catalogue.yaml")
            .read_text(encoding="utf-8")
        )
    except ModuleNotFoundError:
        # A source checkout that was not installed: resources/ sits next to the package.
        root = Path(__file__).resolve().parents[2]
        return (root / "resources" / "env_catalogue.yaml").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def load_catalogue() -> Catalogue:
    """The catalogue shipped with rocmpanel (loaded once)."""
    try:
        return parse_catalogue(_catalogue_text())
    except OSError as exc:
        raise PanelError("The environment-variable catalogue is missing.", str(exc)) from exc


def process_value(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value in this process (None = not set)."""
    return (os.environ if environ is None else environ).get(name)
