"""Installed ROCm / HIP SDK version, kernel driver and OS name, read from files.

Linux: ``$ROCM_PATH`` or ``/opt/rocm*``, ``.info/version`` (e.g. ``6.2.2-116``) or
``include/rocm-core/rocm_version.h``; the amdgpu module version from
``/sys/module/amdgpu/version`` (DKMS builds only). Windows: the HIP SDK's ``HIP_PATH``
(``C:\\Program Files\\AMD\\ROCm\\6.2\\``). Every root is a parameter so tests and captured
trees work.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rocmpanel.machine.sysfs import printable, read_text

_VERSION_RE = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class RocmInstall:
    """One ROCm tree on disk."""

    path: str
    version: str | None


def _version_from_tree(root: Path) -> str | None:
    for name in ("version", "version-dev", "version-utils"):
        match = _VERSION_RE.match(read_text(root / ".info" / name) or "")
        if match:
            return match.group(1)
    header = read_text(root / "include" / "rocm-core" / "rocm_version.h") or ""
    parts = [re.search(rf"#define\s+ROCM_VERSION_{p}\s+(\d+)", header) for p in ("MAJOR", "MINOR")]
    if all(parts):
        patch = re.search(r"#define\s+ROCM_VERSION_PATCH\s+(\d+)", header)
        return ".".join(m.group(1) for m in parts if m) + (f".{patch.group(1)}" if patch else "")
    return None


def find_rocm_installs(opt_root: Path | str = "/opt") -> list[RocmInstall]:
    """``/opt/rocm`` and ``/opt/rocm-X.Y.Z`` trees, ``/opt/rocm`` first."""
    base = Path(opt_root)
    try:
        candidates = sorted(p for p in base.iterdir() if p.name.startswith("rocm"))
    except OSError:
        return []
    candidates.sort(key=lambda p: p.name != "rocm")
    installs = []
    for path in candidates:
        if path.is_dir():
            version = _version_from_tree(path)
            if version is None:
                match = re.fullmatch(r"rocm-(\d+\.\d+(?:\.\d+)?)", path.name)
                version = match.group(1) if match else None
            installs.append(RocmInstall(str(path), version))
    return installs


def rocm_version_linux(
    env: Mapping[str, str] | None = None, opt_root: Path | str = "/opt"
) -> tuple[str | None, list[RocmInstall]]:
    """The ROCm version in use ($ROCM_PATH's, else /opt/rocm's), and every install found."""
    env = os.environ if env is None else env
    installs = find_rocm_installs(opt_root)
    rocm_path = env.get("ROCM_PATH")
    if rocm_path:
        version = _version_from_tree(Path(rocm_path))
        if version:
            return version, installs
    for install in installs:
        if install.version:
            return install.version, installs
    return None, installs


def hip_sdk_version(env: Mapping[str, str] | None = None) -> str | None:
    """The HIP SDK version on Windows, from HIP_PATH (or a HIP_PATH_XY variable)."""
    env = os.environ if env is None else env
    hip_path = env.get("HIP_PATH", "")
    match = _VERSION_RE.search(hip_path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])
    if match:
        return match.group(1)
    numbered = sorted(k for k in env if re.fullmatch(r"HIP_PATH_\d+", k))
    if numbered:
        digits = numbered[-1].rsplit("_", 1)[1]
        return f"{digits[0]}.{digits[1:]}" if len(digits) > 1 else digits
    return None


def amdgpu_driver(sysfs_root: Path | str = "/sys") -> str | None:
    """ "amdgpu 6.8.5" for a DKMS module with a version, "amdgpu" when loaded, else None."""
    module = Path(sysfs_root) / "module" / "amdgpu"
    if not module.is_dir():
        return None
    version = printable(read_text(module / "version"))
    return f"amdgpu {version[:64]}" if version else "amdgpu"


def os_release(etc_root: Path | str = "/etc") -> str | None:
    """PRETTY_NAME from os-release, plus the kernel release when reading the live system."""
    text = read_text(Path(etc_root) / "os-release") or read_text("/usr/lib/os-release")
    name = None
    for line in (text or "").splitlines():
        key, _, value = line.partition("=")
        if key == "PRETTY_NAME":
            name = printable(value.strip().strip('"'))
    return name[:128] if name else None


# Windows 11 is NT 10.0 like Windows 10; only its build number, from 22000 (version 21H2)
# on, tells it apart (https://learn.microsoft.com/en-us/windows/release-health/
# windows11-release-information). Python before 3.12 reports release "10" on Windows 11
# (bpo-45382, python/cpython#91025; 3.12 asks WMI instead), and "10" on Windows Server
# 2016-2025 too, whose builds reach 26100, so a server edition is never renamed.
WINDOWS_11_FIRST_BUILD = 22000


def windows_description(release: str, version: str, edition: str | None = None) -> str:
    """ "Windows 11 (10.0.22631)" from ``platform.release()``, ``platform.version()`` and
    ``platform.win32_edition()``; pure, so every Python's answers can be tested."""
    parts = version.split(".")
    build = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else None
    server = "server" in (edition or "").lower()
    name = release.strip() or "?"
    if name == "10" and build is not None and build >= WINDOWS_11_FIRST_BUILD and not server:
        name = "11"
    if server and "server" not in name.lower():
        name = "Server"
    return f"Windows {name} ({version})" if version else f"Windows {name}"


def os_description(
    etc_root: Path | str = "/etc", *, system: str | None = None, windows: tuple[str, ...] = ()
) -> str:
    """A one-line description of this OS ("Ubuntu 24.04.1 LTS, kernel 6.8.0-47",
    "Windows 11 (10.0.22631)"). ``system`` and ``windows`` (release, version, edition)
    stand in for the live values in tests."""
    if (system or platform.system()) == "Windows":
        if not windows:
            windows = (platform.release(), platform.version(), _win32_edition())
        return windows_description(*windows)
    name = os_release(etc_root) or platform.system()
    return f"{name}, kernel {platform.release()}"


def _win32_edition() -> str:
    try:
        return platform.win32_edition() or ""
    except OSError:
        return ""
