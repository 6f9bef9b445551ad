"""Value checks behind the catalogue: one function per value format.

Pure string checks; they know the formats (gfx versions, device lists, allocator options,
paths, PATH-like lists) but not which variable has which format: that is the catalogue's
business (:mod:`rocmpanel.envvars.catalogue`).
"""

from __future__ import annotations

import enum
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import TYPE_CHECKING

from rocmpanel.base.i18n import translate
from rocmpanel.envvars import formats as env_formats

if TYPE_CHECKING:
    from rocmpanel.envvars.catalogue import VariableInfo

# The Windows limit for one environment variable; a longer value is refused everywhere
# rather than silently cut.
MAX_VALUE_CHARS = 32_767
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
GFX_VERSION_RE = re.compile(r"^([0-9]+)\.([0-9]+)\.([0-9]+)$")
DEVICE_INDEX_RE = re.compile(r"^[0-9]+$")
DEVICE_UUID_RE = re.compile(r"^GPU-[0-9A-Fa-f-]+$")
# Allocator keys of c10/cuda/CUDAAllocatorConfig.cpp (the HIP spellings are ROCm aliases);
# any other key only warns, because newer torch tolerates unknown keys.
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


def check_format(info: VariableInfo, name: str, value: str, platform: str) -> Verdict:
    if value == "" and info.empty_refused:
        return Verdict(
            Status.INVALID,
            translate(
                "checks",
                "An empty {name} is not the same as an unset one: {reason}. "
                "Unset the variable instead.",
            ).format(name=name, reason=info.empty_reason),
        )
    kind = info.kind
    if kind == "gfx_version":
        return _check_gfx_version(name, value)
    if kind == "choices":
        given = value.upper() if info.case_insensitive else value
        allowed = [c.upper() if info.case_insensitive else c for c in info.choices]
        if given not in allowed:
            return Verdict(
                Status.INVALID,
                translate("checks", "{name} must be one of {choices}; got {value}.").format(
                    name=name, choices=", ".join(info.choices), value=repr(value)
                ),
            )
        return Verdict(Status.VALID)
    if kind == "int":
        if not value.isdigit() or not value.isascii():
            return Verdict(
                Status.INVALID,
                translate("checks", "{name} must be a whole number; got {value}.").format(
                    name=name, value=repr(value)
                ),
            )
        number = int(value)
        low, high = info.minimum, info.maximum
        if (low is not None and number < low) or (high is not None and number > high):
            if high is None:
                bounds = translate("checks", "at least {low}").format(low=low)
            elif low is None:
                bounds = translate("checks", "at most {high}").format(high=high)
            else:
                bounds = translate("checks", "from {low} to {high}").format(low=low, high=high)
            return Verdict(
                Status.INVALID,
                translate("checks", "{name} must be {bounds}; got {number}.").format(
                    name=name, bounds=bounds, number=number
                ),
            )
        return Verdict(Status.VALID)
    if kind == "exact":
        if value != info.exact:
            return Verdict(
                Status.INVALID,
                translate("checks", "{name} must be exactly {exact} (not {value}).").format(
                    name=name, exact=repr(info.exact), value=repr(value)
                ),
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
        if not value:
            shape = translate("checks", "it is empty")
        elif parts == 1:
            shape = translate("checks", "{value} has 1 part").format(value=repr(value))
        else:
            shape = translate("checks", "{value} has {count} parts").format(
                value=repr(value), count=parts
            )
        return Verdict(
            Status.INVALID,
            translate(
                "checks",
                "{name} must be MAJOR.MINOR.STEP, three decimal numbers such as 11.0.0 (gfx1100) "
                "or 10.3.0 (gfx1030); {shape}. The ROCm runtime rejects any other form as "
                "invalid and then finds no GPU.",
            ).format(name=name, shape=shape),
        )
    major, minor, step = (int(part) for part in match.groups())
    if major > 63 or minor > 255 or step > 255:
        return Verdict(
            Status.INVALID,
            translate(
                "checks",
                "{name} {value} is out of range (MAJOR at most 63, MINOR and STEP at most 255); "
                "the ROCm runtime rejects it.",
            ).format(name=name, value=repr(value)),
        )
    return Verdict(
        Status.VALID,
        translate("checks", "Makes the runtime report {target}.").format(
            target=gfx_target_for_override(value)
        ),
    )


def _check_device_list(name: str, value: str) -> Verdict:
    if value in ("", "-1"):
        return Verdict(Status.VALID)
    seen: set[str] = set()
    for token in value.split(","):
        if not (DEVICE_INDEX_RE.fullmatch(token) or DEVICE_UUID_RE.fullmatch(token)):
            return Verdict(
                Status.INVALID,
                translate(
                    "checks",
                    "{name}: {token} is neither a device index nor GPU-<uuid>; the runtime "
                    "ignores it and every device after it. Use commas without spaces, e.g. 0,1.",
                ).format(name=name, token=repr(token)),
            )
        if token in seen:
            return Verdict(
                Status.INVALID,
                translate(
                    "checks",
                    "{name} lists {token} twice; the runtime stops reading at a repeated entry.",
                ).format(name=name, token=token),
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
                translate(
                    "checks",
                    "{name}: {pair} is not key:value (e.g. garbage_collection_threshold:0.8).",
                ).format(name=name, pair=repr(pair)),
            )
        problem = _alloc_value_problem(key, setting)
        if problem is not None:
            return Verdict(Status.INVALID, f"{name}: {problem}")
        if key not in ALLOC_KEYS:
            notes.append(
                translate(
                    "checks",
                    "{key} is not an allocator key rocmpanel knows; older torch stops with an "
                    "error at the first GPU allocation on an unknown key.",
                ).format(key=repr(key))
            )
        if key == "expandable_segments" and setting == "True":
            notes.append(
                translate(
                    "checks",
                    "expandable_segments is unsupported on ROCm up to torch 2.10 (a warning, then "
                    "ignored); newer torch enables it on ROCm 7.0 and later.",
                )
            )
    return Verdict(Status.WARNING if notes else Status.VALID, " ".join(notes))


def _alloc_value_problem(key: str, setting: str) -> str | None:
    if key == "max_split_size_mb" and not (setting.isdigit() and int(setting) >= 20):
        return translate(
            "checks", "max_split_size_mb must be a whole number of MiB, at least 20; got {value}."
        ).format(value=repr(setting))
    if key == "garbage_collection_threshold":
        try:
            fraction = float(setting)
        except ValueError:
            fraction = -1.0
        if not 0.0 < fraction < 1.0:
            return translate(
                "checks", "garbage_collection_threshold must be between 0 and 1; got {value}."
            ).format(value=repr(setting))
    if key == "expandable_segments" and setting not in ("True", "False"):
        return translate(
            "checks", "expandable_segments must be True or False; got {value}."
        ).format(value=repr(setting))
    if key == "backend" and setting not in ("native", "cudaMallocAsync", "hipMallocAsync"):
        return translate(
            "checks", "backend must be native, cudaMallocAsync or hipMallocAsync; got {value}."
        ).format(value=repr(setting))
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
            translate(
                "checks",
                "{name}: ~ is not expanded in environment files or the registry; write {home} "
                "instead.",
            ).format(name=name, home=home),
        )
    if value.startswith(("$", "%")):
        return Verdict(Status.VALID)
    if not _is_absolute(value, platform):
        return Verdict(
            Status.WARNING,
            translate(
                "checks", "{value} is relative: each program resolves it in its own folder."
            ).format(value=repr(value)),
        )
    if platform == current_platform() and not Path(value).exists():
        return Verdict(
            Status.WARNING,
            translate("checks", "{value} does not exist on this computer.").format(value=value),
        )
    return Verdict(Status.VALID)


def _check_path_list(name: str, value: str, platform: str) -> Verdict:
    entries = env_formats.split_list(value, list_separator(platform))
    notes: list[str] = []
    if "" in entries:
        notes.append(
            translate(
                "checks",
                "An empty entry means the current folder, which lets any folder you are in "
                "supply programs or libraries.",
            )
        )
    if any(entry.startswith("~") for entry in entries):
        notes.append(
            translate(
                "checks", "Entries starting with ~ are not expanded outside a shell; use $HOME."
            )
        )
    if name == "PATH" and platform == "linux" and not {"$PATH", "${PATH}"} & set(entries):
        notes.append(
            translate("checks", "PATH does not include $PATH: the system folders would be lost.")
        )
    return Verdict(Status.WARNING if notes else Status.VALID, " ".join(notes))
