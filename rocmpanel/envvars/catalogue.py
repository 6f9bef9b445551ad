"""The environment variables rocmpanel knows (resources/env_catalogue.yaml) and value checks.

Every value is checked here before any store writes it: a known variable against its
format (``11.0`` for HSA_OVERRIDE_GFX_VERSION is refused with the reason), an unknown one
as a plain string. Some checks hold for every variable because every store must be able to
keep the value safely (no newline, no shell command substitution), and on Linux a path or
PATH-like value may use ``$`` only for ``$NAME`` / ``${NAME}`` references (every other value
is stored literally: see ``formats``).

Entries can also carry a standing ``caution`` (shown with the description; the caller that
knows the machine decides when it applies, e.g. an override for a GPU with native kernels)
and a ``torch`` range saying for which torch releases the name is the one to use, where
PyTorch renamed a variable (the allocator options: :meth:`Catalogue.alloc_conf_name`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
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
    "Danger",
    "Status",
    "VariableInfo",
    "Verdict",
    "current_platform",
    "empty_value_refusal",
    "gfx_target_for_override",
    "list_separator",
    "load_catalogue",
    "parse_catalogue",
    "torch_minor",
]


#: The accepted values of each format, in a few words (translated where shown).
_FORMAT_HINTS = {
    "gfx_version": QT_TRANSLATE_NOOP(
        "catalogue", "MAJOR.MINOR.STEP, three decimal numbers (10.3.0 = gfx1030)"
    ),
    "path": QT_TRANSLATE_NOOP("catalogue", "a folder"),
    "path_list": QT_TRANSLATE_NOOP("catalogue", "a list of folders"),
    "device_list": QT_TRANSLATE_NOOP("catalogue", "comma list of device indices (or GPU-<uuid>)"),
    "alloc_conf": QT_TRANSLATE_NOOP("catalogue", "key:value pairs separated by commas"),
    "string": QT_TRANSLATE_NOOP("catalogue", "any text"),
}


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
    pattern: str | None = None
    hint: str = ""
    caution: str = ""
    torch_from: tuple[int, int] | None = None
    torch_through: tuple[int, int] | None = None

    @property
    def is_list(self) -> bool:
        """PATH-like: edited as a list of entries."""
        return self.kind == "path_list"

    @property
    def takes_references(self) -> bool:
        """A path or a list of paths: its value may refer to other variables as ``$NAME`` or
        ``${NAME}`` (``$HOME/rocm``, ``/opt/rocm/bin:$PATH``); every other value is literal."""
        return self.kind in ("path", "path_list")

    def matches(self, name: str) -> bool:
        if self.name_pattern is not None:
            return re.fullmatch(self.name_pattern, name) is not None
        return name == self.name

    def recommended_for_torch(self, torch_version: str) -> bool:
        """Whether this is the name to use with ``torch_version`` (e.g. ``2.10.0+rocm7.1``).

        False for entries without a torch range and for versions that cannot be read.
        """
        if self.torch_from is None and self.torch_through is None:
            return False
        version = torch_minor(torch_version)
        if version is None:
            return False
        if self.torch_from is not None and version < self.torch_from:
            return False
        return self.torch_through is None or version <= self.torch_through

    def torch_note(self) -> str:
        """``use it with torch 2.10 and later`` and the like; empty without a range."""
        low, high = self.torch_from, self.torch_through
        if low is not None and high is not None:
            return translate("catalogue", "use it with torch {low} to {high}").format(
                low=_dotted(low), high=_dotted(high)
            )
        if low is not None:
            return translate("catalogue", "use it with torch {low} and later").format(
                low=_dotted(low)
            )
        if high is not None:
            return translate("catalogue", "use it with torch {high} and older").format(
                high=_dotted(high)
            )
        return ""

    def format_hint(self) -> str:
        """The accepted values in a few words."""
        if self.hint:
            return self.hint
        if self.kind == "choices":
            return translate("catalogue", "one of {choices}").format(
                choices=", ".join(self.choices)
            )
        if self.kind == "int":
            if self.maximum is None:
                return translate("catalogue", "a whole number, at least {low}").format(
                    low=self.minimum or 0
                )
            return translate("catalogue", "a whole number from {low} to {high}").format(
                low=self.minimum or 0, high=self.maximum
            )
        if self.kind == "exact":
            return translate("catalogue", "exactly {value}").format(value=self.exact)
        hint = _FORMAT_HINTS.get(self.kind)
        return translate("catalogue", hint) if hint else self.kind


@dataclass(frozen=True)
class Danger:
    """A variable rocmpanel refuses to write without ``--force`` (the ``dangerous`` section
    of resources/env_catalogue.yaml): ``breaks`` says what a wrong value breaks; ``keeps``:
    a value whose entry list still refers to the variable itself (``$PATH``) is fine."""

    name: str
    breaks: str
    platforms: tuple[str, ...] = ("linux", "windows")
    keeps: bool = False


class Catalogue:
    """The loaded catalogue: lookup by name and validation of values."""

    def __init__(
        self,
        variables: tuple[VariableInfo, ...],
        sources: Mapping[str, str],
        dangerous: Mapping[str, Danger] | None = None,
    ) -> None:
        self.variables = variables
        self.sources = dict(sources)
        self.dangerous = dict(dangerous or {})

    def danger(self, name: str, value: str, platform: str | None = None) -> str | None:
        """Why writing ``name=value`` would break the next login or the session (one
        sentence), or None when it is not one of the dangerous variables (or keeps itself:
        PATH with $PATH)."""
        platform = platform or current_platform()
        danger = self.dangerous.get(name)
        if danger is None or platform not in danger.platforms:
            return None
        if danger.keeps:
            entries = env_formats.split_list(value, list_separator(platform))
            if {f"${name}", f"${{{name}}}"} & set(entries):
                return None
            return translate("catalogue", "The new {name} does not keep ${name}: {breaks}.").format(
                name=name, breaks=danger.breaks
            )
        return translate("catalogue", "Setting {name} can break the next login: {breaks}.").format(
            name=name, breaks=danger.breaks
        )

    def lookup(self, name: str) -> VariableInfo | None:
        for info in self.variables:
            if info.matches(name):
                return info
        return None

    def known_names(self) -> tuple[str, ...]:
        return tuple(info.name for info in self.variables if info.name_pattern is None)

    def alloc_conf_name(self, torch_version: str) -> str | None:
        """The allocator-options variable to set for ``torch_version`` on ROCm.

        None when no entry covers the version (or it cannot be read).
        """
        for info in self.variables:
            if info.kind == "alloc_conf" and info.recommended_for_torch(torch_version):
                return info.name
        return None

    def source_texts(self, name: str) -> list[str]:
        """The sources of ``name``'s entry, as the catalogue cites them ([] if unknown)."""
        info = self.lookup(name)
        return [self.sources.get(key, key) for key in info.sources] if info else []

    def describe(self, name: str, *, sources: bool = True) -> str:
        """A paragraph for tooltips and ``rocmpanel env get`` (``sources``: end with the
        "Source" line; the editor shows them as links instead)."""
        info = self.lookup(name)
        if info is None:
            return translate(
                "catalogue", "{name} is not in rocmpanel's catalogue: it is kept as plain text."
            ).format(name=name)
        where = ", ".join(p.capitalize() for p in info.platforms)
        when = (
            translate(
                "catalogue",
                "Read once at start-up: it must be in a program's environment when it starts "
                "(for Python, before `import torch`).",
            )
            if info.before_torch
            else translate("catalogue", "Read when a tool needs it (not a PyTorch runtime switch).")
        )
        refs = "; ".join(self.sources.get(key, key) for key in info.sources)
        extra = ""
        if info.torch_note():
            extra += translate("catalogue", "PyTorch: {note}.").format(note=info.torch_note())
            extra += "\n"
        if info.caution:
            extra += translate("catalogue", "Caution: {caution}").format(caution=info.caution)
            extra += "\n"
        text = (
            f"{info.meaning}\n"
            + translate("catalogue", "Format: {format}.").format(format=info.format_hint())
            + "\n"
            + translate("catalogue", "Platforms: {platforms}. Read by: {reader}.").format(
                platforms=where, reader=info.reader
            )
            + f"\n{when}\n{extra}"
        )
        if not sources:
            return text.rstrip("\n")
        return text + translate("catalogue", "Source ({status}): {sources}").format(
            status=info.status, sources=refs
        )

    def validate(self, name: str, value: str, platform: str | None = None) -> Verdict:
        """Check ``value`` for ``name``; INVALID verdicts must never reach a store."""
        platform = platform or current_platform()
        if NAME_RE.fullmatch(name) is None:
            return Verdict(
                Status.INVALID,
                translate(
                    "catalogue",
                    "{name} is not a usable variable name: use letters, digits and _ "
                    "and do not start with a digit.",
                ).format(name=repr(name)),
            )
        problem = env_formats.unsafe_value_reason(value)
        if problem is not None:
            return Verdict(Status.INVALID, f"{name}: {problem}")
        if len(value) > MAX_VALUE_CHARS:
            return Verdict(
                Status.INVALID,
                translate(
                    "catalogue",
                    "{name} is {length} characters long; one variable may hold at most "
                    "{limit} (the Windows limit), and rocmpanel never cuts a value.",
                ).format(name=name, length=f"{len(value):,}", limit=f"{MAX_VALUE_CHARS:,}"),
            )
        info = self.lookup(name)
        if info is None:
            return Verdict(
                Status.UNKNOWN, translate("catalogue", "Not in the catalogue: kept as plain text.")
            )
        if info.takes_references and platform != "windows":
            problem = env_formats.reference_problem(value)
            if problem is not None:
                return Verdict(Status.INVALID, f"{name}: {problem}")
        verdict = check_format(info, name, value, platform)
        if verdict.status is Status.INVALID:
            return verdict
        if info.pattern is not None and re.fullmatch(info.pattern, value) is None:
            return Verdict(
                Status.INVALID,
                translate("catalogue", "{name} must be {format}; got {value}.").format(
                    name=name, format=info.format_hint(), value=repr(value)
                ),
            )
        notes = [verdict.message] if verdict.message else []
        warning = verdict.status is Status.WARNING
        if value in info.warn:
            notes.append(info.warn[value])
            warning = True
        if platform not in info.platforms:
            only = translate("catalogue", " and ").join(p.capitalize() for p in info.platforms)
            notes.append(
                translate(
                    "catalogue", "{name} is read on {only} only: it does nothing on {os}."
                ).format(name=name, only=only, os=platform.title())
            )
            warning = True
        return Verdict(Status.WARNING if warning else Status.VALID, " ".join(notes))


_TORCH_MINOR_RE = re.compile(r"^\s*([0-9]+)\.([0-9]+)")


def empty_value_refusal(name: str) -> str:
    """Why an empty value is refused everywhere: systemd 252's environment.d generator
    rejects ``X=``, ``X=""`` and ``X=''`` ("invalid syntax ... ignoring"), so the stores would
    disagree."""
    return translate(
        "catalogue",
        "an empty value cannot be stored in environment.d (systemd ignores `{name}=`); use "
        "`rocmpanel env unset {name}`",
    ).format(name=name)


def torch_minor(version: str) -> tuple[int, int] | None:
    """``2.9.1+rocm6.4`` -> (2, 9); None when the text does not start with MAJOR.MINOR."""
    match = _TORCH_MINOR_RE.match(version)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2))


def _dotted(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _torch_bound(raw: Mapping[str, Any], key: str, name: str) -> tuple[int, int] | None:
    value = raw.get(key)
    if value is None:
        return None
    text = str(value)
    if re.fullmatch(r"[0-9]+\.[0-9]+", text) is None:
        raise ValueError(f"{name}: torch {key} must be MAJOR.MINOR, got {text!r}")
    return torch_minor(text)


def _info_from_yaml(name: str, raw: Mapping[str, Any]) -> VariableInfo:
    fmt = raw.get("format") or {"kind": "string"}
    pattern = fmt.get("pattern")
    if pattern is not None:
        re.compile(str(pattern))  # re.error: the catalogue is damaged
    torch = raw.get("torch") or {}
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
        pattern=None if pattern is None else str(pattern),
        hint=str(fmt.get("hint", "")),
        caution=" ".join(str(raw.get("caution", "")).split()),
        torch_from=_torch_bound(torch, "from", name),
        torch_through=_torch_bound(torch, "through", name),
    )


def parse_catalogue(text: str) -> Catalogue:
    """Build a Catalogue from YAML text; PanelError when it is malformed."""
    try:
        data = yaml.safe_load(text)
        variables = tuple(_info_from_yaml(str(k), v) for k, v in data["variables"].items())
        sources = {str(k): str(v) for k, v in data.get("sources", {}).items()}
        dangerous = {
            str(k): _danger_from_yaml(str(k), v) for k, v in (data.get("dangerous") or {}).items()
        }
    except (yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError, re.error) as exc:
        raise PanelError("The environment-variable catalogue is damaged.", str(exc)) from exc
    return Catalogue(variables, sources, dangerous)


def _danger_from_yaml(name: str, raw: Mapping[str, Any]) -> Danger:
    breaks = " ".join(str(raw["breaks"]).split())
    if not breaks:
        raise ValueError(f"dangerous {name}: 'breaks' is empty")
    return Danger(
        name=name,
        breaks=breaks,
        platforms=tuple(str(p) for p in raw.get("platforms", ("linux", "windows"))),
        keeps=bool(raw.get("keeps", False)),
    )


def _catalogue_text() -> str:
    return read_resource("env_catalogue.yaml")


@functools.lru_cache(maxsize=1)
def load_catalogue() -> Catalogue:
    """The catalogue shipped with rocmpanel (loaded once)."""
    try:
        return parse_catalogue(_catalogue_text())
    except OSError as exc:
        raise PanelError("The environment-variable catalogue is missing.", str(exc)) from exc
