"""The PyTorch build manifest: torch release ↔ index ↔ Python versions ↔ OS ↔ GPU targets.

The built-in ``torch_builds.yaml`` ships in ``rocmpanel.resources``; a user file of the same
name in :func:`paths.config_dir` overlays it (same ``id`` replaces, new ``id`` adds,
``disabled: true`` hides), so new releases need no new panel version.
"""

from __future__ import annotations

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
    url = req("url")
    if not url.startswith(("https://", "http://", "file://")):
        raise ValueError(f"url {url!r} is not an http(s) or file URL")
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
    except (TypeError, ValueError) as exc:
        raise ValueError("download_mb must be a number") from exc
    pins_raw = row.get("pins") or {}
    if not isinstance(pins_raw, dict):
        raise ValueError("pins must map package names to versions")
    pins = {str(k): str(v) for k, v in pins_raw.items()}
    for package, version in pins.items():
        try:
            Version(version)
        except InvalidVersion as exc:
            raise ValueError(f"pin {package}=={version} is not a version") from exc
    extra = str(row.get("extra") or "")
    if extra and "{gfx}" not in extra:
        raise ValueError("extra must contain {gfx}")
    extra_on = _strs(row.get("extra_on", ["torch"]), "extra_on")
    pre_install = tuple(_pre_install(p) for p in row.get("pre_install") or ())
    return TorchBuild(
        id=build_id,
        torch=torch,
        os=os_name,
        rocm=req("rocm"),
        kind=kind,
        url=url,
        packages=_strs(row.get("packages", ["torch"]), "packages") or ("torch",),
        python=python,
        gfx=tuple(g.lower() for g in gfx),
        download_mb=max(0, download_mb),
        status=status,
        preview=bool(row.get("preview", False)),
        notes=str(row.get("notes", "")),
        src=_strs(row.get("src"), "src"),
        origin=origin,
        pins=pins,
        extra=extra,
        extra_on=extra_on,
        pre_install=pre_install,
    )


def _pre_install(raw: Any) -> PreInstall:
    if not isinstance(raw, dict):
        raise ValueError("pre_install entries must be mappings")
    packages = _strs(raw.get("packages"), "pre_install packages")
    if not packages:
        raise ValueError("pre_install entries need packages")
    for kind in KINDS:
        url = raw.get("index_url" if kind == "index" else kind)
        if url:
            if not str(url).startswith(("https://", "http://", "file://")):
                raise ValueError(f"pre_install url {url!r} is not an http(s) or file URL")
            return PreInstall(packages, str(url), kind)
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
            builds.append(_build(row, arch_sets, origin))
        except ValueError as exc:
            problems.append(f"{origin}: row {index + 1} ({row.get('id', '?')}): {exc}")
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


def builtin_text() -> str:
    """The manifest of the data set in force (shipped, or an installed data update)."""
    return datasets.read_data(MANIFEST_NAME)


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


def load_manifest(
    user_path: Path | None = None,
    builtin: str | None = None,
    community: community_data.Community | None = None,
) -> Manifest:
    """The built-in manifest with the user's overlay applied (a broken overlay is reported)."""
    import yaml

    text = builtin if builtin is not None else builtin_text()
    try:
        base_data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PanelError("The built-in PyTorch manifest is not valid YAML.", str(exc)) from exc
    builds, _, overrides, sources, arch_sets, problems = _parse(base_data, "built-in", {})
    known = community or community_data.load()
    overrides = {**_community_overrides(known), **overrides}
    sources = {**known.source_text, **sources}
    if problems:
        raise PanelError("The built-in PyTorch manifest has errors.", "\n".join(problems))
    path = user_path if user_path is not None else user_manifest_path()
    all_problems: list[str] = []
    try:
        overlay_text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Manifest(tuple(builds), overrides, sources)
    except OSError as exc:
        return Manifest(tuple(builds), overrides, sources, (f"Could not read {path}: {exc}",))
    try:
        data = yaml.safe_load(overlay_text) or {}
        extra, disabled, extra_overrides, extra_sources, _, more = _parse(
            data, str(path), arch_sets
        )
    except (yaml.YAMLError, PanelError) as exc:
        all_problems.append(f"{path} was ignored: {exc}")
        return Manifest(tuple(builds), overrides, sources, tuple(all_problems))
    all_problems.extend(more)
    return Manifest(
        merge(builds, extra, disabled),
        {**overrides, **extra_overrides},
        {**sources, **extra_sources},
        tuple(all_problems),
    )


@lru_cache(maxsize=1)
def cached_manifest() -> Manifest:
    """:func:`load_manifest` once per process, for verdicts judged many times over (the
    PyTorch tab reloads its own); forgotten by :func:`rocmpanel.base.datasets.reset`."""
    return load_manifest()


datasets.on_reset(cached_manifest.cache_clear)
