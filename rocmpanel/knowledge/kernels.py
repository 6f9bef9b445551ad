"""The one decision: does this GPU run PyTorch natively, with an override, or not at all?

The Setup verdict, the Setup checklist, ``plan()`` and the validation advice all call
:func:`decide`, so they cannot disagree. It picks the PyTorch build (a row of
torch_builds.yaml) that plan() would install and says how the GPU runs on it:

- ``native``: the build carries kernels for the GPU's own gfx target;
- ``override``: it does not, but a same-family target it carries works with
  HSA_OVERRIDE_GFX_VERSION (Linux only; community knowledge, never recommended when a
  native build exists);
- ``none``: no build in the data runs this GPU.

Known-harmful combinations (resources/community.yaml ``harmful``) come back as advice with
their sources, wherever the decision or the user's own setting would use them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from packaging.version import InvalidVersion, Version

from rocmpanel.knowledge.community import Community, Harm, OverrideRule
from rocmpanel.knowledge.torch_builds import TorchBuild
from rocmpanel.machine.gfx import family as gfx_family


class KernelMode(str, Enum):
    NATIVE = "native"
    OVERRIDE = "override"
    NONE = "none"


@dataclass(frozen=True)
class Advice:
    """A warning with where it comes from."""

    text: str
    source: str
    severity: str = "warning"  # "warning" or "danger"


@dataclass(frozen=True)
class KernelDecision:
    """How ``gfx`` runs PyTorch on ``os``, on which build, and what to watch out for."""

    gfx: str
    os: str
    mode: KernelMode
    build: TorchBuild | None
    override: OverrideRule | None
    reason: str
    advice: tuple[Advice, ...] = ()
    python_ok: bool = True

    @property
    def override_value(self) -> str | None:
        if self.mode is KernelMode.OVERRIDE and self.override is not None:
            return self.override.value
        return None


def major_minor(version: str | None) -> tuple[int, int] | None:
    if not version:
        return None
    match = re.match(r"\s*(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def _torch_key(build: TorchBuild) -> Version:
    """torch's release without its local label ("2.9.1+rocm7.2.1" -> 2.9.1): build labels
    do not order releases."""
    return _version(build.torch.split("+", 1)[0])


def harm_advice(gfx: str | None, override: str | None, community: Community) -> tuple[Advice, ...]:
    """The known harms of setting ``override`` for ``gfx``, as advice."""
    return tuple(_advice(h, community) for h in community.harms_for(gfx, override))


def _advice(harm: Harm, community: Community) -> Advice:
    return Advice(harm.text, community.describe_sources(harm.sources), harm.severity)


def decide(
    gfx: str,
    os_name: str,
    builds: Sequence[TorchBuild],
    community: Community,
    *,
    rocm_version: str | None = None,
    python_version: str | None = None,
) -> KernelDecision:
    """The build for ``gfx`` among ``builds`` (already filtered to ``os_name`` by the
    caller, or not: rows of another OS are ignored) and how the GPU runs on it.

    Preference, in order: native kernels; wheels for this Python; the installed ROCm's own
    release line; a stable row (official, no preview, no pre-release); a PEP 503 index; the
    newest torch; the newest ROCm. An override is chosen only when no row has native kernels.
    """
    rows = [b for b in builds if b.os == os_name]
    rule = community.override_for(gfx) if os_name == "linux" else None
    dangers = (
        [h for h in community.harms_for(gfx, rule.value) if h.severity == "danger"] if rule else []
    )
    if rule is not None and dangers and not any(gfx in b.gfx for b in rows):
        # Never recommend what is known to hang or corrupt: no build, rather than that one.
        return KernelDecision(
            gfx,
            os_name,
            KernelMode.NONE,
            None,
            None,
            f"No PyTorch build in the panel's data has kernels for {gfx}, and the community "
            f"workaround HSA_OVERRIDE_GFX_VERSION={rule.value} is known to harm it: "
            + " ".join(h.text for h in dangers),
            tuple(_advice(h, community) for h in dangers),
        )
    fitting: list[tuple[TorchBuild, bool]] = [(b, True) for b in rows if gfx in b.gfx]
    if rule is not None and not fitting:
        fitting = [(b, False) for b in rows if rule.target in b.gfx]
    if not fitting:
        return KernelDecision(gfx, os_name, KernelMode.NONE, None, None, _none_reason(gfx, os_name))
    py = ".".join(python_version.split(".")[:2]) if python_version else None
    host = major_minor(rocm_version)

    def rank(
        item: tuple[TorchBuild, bool],
    ) -> tuple[bool, bool, bool, bool, bool, Version, Version]:
        row, native = item
        return (
            native,
            py is None or py in row.python,
            host is not None and major_minor(row.rocm) == host,
            row.stable,
            row.kind == "index",
            _torch_key(row),
            _version(row.rocm),
        )

    build, native = max(fitting, key=rank)
    python_ok = py is None or py in build.python
    if native:
        return KernelDecision(
            gfx,
            os_name,
            KernelMode.NATIVE,
            build,
            None,
            f"torch {build.torch} ({build.id}) has kernels for {gfx}: no override is needed.",
            python_ok=python_ok,
        )
    assert rule is not None
    advice = [
        Advice(
            f"{gfx} has no kernels of its own in these wheels: jobs run it as {rule.target} "
            f"with HSA_OVERRIDE_GFX_VERSION={rule.value} (community knowledge, not an AMD "
            "promise; Linux only).",
            community.describe_sources(rule.sources),
        ),
        *harm_advice(gfx, rule.value, community),
    ]
    return KernelDecision(
        gfx,
        os_name,
        KernelMode.OVERRIDE,
        build,
        rule,
        f"No PyTorch build in the data has kernels for {gfx}; torch {build.torch} runs it as "
        f"{rule.target} with HSA_OVERRIDE_GFX_VERSION={rule.value}.",
        tuple(advice),
        python_ok,
    )


def family(gfx: str) -> str:
    """The architecture family a target belongs to, for messages ("RDNA2")."""
    found = gfx_family(gfx)
    return found.label if found is not None else "an unknown family"


def _none_reason(gfx: str, os_name: str) -> str:
    fam = family(gfx)
    if os_name == "windows":
        return (
            f"No PyTorch build for Windows in the panel's data has kernels for {gfx} ({fam}), "
            "and HSA_OVERRIDE_GFX_VERSION has no effect on Windows."
        )
    if fam == "RDNA1":
        return (
            f"No ROCm PyTorch build has kernels for {gfx} (RDNA1), and no reliable "
            "HSA_OVERRIDE_GFX_VERSION substitute exists for it."
        )
    return (
        f"No PyTorch build in the panel's data has kernels for {gfx} ({fam}), nor a known override."
    )


def known_gfx_targets(builds: Sequence[TorchBuild] = ()) -> frozenset[str]:
    """Every gfx target the panel's data knows: the compatibility matrix's releases (what
    ``doctor`` judges by), the PCI id table (what detection maps a card to), the community
    overrides, and the given torch builds' kernel lists. Reads the data set (cached)."""
    from rocmpanel.knowledge import compat_data
    from rocmpanel.machine import pci_ids

    compat = compat_data.load()
    found: set[str] = set()
    for release in compat.releases:
        found |= release.supported | release.deprecated | release.runtime_only
        found |= set(release.limited)
    table = pci_ids.load_table()
    found |= {e.gfx for e in table.devices.values() if e.gfx}
    found |= set(table.gc_targets.values())
    for rule in compat.overrides:
        found |= {rule.gfx, rule.target}
    for build in builds:
        found |= set(build.gfx)
    return frozenset(g.lower() for g in found if g)
