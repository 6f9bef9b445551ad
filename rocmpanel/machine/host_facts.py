"""Facts about this Linux host for the checklist: device nodes, groups, driver, ROCm paths.

Nothing here changes the system or escalates; it only looks (``os.access``, the group
database, /sys/module). Windows and captured systems get a HostFacts with unknowns.
:func:`rocmpanel.machine.inventory.detect_inventory` gathers them with the GPUs.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.registry import RegistryLike, open_registry
from rocmpanel.machine.gpu_model import HostFacts
from rocmpanel.machine.long_paths import read_long_paths
from rocmpanel.machine.parsers.rocminfo import RocminfoReport
from rocmpanel.machine.rocm_version import find_rocm_installs

ENV_KEYS = (
    "HSA_OVERRIDE_GFX_VERSION",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "ROCM_PATH",
    "HIP_PATH",
)


def relevant_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables the checklist judges, including per-node overrides."""
    return {
        k: v for k, v in env.items() if k in ENV_KEYS or k.startswith("HSA_OVERRIDE_GFX_VERSION_")
    }


def _groups_of_process() -> frozenset[str]:
    import grp

    names = set()
    for gid in [*os.getgroups(), os.getegid()]:
        try:
            names.add(grp.getgrgid(gid).gr_name)
        except KeyError:
            continue
    return frozenset(names)


def _groups_in_database(user: str) -> tuple[frozenset[str], frozenset[str]]:
    """(groups the database lists ``user`` in, which of render/video exist)."""
    import grp
    import pwd

    member, existing = set(), set()
    try:
        primary = pwd.getpwnam(user).pw_gid
    except KeyError:
        primary = -1
    for name in ("render", "video"):
        try:
            entry = grp.getgrnam(name)
        except KeyError:
            continue
        existing.add(name)
        if user in entry.gr_mem or entry.gr_gid == primary:
            member.add(name)
    return frozenset(member), frozenset(existing)


def _user() -> str | None:
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return os.environ.get("USER")


def linux_host_facts(
    env: Mapping[str, str] | None = None,
    *,
    dev_root: Path | str = "/dev",
    sysfs_root: Path | str = "/sys",
    opt_root: Path | str = "/opt",
    rocminfo: RocminfoReport | None = None,
) -> HostFacts:
    """Look at this host (read-only)."""
    env = os.environ if env is None else env
    dev = Path(dev_root)
    kfd = dev / "kfd"
    nodes = tuple(sorted(glob.glob(str(dev / "dri" / "renderD*"))))
    user = _user()
    member, existing = _groups_in_database(user) if user else (frozenset(), frozenset())
    rocm_path = env.get("ROCM_PATH")
    wsl = Path("/dev/dxg").exists() or "microsoft" in os.uname().release.lower()
    return HostFacts(
        kfd_present=kfd.exists(),
        kfd_rw=os.access(kfd, os.R_OK | os.W_OK) if kfd.exists() else False,
        kfd_error=rocminfo.kfd_error if rocminfo else None,
        render_nodes=nodes,
        render_rw=bool(nodes) and all(os.access(n, os.R_OK | os.W_OK) for n in nodes),
        user=user,
        process_groups=_groups_of_process(),
        member_groups=member,
        existing_groups=existing,
        amdgpu_loaded=(Path(sysfs_root) / "module" / "amdgpu").is_dir(),
        rocm_installs=tuple(i.path for i in find_rocm_installs(opt_root)),
        rocm_path_valid=Path(rocm_path).is_dir() if rocm_path else None,
        wsl=wsl or bool(rocminfo and rocminfo.wsl),
        hsa_status=rocminfo.hsa_status if rocminfo else None,
        env=relevant_env(env),
    )


def windows_host_facts(
    env: Mapping[str, str] | None = None, reg: RegistryLike | None = None
) -> HostFacts:
    """Windows: the environment and whether long paths are on (no /dev nodes or groups to
    look at). ``reg``: the registry (winreg when not given; tests pass a fake)."""
    env = os.environ if env is None else env
    if reg is None:
        reg = open_registry()
    return HostFacts(env=relevant_env(env), long_paths=read_long_paths(reg, str(paths.envs_dir())))
