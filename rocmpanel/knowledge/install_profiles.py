"""Install profiles: what an install puts next to torch ("PyTorch", "PyTorch + local LLM").

The data (packages, why each, where bitsandbytes' PyPI wheels carry ROCm kernels, where
they carry kernels known to be broken, with a source per entry) is
``resources/install_profiles.yaml``; :func:`extras` decides, for a profile, a torch build's
ROCm, an OS and a gfx target, which packages to add and whether 4-bit on the GPU can work.
Pure apart from :func:`load` (a file read, cached).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.base.resources import read_resource

PROFILES_NAME = "install_profiles.yaml"
DEFAULT_PROFILE = "llm"  # what most people install PyTorch for here: Chat
PROFILE_IDS = ("pytorch", "llm")
OS_NAMES = ("linux", "windows")


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
class Broken:
    """Where bitsandbytes' wheels carry kernels that are known to give wrong results: 4-bit is
    refused there, and ``why`` (a clause about bitsandbytes, shown after "bitsandbytes is not
    installed:") replaces the generic reason."""

    os: str
    rocm: tuple[str, ...]
    gfx: tuple[str, ...]
    why: str
    src: tuple[str, ...] = ()


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
    broken: tuple[Broken, ...] = ()

    def get(self, profile_id: str) -> Profile:
        try:
            return self.profiles[profile_id]
        except KeyError:
            known = ", ".join(self.profiles)
            raise PanelError(
                translate("install_profiles", "There is no install profile {profile}.").format(
                    profile=repr(profile_id)
                ),
                f"Known profiles: {known}.",
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
        return tuple(
            translate("install_profiles", "{requirement}: {why}").format(
                requirement=p.requirement, why=p.why
            )
            for p in self.packages
        )


def _strs(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value or ())


def _where(raw: Any, kind: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The os, ROCm series and gfx targets of a ``gpu_builds`` or ``broken`` entry; ValueError
    when one is missing or the OS is not one rocmpanel plans for (a typo would match nothing)."""
    os_name, rocm, gfx = str(raw["os"]), _strs(raw["rocm"]), _strs(raw["gfx"])
    if os_name not in OS_NAMES:
        raise ValueError(f"bitsandbytes.{kind}: os {os_name!r} is not linux or windows")
    if not rocm or not gfx:
        raise ValueError(f"bitsandbytes.{kind}: an entry for {os_name} lists no rocm or no gfx")
    return os_name, rocm, gfx


def _why(raw: Any) -> str:
    """A ``broken`` entry's reason; ValueError when empty (the note would say nothing)."""
    why = str(raw["why"] or "").strip().rstrip(".")
    if not why:
        raise ValueError("bitsandbytes.broken: an entry has an empty why")
    return why


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
            GpuBuild(*_where(b, "gpu_builds"), _strs(b.get("src")), str(b.get("note") or ""))
            for b in bnb["gpu_builds"]
        )
        broken = tuple(
            Broken(*_where(b, "broken"), _why(b), _strs(b.get("src")))
            for b in bnb.get("broken") or ()
        )
        return Profiles(
            profiles,
            Package(str(bnb["requirement"]), str(bnb["why"]), _strs(bnb.get("src"))),
            int(bnb.get("download_mb") or 0),
            builds,
            {str(k): str(v) for k, v in (data.get("sources") or {}).items()},
            broken,
        )
    except yaml.YAMLError as exc:
        raise PanelError(
            translate("install_profiles", "{file} is not valid YAML.").format(file=PROFILES_NAME),
            str(exc),
        ) from exc
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise PanelError(
            translate("install_profiles", "{file} is malformed.").format(file=PROFILES_NAME),
            repr(exc),
        ) from exc


@lru_cache(maxsize=1)
def load() -> Profiles:
    """The shipped profiles (read once per process)."""
    try:
        text = read_resource(PROFILES_NAME)
    except OSError as exc:
        raise PanelError(
            translate("install_profiles", "Could not read {file}.").format(file=PROFILES_NAME),
            str(exc),
        ) from exc
    return parse(text)


def _series(version: str | None) -> str | None:
    """ "7.2.1" → "7.2"; "10.1.0" → "10.1"; None/"" → None."""
    if not version:
        return None
    parts = version.split("+")[0].split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else parts[0]


def _matches(entry: GpuBuild | Broken, os_name: str, series: str | None, gfx: str | None) -> bool:
    return entry.os == os_name and series in entry.rocm and gfx is not None and gfx in entry.gfx


def gpu_build(
    data: Profiles, os_name: str, torch_rocm: str | None, gfx: str | None
) -> GpuBuild | None:
    """The entry saying bitsandbytes' PyPI wheels have kernels for this ROCm and gfx, or None."""
    series = _series(torch_rocm)
    return next((b for b in data.gpu_builds if _matches(b, os_name, series, gfx)), None)


def broken_build(
    data: Profiles, os_name: str, torch_rocm: str | None, gfx: str | None
) -> Broken | None:
    """The entry saying bitsandbytes' kernels for this ROCm and gfx give wrong results, or None.
    It wins over a ``gpu_builds`` entry: a wrong answer is worse than no 4-bit."""
    series = _series(torch_rocm)
    return next((b for b in data.broken if _matches(b, os_name, series, gfx)), None)


def _no_4bit_note(
    os_name: str, torch_rocm: str | None, gfx: str | None, broken: Broken | None
) -> str:
    """Why 4-bit on the GPU is refused, in a sentence, and what chat does instead."""
    if torch_rocm is None:
        return translate(
            "install_profiles",
            "4-bit on the GPU: not available with a torch built without ROCm (a CPU or CUDA "
            "build), so bitsandbytes is not installed. Chat still works on the CPU.",
        )
    series = _series(torch_rocm)
    system = os_name.capitalize()
    target = gfx or translate("install_profiles", "an unknown GPU")
    if broken is not None:
        reason = broken.why
    else:
        reason = translate(
            "install_profiles",
            "its PyPI wheels for {system} have no ROCm {series} kernels for {gfx}",
        ).format(system=system, series=series, gfx=target)
    return translate(
        "install_profiles",
        "4-bit on the GPU: not available for {gfx} with torch built for ROCm {series} on "
        "{system}, so bitsandbytes is not installed: {reason}. Chat still works in bf16/fp16 "
        "on the GPU if the model fits its memory, or on the CPU.",
    ).format(gfx=target, series=series, system=system, reason=reason)


def extras(
    data: Profiles, profile_id: str, *, os_name: str, torch_rocm: str | None, gfx: str | None
) -> Extras:
    """What ``profile_id`` adds for a torch build bundling ROCm ``torch_rocm`` on ``os_name``
    and GPU ``gfx``. bitsandbytes only where its wheels can work: else the note says why (no
    kernels, or kernels known to be wrong) and that chat runs in bf16/fp16 on the GPU (or on
    the CPU), and nothing that cannot work is installed."""
    profile = data.get(profile_id)
    if not profile.packages:
        return Extras()
    sources = [s for p in profile.packages for s in p.src]
    broken = broken_build(data, os_name, torch_rocm, gfx)
    found = None if broken is not None else gpu_build(data, os_name, torch_rocm, gfx)
    if found is not None:
        bnb = data.bitsandbytes
        series = _series(torch_rocm)
        targets = ", ".join(found.gfx)
        system = os_name.capitalize()
        why = translate(
            "install_profiles", "{why}; its {system} wheels include ROCm {series} kernels for {gfx}"
        ).format(why=bnb.why, system=system, series=series, gfx=targets)
        packages = (*profile.packages, Package(bnb.requirement, why, (*bnb.src, *found.src)))
        sources += [*bnb.src, *found.src]
        note = translate(
            "install_profiles",
            "4-bit on the GPU: available ({gfx}, torch built for ROCm {series}).",
        ).format(gfx=gfx, series=series)
        if found.note:
            note += f" {found.note}."
        return Extras(
            packages,
            True,
            note,
            profile.download_mb + data.bnb_download_mb,
            tuple(dict.fromkeys(sources)),
        )
    if broken is not None:
        sources += broken.src
    else:
        sources += [s for b in data.gpu_builds for s in b.src]
    note = _no_4bit_note(os_name, torch_rocm, gfx, broken)
    return Extras(profile.packages, False, note, profile.download_mb, tuple(dict.fromkeys(sources)))
