"""The probe worker's report as typed data, and its readable summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rocmpanel.base.i18n import translate
from rocmpanel.base.units import format_gib


@dataclass(frozen=True)
class ProbeDevice:
    """One GPU as torch in the workload Python sees it."""

    index: int
    name: str | None
    total_memory_bytes: int | None
    gcn_arch_name: str | None
    gfx: str | None
    error: str | None = None


@dataclass(frozen=True)
class ProbeReport:
    """What ``workers/probe.py`` found in a workload Python."""

    python_version: str
    python_executable: str
    system: str
    torch_imported: bool
    torch_version: str | None
    torch_hip: str | None
    torch_cuda: str | None
    build: str | None  # "rocm", "cuda", "cpu", or None when torch did not import
    cuda_available: bool
    devices: tuple[ProbeDevice, ...] = ()
    errors: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeReport:
        devices = tuple(
            ProbeDevice(
                index=int(d.get("index", i)),
                name=d.get("name"),
                total_memory_bytes=d.get("total_memory_bytes"),
                gcn_arch_name=d.get("gcn_arch_name"),
                gfx=d.get("gfx"),
                error=d.get("error"),
            )
            for i, d in enumerate(data.get("devices") or [])
        )
        return cls(
            python_version=str(data.get("python_version", "?")),
            python_executable=str(data.get("python_executable", "?")),
            system=str(data.get("system", "")),
            torch_imported=bool(data.get("torch_imported")),
            torch_version=data.get("torch_version"),
            torch_hip=data.get("torch_hip"),
            torch_cuda=data.get("torch_cuda"),
            build=data.get("build"),
            cuda_available=bool(data.get("cuda_available")),
            devices=devices,
            errors=tuple(str(e) for e in data.get("errors") or ()),
            env=dict(data.get("env") or {}),
        )

    def summary_lines(self) -> list[str]:
        lines = [
            translate("ProbeReport", "Python {version} at {path}").format(
                version=self.python_version, path=self.python_executable
            )
        ]
        if not self.torch_imported:
            reason = "; ".join(self.errors) or translate("ProbeReport", "torch is not installed")
            lines.append(
                translate("ProbeReport", "torch: not importable ({reason})").format(reason=reason)
            )
            return lines
        if self.build == "rocm":
            build = translate("ProbeReport", "ROCm/HIP {version} build").format(
                version=self.torch_hip
            )
        elif self.build == "cuda":
            build = translate("ProbeReport", "CUDA {version} build (not for AMD GPUs)").format(
                version=self.torch_cuda
            )
        else:
            build = translate("ProbeReport", "CPU-only build")
        lines.append(f"torch {self.torch_version}: {build}")
        if not self.cuda_available:
            lines.append(translate("ProbeReport", "GPU visible to torch: no"))
        else:
            lines.append(
                translate("ProbeReport", "GPUs visible to torch: {count}").format(
                    count=len(self.devices)
                )
            )
        na = translate("ProbeReport", "n/a")
        for dev in self.devices:
            if dev.error:
                lines.append(
                    "  "
                    + translate("ProbeReport", "[{index}] error: {error}").format(
                        index=dev.index, error=dev.error
                    )
                )
                continue
            mem = dev.total_memory_bytes
            mem_text = format_gib(mem if isinstance(mem, int) else None)
            lines.append(f"  [{dev.index}] {dev.name or na}  {dev.gfx or na}  {mem_text}")
        lines.extend(translate("ProbeReport", "note: {note}").format(note=e) for e in self.errors)
        return lines
