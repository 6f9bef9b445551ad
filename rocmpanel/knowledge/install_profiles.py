"""Install profiles: what an install puts next to torch ("PyTorch", "PyTorch + local LLM").

The data (packages, why each, where bitsandbytes' PyPI wheels carry ROCm kernels, with a
source per entry) is ``resources/install_profiles.yaml``; :func:`extras` decides, for a
profile, a torch build's ROCm, an OS and a gfx target, which packages to add and whether
4-bit on the GPU can work. Pure apart from :func:`load` (a file read, cached).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.resources import read_resource

PROFILES_NAME = "install_profiles.yaml"
DEFAULT_PROFILE = "llm"  # what most people install PyTorch for here: Chat
PROFILE_IDS = ("pytorch", "llm")


@dataclass(frozen=True)
class Package:
    """One requirement a profile adds, with the reason shown in the plan."""

    requirement: str
    why: str
    src: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        for i, char in enumerate(self.requirement):
            if char in "<>=!~[; ":
                return self.requirement[:i]
        return self.requirement


@dataclass(frozen=True)
class GpuBuild:
    """Where bitsandbytes' PyPI wheels carry ROCm kernels: an OS, ROCm series, gfx targets."""

    os: str
    rocm: tuple[str, ...]
    gfx: tuple[str, ...]
    src: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Profile:
    id: str
    label: str
    summary: str
    packages: tuple[Package, ...]
    download_mb: int = 0


@dataclass(frozen=True)
class Profiles:
    """Every profile, the bitsandbytes rule and the sources' descriptions."""

    profiles: dict[str, Profile]
    bitsandbytes: Package
    bnb_download_mb: int
    gpu_builds: tuple[GpuBuild, ...]
    sources: dict[str, str]

    def get(self, profile_id: str) -> Profile:
        try:
            return self.profiles[profile_id]
        except KeyError:
            known = ", ".join(self.profiles)
            raise PanelError(
                f"There is no install profile {profile_id!r}.", f"Known profiles: {known}."
            ) from None


@dataclass(frozen=True)
class Extras:
    """What a profile adds to one plan: the packages (in install order), one line per
    package saying why, whether 4-bit on the GPU works, and what to expect when not."""

    packages: tuple[Package, ...] = ()
    four_bit_gpu: bool | None = None  # None: the profile installs no chat stack
    note: str = ""  # the 4-bit verdict in a sentence
    download_mb: int = 0
    sources: tuple[str, ...] = ()

    @property
    def requirements(self) -> tuple[str, ...]:
        return tuple(p.requirement for p in self.packages)

    def lines(self) -> tuple[str, ...]:
        """ "requirement: why" for each package, for the plan."""
        return tuple(f"{p.requirement}: {p.why}" for p in self.packages)


def _strs(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value or ())


def parse(text: str) -> Profiles:
    """The profiles in ``text`` (the YAML above); PanelError when malformed."""
    import yaml

    try:
        data = yaml.safe_load(text)
        profiles = {
            str(pid): Profile(
                str(pid),
                str(raw["label"]),
                str(raw["summary"]),
                tuple(
                    Package(str(p["requirement"]), str(p["why"]), _strs(p.get("src")))
                    for p in raw.get("packages") or ()
                ),
                int(raw.get("download_mb") or 0),
            )
            for pid, raw in data["profiles"].items()
        }
        bnb = data["bitsandbytes"]
        builds = tuple(
            GpuBuild(
                str(b["os"]),
                _strs(b["rocm"]),
                _strs(b["gfx"]),
                _strs(b.get("src")),
                str(b.get("note") or ""),
            )
            for b in bnb["gpu_builds"]
        )
        return Profiles(
            profiles,
            Package(str(bnb["requirement"]), str(bnb["why"]), _strs(bnb.get("src"))),
            int(bnb.get("download_mb") or 0),
            builds,
            {str(k): str(v) for k, v in (data.get("sources") or {}).items()},
        )
    except yaml.YAMLError as exc:
        raise PanelError(f"{PROFILES_NAME} is not valid YAML.", str(exc)) from exc
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise PanelError(f"{PROFILES_NAME} is malformed.", repr(exc)) from exc


@lru_cache(maxsize=1)
def load() -> Profiles:
    """The shipped profiles (read once per process)."""
    try:
        text = read_resource(PROFILES_NAME)
    except OSError as exc:
        raise PanelError(f"Could not read {PROFILES_NAME}.", str(exc)) from exc
    return parse(text)


def _series(version: str | None) -> str | None:
    """ "7.2.1" → "7.2"; "10.1.0" → "10.1"; None/"" → None."""
    if not version:
        return None
    parts = version.split("+")[0].split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else parts[0]


def gpu_build(
    data: Profiles, os_name: str, torch_rocm: str | None, gfx: str | None
) -> GpuBuild | None:
    """The entry saying bitsandbytes' PyPI wheels have kernels for this ROCm and gfx, or None."""
    series = _series(torch_rocm)
    return next(
        (
            b
            for b in data.gpu_builds
            if b.os == os_name and series in b.rocm and gfx is not None and gfx in b.gfx
        ),
        None,
    )


def extras(
    data: Profiles, profile_id: str, *, os_name: str, torch_rocm: str | None, gfx: str | None
) -> Extras:
    """What ``profile_id`` adds for a torch build bundling ROCm ``torch_rocm`` on ``os_name``
    and GPU ``gfx``. bitsandbytes only where its wheels can work: else the note says that chat
    runs in bf16/fp16 on the GPU (or on the CPU) and nothing that cannot work is installed."""
    profile = data.get(profile_id)
    if not profile.packages:
        return Extras()
    series = _series(torch_rocm) or "?"
    sources = [s for p in profile.packages for s in p.src]
    found = gpu_build(data, os_name, torch_rocm, gfx)
    if found is not None:
        bnb = data.bitsandbytes
        targets = ", ".join(found.gfx)
        system = os_name.capitalize()
        why = f"{bnb.why}; its {system} wheels include ROCm {series} kernels for {targets}"
        packages = (*profile.packages, Package(bnb.requirement, why, (*bnb.src, *found.src)))
        sources += [*bnb.src, *found.src]
        note = f"4-bit on the GPU: available ({gfx}, torch built for ROCm {series})."
        if found.note:
            note += f" {found.note}."
        return Extras(
            packages,
            True,
            note,
            profile.download_mb + data.bnb_download_mb,
            tuple(dict.fromkeys(sources)),
        )
    sources += [s for b in data.gpu_builds for s in b.src]
    gpu = gfx or "no GPU"
    note = (
        f"4-bit on the GPU: not available for {gpu} with torch built for ROCm {series} "
        f"on {os_name.capitalize()} (bitsandbytes' PyPI wheels have no ROCm kernels for it), so "
        "bitsandbytes is not installed. Chat still works in bf16/fp16 on the GPU if the model "
        "fits its memory, or on the CPU."
    )
    return Extras(profile.packages, False, note, profile.download_mb, tuple(dict.fromkeys(sources)))
