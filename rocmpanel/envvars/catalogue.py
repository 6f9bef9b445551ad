"""The environment variables rocmpanel knows (resources/env_catalogue.yaml) and value checks.

Every value is checked here before any store writes it: a known variable against its
format (``11.0`` for HSA_OVERRIDE_GFX_VERSION is refused with the reason), an unknown one
as a plain string. Some checks hold for every variable because every store must be able to
keep the value safely (no newline, no shell command substitution).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from rocmpanel.base.errors import PanelError
from rocmpanel.base.resources import read_resource
from rocmpanel.envvars import formats as env_formats
from rocmpanel.envvars.checks import (
    MAX_VALUE_CHARS,
    NAME_RE,
    Status,
    Verdict,
    check_format,
    current_platform,
    gfx_target_for_override,
    list_separator,
)

__all__ = [
    "NAME_RE",
    "Catalogue",
    "Status",
    "VariableInfo",
    "Verdict",
    "current_platform",
    "gfx_target_for_override",
    "list_separator",
    "load_catalogue",
    "parse_catalogue",
]


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
        verdict = check_format(info, name, value, platform)
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
    return read_resource("env_catalogue.yaml")


@functools.lru_cache(maxsize=1)
def load_catalogue() -> Catalogue:
    """The catalogue shipped with rocmpanel (loaded once)."""
    try:
        return parse_catalogue(_catalogue_text())
    except OSError as exc:
        raise PanelError("The environment-variable catalogue is missing.", str(exc)) from exc
