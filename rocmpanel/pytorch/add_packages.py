"""Add an install profile's packages to an existing environment (e.g. what Chat needs to the
active workload Python), without touching its torch. No Qt.

:func:`plan_packages` asks the interpreter which distributions it has (a subprocess: not on
the GUI thread) and returns the pip call for the missing ones, from PyPI or its mirror;
:func:`packages_job_spec` is the pip_install worker job that runs it (``--python``: no new
environment). Without torch in the environment it refuses: pip would resolve the packages'
``torch`` requirement from PyPI, which has no ROCm build.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocmpanel.base.errors import PanelError
from rocmpanel.base.frozen import own_python
from rocmpanel.base.i18n import translate
from rocmpanel.jobs.installed import read_installed
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.knowledge import install_profiles
from rocmpanel.knowledge.install_profiles import Profiles
from rocmpanel.pytorch.plan import Mirrors, extra_pip_args


@dataclass(frozen=True)
class PackagesPlan:
    """The packages ``python`` lacks for a profile and the pip call that adds them."""

    python: str
    profile: str
    missing: tuple[str, ...]  # requirements, in install order
    present: dict[str, str]  # distribution -> installed version
    pip_args: tuple[str, ...]
    note: str = ""  # the 4-bit verdict for this environment's torch and GPU


def torch_rocm(version: str | None) -> str | None:
    """The ROCm a torch wheel was built for, from its version: "2.13.0+rocm7.2" → "7.2",
    "2.14.0+rocm10.1.0" → "10.1.0"; None for a CPU/CUDA build or an unknown version."""
    if not version or "+rocm" not in version:
        return None
    rest = version.split("+rocm", 1)[1]
    digits = rest.split(".")
    kept = [d for d in digits if d.isdigit()]
    return ".".join(kept[:3]) or None


class NoTorch(PanelError):
    """The environment has no torch: its chat packages cannot be added on their own."""


def _satisfied(requirement: str, present: dict[str, str]) -> bool:
    """Whether an installed version meets ``requirement`` ("transformers>=4.45"): an older
    one is missing too (pip, asked for the requirement, upgrades it and nothing else)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return requirement in present
    have = present.get(parsed.name)
    if have is None:
        return False
    try:
        version = Version(have)
    except InvalidVersion:  # a version pip would not read either: do not loop on it
        return True
    # packaging 26 returns False for an unreadable string instead of raising.
    return parsed.specifier.contains(version, prereleases=True)


def installed_versions(python: str, names: list[str]) -> dict[str, str]:
    """Which of ``names`` are installed in ``python``, with their versions (the packages
    worker, as the Chat tab asks); PanelError when the interpreter cannot be asked."""
    found = read_installed(python, tuple(names))
    return {name: version for name, version in found.versions.items() if version is not None}


def plan_packages(
    python: str,
    profile: str,
    *,
    os_name: str,
    gfx: str | None,
    mirrors: Mirrors,
    profiles: Profiles | None = None,
) -> PackagesPlan:
    """The missing packages of ``profile`` in ``python`` ("" = the panel's own) and their
    pip call; PanelError when torch itself is missing there."""
    data = profiles or install_profiles.load()
    wanted = (*data.get(profile).packages, data.bitsandbytes)
    names = ["torch", *(p.name for p in wanted)]
    present = installed_versions(python, names)
    shown = python or own_python()
    if "torch" not in present:
        raise NoTorch(
            translate(
                "add_packages",
                "torch is not installed in {python}, so its chat packages cannot be added: pip "
                "would fetch a torch without ROCm support with them. Install PyTorch first (the "
                "install plan makes a new environment with the chat packages), or make an "
                "environment with torch active.",
            ).format(python=shown)
        )
    extras = install_profiles.extras(
        data, profile, os_name=os_name, torch_rocm=torch_rocm(present["torch"]), gfx=gfx
    )
    missing = tuple(
        p.requirement for p in extras.packages if not _satisfied(p.requirement, present)
    )
    # The installed torch, pinned in the same call: should a package want another torch,
    # pip stops with a conflict instead of replacing the ROCm build with PyPI's.
    keep = (f"torch=={present['torch']}",) if missing else ()
    return PackagesPlan(
        python,
        profile,
        missing,
        present,
        extra_pip_args((*missing, *keep), mirrors),
        extras.note,
    )


def packages_job_spec(packages: PackagesPlan, *, isolate_pip_config: bool = True) -> JobSpec:
    """The pip_install worker job that adds ``packages.missing`` to its interpreter."""
    if not packages.pip_args:
        raise PanelError(
            translate(
                "add_packages", "Nothing to install: every package of the profile is there already."
            )
        )
    target = packages.python or own_python()
    args = ["--python", target]
    if isolate_pip_config:
        args.append("--isolated-config")
    args += ["--", *packages.pip_args]
    names = ", ".join(packages.missing)
    return JobSpec(f"install {names}", "pip_install", tuple(args), python=packages.python)
