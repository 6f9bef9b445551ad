"""Decide which PyTorch build to install for a GPU, OS and Python, and the exact pip command.

:func:`plan` is pure: it reads only the manifest it is given. It never guesses a GPU from a
marketing name: it works from the gfx target detection found (or the user passed).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.knowledge import community
from rocmpanel.knowledge import install_profiles as profiles_data
from rocmpanel.knowledge.install_profiles import Profiles
from rocmpanel.knowledge.kernels import decide, major_minor
from rocmpanel.knowledge.torch_builds import Manifest, TorchBuild

PYTORCH_WHL = "https://download.pytorch.org/whl"
AMD_REPO = "https://repo.radeon.com"
PYPI_SIMPLE = "https://pypi.org/simple"
MB = 1_000_000
PIP_CALL_SEPARATOR = "--then"  # between pip calls in the install worker's arguments
# pip keeps the downloaded wheels while it unpacks them; an unpacked ROCm torch is about 2.5x
# its wheel. Both are estimates, so the disk check asks for a margin on top.
UNPACK_FACTOR = 2.5
DISK_MARGIN_BYTES = 1_000_000_000

# The end of the no-GPU refusal: the GUI shows it as it is, the CLI as the command to type.
NO_GPU_HINT = QT_TRANSLATE_NOOP(
    "plan", " Give the GPU's gfx target (e.g. gfx1100) to plan for it anyway."
)


@dataclass(frozen=True)
class Mirrors:
    """Where to fetch from instead of the public hosts ("" = the public host)."""

    pytorch_index: str = ""  # replaces https://download.pytorch.org/whl
    amd_repo: str = ""  # replaces https://repo.radeon.com
    pypi_index: str = ""  # replaces https://pypi.org/simple (find-links installs' dependencies)

    def apply(self, url: str) -> str:
        for public, mirror in ((PYTORCH_WHL, self.pytorch_index), (AMD_REPO, self.amd_repo)):
            if mirror and url.startswith(public):
                return mirror.rstrip("/") + url[len(public) :]
        return url

    @property
    def pypi(self) -> str:
        return self.pypi_index or PYPI_SIMPLE


@dataclass(frozen=True)
class InstallPlan:
    """The recommended build and how to install it, or the reason there is none."""

    supported: bool
    os: str
    gfx: str | None
    python_version: str | None
    rocm_version: str | None
    refusal: str | None = None
    build_id: str | None = None
    torch_version: str | None = None
    rocm_build: str | None = None
    index_url: str | None = None
    index_kind: str | None = None
    python_versions: tuple[str, ...] = ()
    python_ok: bool = True
    pip_args: tuple[str, ...] = ()  # what follows "python -m pip install"
    pre_pip_args: tuple[tuple[str, ...], ...] = ()  # earlier pip calls (e.g. AMD's rocm_sdk)
    kernels: str | None = None  # "native" or "override" (knowledge.kernels.KernelMode)
    command: str = ""
    download_bytes: int = 0
    free_disk_bytes: int = 0
    warnings: tuple[str, ...] = ()
    job_env: Mapping[str, str] = field(default_factory=dict)  # e.g. an HSA override
    preview: bool = False
    status: str | None = None
    notes: str = ""
    sources: tuple[str, ...] = ()
    profile: str = "pytorch"  # knowledge.install_profiles: "pytorch" or "llm"
    # The profile's packages: one pip call from PyPI (or its mirror) after torch's.
    extra_packages: tuple[str, ...] = ()
    extra_pip_args: tuple[str, ...] = ()
    extra_lines: tuple[str, ...] = ()  # "requirement: why" per extra package
    four_bit_gpu: bool | None = None  # None: the profile installs no chat stack
    four_bit_note: str = ""

    def worker_pip_args(self) -> tuple[str, ...]:
        """Every pip call for the install worker, the earlier ones first, separated by
        ``--then`` (workers/pip_install.py runs them in order): torch's index calls, then
        the profile's packages, so an installed ROCm torch satisfies their torch needs."""
        out: list[str] = []
        for call in self.pre_pip_args:
            out += [*call, PIP_CALL_SEPARATOR]
        out += self.pip_args
        if self.extra_pip_args:
            out += [PIP_CALL_SEPARATOR, *self.extra_pip_args]
        return tuple(out)

    def argv(self, python: str = "python") -> list[str]:
        """The full command for ``python`` (a venv's interpreter)."""
        return [python, "-m", "pip", "install", *self.pip_args]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["python_versions"] = list(self.python_versions)
        data["pip_args"] = list(self.pip_args)
        data["pre_pip_args"] = [list(a) for a in self.pre_pip_args]
        data["warnings"] = list(self.warnings)
        data["sources"] = list(self.sources)
        data["job_env"] = dict(self.job_env)
        data["extra_packages"] = list(self.extra_packages)
        data["extra_pip_args"] = list(self.extra_pip_args)
        data["extra_lines"] = list(self.extra_lines)
        return data


def normalise_gfx(gfx: str | None) -> str | None:
    """ "gfx90a:sramecc+:xnack-" → "gfx90a"; "" → None."""
    if not gfx:
        return None
    return gfx.strip().lower().split(":")[0] or None


def normalise_os(os_name: str) -> str:
    name = os_name.strip().lower()
    if name.startswith("win"):
        return "windows"
    if name.startswith("linux"):
        return "linux"
    return name


def pip_args(
    build: TorchBuild, mirrors: Mirrors, index_url: str | None = None, gfx: str | None = None
) -> tuple[str, ...]:
    """What follows ``python -m pip install`` for the row (torch, its pinned companions, and
    the index or folder they come from)."""
    url = index_url or mirrors.apply(build.url)
    packages = build.package_requirements(gfx)
    if build.kind == "find_links":
        return (*packages, "--find-links", url, "--index-url", mirrors.pypi)
    return (*packages, "--index-url", url)


def pre_pip_args(build: TorchBuild, mirrors: Mirrors) -> tuple[tuple[str, ...], ...]:
    """The pip calls that must run before the main one (e.g. AMD's rocm_sdk packages)."""
    calls: list[tuple[str, ...]] = []
    for step in build.pre_install:
        url = mirrors.apply(step.url)
        if step.kind == "find_links":
            calls.append((*step.packages, "--find-links", url, "--index-url", mirrors.pypi))
        else:
            calls.append((*step.packages, "--index-url", url))
    return tuple(calls)


def _refuse(base: dict[str, Any], reason: str) -> InstallPlan:
    return InstallPlan(supported=False, refusal=reason, **base)


def extra_pip_args(packages: tuple[str, ...], mirrors: Mirrors) -> tuple[str, ...]:
    """The pip call for a profile's packages: from PyPI or its mirror, never from torch's
    index. No ``--upgrade``: pip then only considers the installed torch for their torch
    requirement and keeps it (https://pip.pypa.io/en/stable/development/architecture/
    upgrade-options/), so a ROCm torch is never replaced by a CUDA one from PyPI."""
    return (*packages, "--index-url", mirrors.pypi) if packages else ()


def plan(
    gpu_gfx: str | None,
    rocm_version: str | None,
    os_name: str,
    python_version: str | None,
    manifest: Manifest,
    *,
    mirrors: Mirrors | None = None,
    index_url: str | None = None,
    build_id: str | None = None,
    profile: str = "pytorch",
    profiles: Profiles | None = None,
) -> InstallPlan:
    """The build to install for this GPU/ROCm/OS/Python, or a refusal saying why not.

    ``index_url`` replaces the chosen row's index (the user's own mirror of that index);
    ``build_id`` picks a row explicitly instead of the recommendation; ``profile`` adds its
    packages (``profiles``: the profile data, the shipped one when None).
    """
    mirrors = mirrors or Mirrors()
    profiles = profiles or profiles_data.load()
    profiles.get(profile)  # an unknown profile is an error, not an empty one
    gfx = normalise_gfx(gpu_gfx)
    os_norm = normalise_os(os_name)
    py = ".".join(python_version.split(".")[:2]) if python_version else None
    base: dict[str, Any] = {
        "os": os_norm,
        "gfx": gfx,
        "python_version": py,
        "rocm_version": rocm_version,
        "profile": profile,
    }
    if os_norm not in ("linux", "windows"):
        return _refuse(
            base,
            translate(
                "plan",
                "There are no ROCm PyTorch builds for {os}: only Linux and Windows (preview).",
            ).format(os=repr(os_name)),
        )
    rows = list(manifest.for_os(os_norm))
    if build_id is not None:
        chosen = manifest.by_id(build_id)
        if chosen is None:
            return _refuse(
                base,
                translate("plan", "No build {build} in the manifest.").format(build=repr(build_id)),
            )
        if chosen.os != os_norm:
            return _refuse(
                base,
                translate("plan", "Build {build} is for {build_os}, not {os}.").format(
                    build=build_id, build_os=chosen.os, os=os_norm
                ),
            )
        rows = [chosen]
    if not rows:
        return _refuse(
            base,
            translate("plan", "The manifest has no PyTorch builds for {os}.").format(os=os_norm),
        )
    if gfx is None:
        return _refuse(
            base,
            translate("plan", "No AMD GPU was detected, so there is no GPU to pick a build for.")
            + translate("plan", NO_GPU_HINT),
        )
    warnings: list[str] = []
    decision = decide(
        gfx,
        os_norm,
        rows,
        community.load(),
        rocm_version=rocm_version,
        python_version=python_version,
    )
    if decision.build is None:
        return _refuse(base, decision.reason)
    row = decision.build
    python_ok = decision.python_ok
    if not python_ok:
        pythons = ", ".join(row.python)
        warnings.append(
            translate(
                "plan",
                "torch {torch} from this index has wheels for Python {pythons} only, not "
                "{python}: the environment must be created with one of those Python versions.",
            ).format(torch=row.torch, pythons=pythons, python=py)
        )
        if os_norm == "windows":
            warnings.append(
                translate(
                    "plan",
                    "Install Python {version} (python.org) and choose it as the base Python.",
                ).format(version=row.python[-1])
            )
    elif py is None:
        warnings.append(
            translate("plan", "Python version unknown: wheels exist for {pythons}.").format(
                pythons=", ".join(row.python)
            )
        )
    job_env: dict[str, str] = {}
    if decision.override_value is not None:
        job_env["HSA_OVERRIDE_GFX_VERSION"] = decision.override_value
    warnings.extend(a.text for a in decision.advice)
    if os_norm == "windows" and row.preview:
        warnings.append(
            translate(
                "plan",
                "AMD's PyTorch on Windows is a preview: expect missing features and rough edges.",
            )
        )
    row_rocm = major_minor(row.rocm)
    host_rocm = major_minor(rocm_version)
    if os_norm == "linux" and host_rocm and row_rocm and host_rocm[0] < row_rocm[0]:
        warnings.append(
            translate(
                "plan",
                "The wheels bundle ROCm {rocm} user-space libraries; the installed ROCm is "
                "{installed}. Only the amdgpu kernel driver is used from the host: if it is too "
                "old for ROCm {rocm}, update the driver (see AMD's user/kernel-space "
                "compatibility matrix).",
            ).format(rocm=row.rocm, installed=rocm_version)
        )
    if row.status == "unverified":
        warnings.append(
            translate(
                "plan",
                "This row of the manifest is unverified: check its URL before relying on it.",
            )
        )
    if row.notes:
        warnings.append(row.notes)
    args = pip_args(row, mirrors, index_url, gfx)
    pre = pre_pip_args(row, mirrors)
    url = index_url or mirrors.apply(row.url)
    if url.lower().startswith("http://"):
        host = urlsplit(url).netloc.rpartition("@")[2] or url
        warnings.append(
            translate(
                "plan",
                "The index {url} is plain http: pip ignores it unless {host} is a trusted host. "
                "Use https, or add it as a trusted host (trusted-host = {host} in pip.conf, "
                "with the setting torch_use_pip_config on).",
            ).format(url=url, host=host)
        )
    extra = profiles_data.extras(profiles, profile, os_name=os_norm, torch_rocm=row.rocm, gfx=gfx)
    extra_args = extra_pip_args(extra.requirements, mirrors)
    download = (row.download_mb + extra.download_mb) * MB
    calls = (*pre, args, *((extra_args,) if extra_args else ()))
    sources = [manifest.sources.get(s, s) for s in row.src]
    sources += [profiles.sources.get(s, s) for s in extra.sources]
    return InstallPlan(
        supported=True,
        build_id=row.id,
        torch_version=row.torch,
        rocm_build=row.rocm,
        index_url=url,
        index_kind=row.kind,
        python_versions=row.python,
        python_ok=python_ok,
        pip_args=args,
        pre_pip_args=pre,
        kernels=decision.mode.value,
        command=" && ".join(shlex.join(["python", "-m", "pip", "install", *a]) for a in calls),
        download_bytes=download,
        free_disk_bytes=int(download * (1 + UNPACK_FACTOR)) + DISK_MARGIN_BYTES,
        warnings=tuple(warnings),
        job_env=job_env,
        preview=row.preview,
        status=row.status,
        notes=row.notes,
        sources=tuple(sources),
        extra_packages=extra.requirements,
        extra_pip_args=extra_args,
        extra_lines=extra.lines(),
        four_bit_gpu=extra.four_bit_gpu,
        four_bit_note=extra.note,
        **base,
    )
