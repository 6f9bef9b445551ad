"""The PyTorch build manifest: torch release ↔ index ↔ Python versions ↔ OS ↔ GPU targets.

The built-in ``torch_builds.yaml`` ships in ``rocmpanel.resources``; a user file of the same
name in :func:`paths.config_dir` overlays it (same ``id`` replaces, new ``id`` adds,
``disabled: true`` hides), so new releases need no new panel version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from rocmpanel.base import datasets, paths
from rocmpanel.base.errors import PanelError
from rocmpanel.knowledge import community as community_data
from rocmpanel.knowledge.community import OverrideRule

MANIFEST_NAME = "torch_builds.yaml"
KINDS = ("index", "find_links")
STATUSES = ("official", "community", "unverified")


Override = OverrideRule
"""A community HSA_OVERRIDE_GFX_VERSION value for a gfx on Linux (resources/community.yaml)."""


@dataclass(frozen=True)
class PreInstall:
    """Packages pip installs in an earlier call, from their own index or folder."""

    packages: tuple[str, ...]
    url: str
    kind: str  # "index" or "find_links"


@dataclass(frozen=True)
class TorchBuild:
    """One row: a torch release from one index for one OS."""

    id: str
    torch: str
    os: str
    rocm: str
    kind: str
    url: str
    packages: tuple[str, ...]
    python: tuple[str, ...]
    gfx: tuple[str, ...]
    download_mb: int
    status: str = "official"
    preview: bool = False
    notes: str = ""
    src: tuple[str, ...] = ()
    origin: str = "built-in"  # "built-in" or the overlay file's path
    pins: Mapping[str, str] = field(default_factory=dict)  # companion package -> version
    extra: str = ""  # "device-{gfx}": the extra that selects the GPU on a multi-arch index
    extra_on: tuple[str, ...] = ("torch",)  # the packages that take that extra
    pre_install: tuple[PreInstall, ...] = ()

    @property
    def torch_version(self) -> Version:
        return Version(self.torch)

    @property
    def stable(self) -> bool:
        """An official, non-preview, non-pre-release row."""
        try:
            pre = Version(self.torch).is_prerelease
        except InvalidVersion:
            pre = True
        return self.status == "official" and not self.preview and not pre

    def _name(self, package: str, gfx: str | None) -> str:
        if self.extra and gfx and package in self.extra_on:
            return f"{package}[{self.extra.replace('{gfx}', gfx)}]"
        return package

    def requirement(self, gfx: str | None = None) -> str:
        """``torch==2.12.*`` for a release line, ``torch==2.8.0a0`` for an exact version;
        ``torch[device-gfx1100]==2.12.*`` on a multi-arch index."""
        name = self._name("torch", gfx)
        parts = self.torch.split(".")
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            return f"{name}=={self.torch}.*"
        return f"{name}=={self.torch}"

    def package_requirements(self, gfx: str | None = None) -> tuple[str, ...]:
        """torch's requirement and the companions', pinned where the row pins them, with
        the device extra on the packages that take it."""
        out = [self.requirement(gfx)]
        for package in self.packages:
            if package == "torch":
                continue
            name = self._name(package, gfx)
            pinned = self.pins.get(package)
            out.append(f"{name}=={pinned}" if pinned else name)
        return tuple(out)


@dataclass(frozen=True)
class Manifest:
    """All rows, the override table, the sources, and problems found in an overlay."""

    builds: tuple[TorchBuild, ...]
    overrides: Mapping[str, Override] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def for_os(self, os_name: str) -> tuple[TorchBuild, ...]:
        return tuple(b for b in self.builds if b.os == os_name)

    def by_id(self, build_id: str) -> TorchBuild | None:
        return next((b for b in self.builds if b.id == build_id), None)


def _strs(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return tuple(str(v) for v in value)
    raise ValueError(f"{what} must be a list of strings")


def _build(
    row: Mapping[str, Any], arch_sets: Mapping[str, tuple[str, ...]], origin: str
) -> TorchBuild:
    def req(key: str) -> str:
        value = row.get(key)
        if value is None or str(value).strip() == "":
            raise ValueError(f"missing {key!r}")
        return str(value).strip()

    build_id = req("id")
    torch = req("torch")
    try:
        Version(torch)
    except InvalidVersion as exc:
        raise ValueError(f"torch {torch!r} is not a version") from exc
    os_name = req("os").lower()
    if os_name not in ("linux", "windows"):
        raise ValueError(f"os must be linux or windows, not {os_name!r}")
    kind = str(row.get("kind", "index"))
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    url = _url(req("url"), "url")
    status = str(row.get("status", "official"))
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}")
    gfx_raw = row.get("gfx", ())
    gfx = arch_sets.get(gfx_raw, ()) if isinstance(gfx_raw, str) else _strs(gfx_raw, "gfx")
    if isinstance(gfx_raw, str) and gfx_raw not in arch_sets:
        raise ValueError(f"unknown arch set {gfx_raw!r}")
    python = _strs(row.get("python"), "python")
    if not python:
        raise ValueError("python must list at least one version")
    try:
        download_mb = int(row.get("download_mb", 0))
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError("download_mb must be a whole number") from exc
    pins_raw = row.get("pins") or {}
    if not isinstance(pins_raw, dict):
        raise ValueError("pins must map package names to versions")
    pins = {_package(str(k), "pins"): str(v) for k, v in pins_raw.items()}
    for package, version in pins.items():
        try:
            Version(version)
        except InvalidVersion as exc:
            raise ValueError(f"pin {package}=={version} is not a version") from exc
    extra = str(row.get("extra") or "")
    if extra and ("{gfx}" not in extra or not _EXTRA_RE.match(extra.replace("{gfx}", "gfx0"))):
        raise ValueError("extra must be a name containing {gfx}, such as device-{gfx}")
    extra_on = tuple(_package(p, "extra_on") for p in _strs(row.get("extra_on", ["torch"]), "x"))
    pre_raw = row.get("pre_install") or []
    if not isinstance(pre_raw, list):
        raise ValueError("pre_install must be a list")
    pre_install = tuple(_pre_install(p) for p in pre_raw)
    packages = tuple(_package(p, "packages") for p in _strs(row.get("packages", ["torch"]), "x"))
    preview = row.get("preview", False)
    if not isinstance(preview, bool):
        raise ValueError("preview must be true or false")
    return TorchBuild(
        id=build_id,
        torch=torch,
        os=os_name,
        rocm=req("rocm"),
        kind=kind,
        url=url,
        packages=packages or ("torch",),
        python=python,
        gfx=tuple(g.lower() for g in gfx),
        download_mb=max(0, download_mb),
        status=status,
        preview=preview,
        notes=str(row.get("notes", "")),
        src=_strs(row.get("src"), "src"),
        origin=origin,
        pins=pins,
        extra=extra,
        extra_on=extra_on,
        pre_install=pre_install,
    )


# A package as a data row may name it: a distribution name (PEP 508), never an option, so a
# downloaded data set cannot slip "--extra-index-url ..." into a pip command.
_NAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_REQUIREMENT_RE = re.compile(
    r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:==[A-Za-z0-9.+!_-]+)?$"
)
_EXTRA_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _package(name: str, what: str) -> str:
    if not _NAME_RE.match(name):
        raise ValueError(f"{what}: {name!r} is not a package name")
    return name


def _url(url: str, what: str) -> str:
    if not url.startswith(("https://", "http://", "file://")):
        raise ValueError(f"{what} {url!r} is not an http(s) or file URL")
    if any(c.isspace() for c in url) or len(url) > 2000:
        raise ValueError(f"{what} {url!r} has spaces or is too long")
    return url


def _pre_install(raw: Any) -> PreInstall:
    if not isinstance(raw, dict):
        raise ValueError("pre_install entries must be mappings")
    packages = _strs(raw.get("packages"), "pre_install packages")
    if not packages:
        raise ValueError("pre_install entries need packages")
    for package in packages:
        if not _REQUIREMENT_RE.match(package):
            raise ValueError(f"pre_install package {package!r} is not name or name==version")
    for kind in KINDS:
        url = raw.get("index_url" if kind == "index" else kind)
        if url:
            return PreInstall(packages, _url(str(url), "pre_install url"), kind)
    raise ValueError("pre_install entries need index_url or find_links")


def _parse(
    data: Any, origin: str, base_sets: Mapping[str, tuple[str, ...]]
) -> tuple[
    list[TorchBuild],
    set[str],
    dict[str, Override],
    dict[str, str],
    dict[str, tuple[str, ...]],
    list[str],
]:
    """Rows, disabled ids, overrides, sources, arch sets and problems of one document."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise PanelError(f"{origin}: the manifest is not a mapping")
    for key, kind in (
        ("sources", dict),
        ("arch_sets", dict),
        ("builds", list),
        ("linux_overrides", dict),
    ):
        if data.get(key) is not None and not isinstance(data[key], kind):
            raise PanelError(f"{origin}: {key} must be a {'mapping' if kind is dict else 'list'}")
    sources = {str(k): str(v) for k, v in (data.get("sources") or {}).items()}
    arch_sets = dict(base_sets)
    for name, value in (data.get("arch_sets") or {}).items():
        try:
            arch_sets[str(name)] = _strs(value, f"arch set {name}")
        except ValueError as exc:
            problems.append(f"{origin}: {exc}")
    builds: list[TorchBuild] = []
    disabled: set[str] = set()
    for index, row in enumerate(data.get("builds") or []):
        if not isinstance(row, dict):
            problems.append(f"{origin}: row {index + 1} is not a mapping")
            continue
        if row.get("disabled") and row.get("id"):
            disabled.add(str(row["id"]))
            continue
        try:
            build = _build(row, arch_sets, origin)
        except ValueError as exc:
            problems.append(f"{origin}: row {index + 1} ({row.get('id', '?')}): {exc}")
            continue
        if any(b.id == build.id for b in builds):
            problems.append(f"{origin}: row {index + 1}: the id {build.id} is used twice")
            continue
        builds.append(build)
    overrides: dict[str, Override] = {}
    for gfx, entry in (data.get("linux_overrides") or {}).items():
        if not isinstance(entry, dict) or "value" not in entry or "target" not in entry:
            problems.append(f"{origin}: override {gfx} needs value and target")
            continue
        key = str(gfx).lower()
        src = _strs(entry.get("src"), "src") if not isinstance(entry.get("src"), dict) else ()
        overrides[key] = Override(
            gfx=key, value=str(entry["value"]), target=str(entry["target"]).lower(), sources=src
        )
    return builds, disabled, overrides, sources, arch_sets, problems


def user_manifest_path() -> Path:
    return paths.config_dir() / MANIFEST_NAME


def _community_overrides(known: community_data.Community | None) -> dict[str, Override]:
    return {o.gfx: o for o in (known or community_data.load()).overrides}


def merge(
    base: Iterable[TorchBuild], overlay: Iterable[TorchBuild], disabled: set[str]
) -> tuple[TorchBuild, ...]:
    """Overlay rows replace same-id base rows in place; new rows come first."""
    overlay_by_id = {b.id: b for b in overlay}
    merged = [overlay_by_id.pop(b.id, b) for b in base]
    rows = list(overlay_by_id.values()) + merged
    return tuple(b for b in rows if b.id not in disabled)


def _parse_base(
    text: str, known: community_data.Community | None, label: str
) -> tuple[list[TorchBuild], dict[str, Override], dict[str, str], dict[str, tuple[str, ...]]]:
    """The rows, overrides, sources and arch sets of a base manifest; PanelError naming
    every problem."""
    import yaml

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        builds, _, overrides, sources, arch_sets, problems = _parse(data, label, {})
    except yaml.YAMLError as exc:
        raise PanelError(f"The {label} PyTorch manifest is not valid YAML.", str(exc)) from exc
    except (TypeError, AttributeError, ValueError) as exc:
        raise PanelError(f"The {label} PyTorch manifest is malformed.", repr(exc)) from exc
    if problems:
        raise PanelError(f"The {label} PyTorch manifest has errors.", "\n".join(problems))
    known = known or community_data.load()
    return (
        builds,
        {**_community_overrides(known), **overrides},
        {**known.source_text, **sources},
        arch_sets,
    )


def load_manifest(
    user_path: Path | None = None,
    builtin: str | None = None,
    community: community_data.Community | None = None,
) -> Manifest:
    """The manifest of the data set in force (or ``builtin`` text) with the user's overlay
    applied; a broken overlay is reported in ``problems``, never raised."""
    import yaml

    if builtin is not None:
        builds, overrides, sources, arch_sets = _parse_base(builtin, community, "given")
    else:
        builds, overrides, sources, arch_sets = datasets.parse_data(
            MANIFEST_NAME, lambda text: _parse_base(text, community, "built-in")
        )
    path = user_path if user_path is not None else user_manifest_path()
    if not path.exists():
        return Manifest(tuple(builds), overrides, sources)
    try:
        overlay_text = datasets.read_limited(path)
    except (OSError, UnicodeDecodeError) as exc:
        return Manifest(tuple(builds), overrides, sources, (f"Could not read {path}: {exc}",))
    try:
        data = yaml.safe_load(overlay_text) or {}
        extra, disabled, extra_overrides, extra_sources, _, more = _parse(
            data, str(path), arch_sets
        )
    except (yaml.YAMLError, PanelError, TypeError, AttributeError, ValueError) as exc:
        problem = exc.message if isinstance(exc, PanelError) else str(exc)
        return Manifest(tuple(builds), overrides, sources, (f"{path} was ignored: {problem}",))
    return Manifest(
        merge(builds, extra, disabled),
        {**overrides, **extra_overrides},
        {**sources, **extra_sources},
        tuple(more),
    )


@lru_cache(maxsize=1)
def cached_manifest() -> Manifest:
    """:func:`load_manifest` once per process, for verdicts judged many times over (the
    PyTorch tab reloads its own); forgotten by :func:`rocmpanel.base.datasets.reset`."""
    return load_manifest()


datasets.on_reset(cached_manifest.cache_clear)
