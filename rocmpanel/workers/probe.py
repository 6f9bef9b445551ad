"""Probe the workload Python: interpreter, torch build, and the GPUs torch can see.

Never fails on a machine without torch or without a GPU: it reports what it found. Each
device query is guarded separately, so one broken device does not hide the others.
"""

from __future__ import annotations

import os
import platform
import sys
import time

import _preset
import _wire

ENV_KEYS = (
    "HSA_OVERRIDE_GFX_VERSION",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "ROCM_PATH",
    "HIP_PATH",
)


def _device_info(torch, index: int) -> dict:
    info: dict = {"index": index}
    try:
        props = torch.cuda.get_device_properties(index)
    except Exception as exc:
        info["error"] = f"{type(exc).__name__}: {exc}"
        return info
    info["name"] = getattr(props, "name", None)
    info["total_memory_bytes"] = getattr(props, "total_memory", None)
    arch = getattr(props, "gcnArchName", None)
    info["gcn_arch_name"] = arch or None
    info["gfx"] = arch.split(":")[0] if arch else None
    major, minor = getattr(props, "major", None), getattr(props, "minor", None)
    info["capability"] = f"{major}.{minor}" if major is not None else None
    info["multi_processor_count"] = getattr(props, "multi_processor_count", None)
    return info


def probe() -> dict:
    report: dict = {
        "python_version": platform.python_version(),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "system": platform.system().lower(),
        "machine": platform.machine(),
        "env": {k: os.environ[k] for k in ENV_KEYS if k in os.environ},
        "torch_imported": False,
        "torch_version": None,
        "torch_hip": None,
        "torch_cuda": None,
        "build": None,
        "cuda_available": False,
        "device_count": 0,
        "devices": [],
        "errors": [],
    }
    _wire.progress(0.1, "Importing torch")
    _preset.before_torch()
    report.update(_preset.report())
    started = time.perf_counter()
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken install raising anything
        report["errors"].append(f"import torch failed: {type(exc).__name__}: {exc}")
        return report
    report["torch_import_s"] = round(time.perf_counter() - started, 3)
    _preset.log_applied(_preset.after_torch(torch))
    report.update(_preset.report())
    report["torch_imported"] = True
    report["torch_version"] = getattr(torch, "__version__", None)
    version = getattr(torch, "version", None)
    report["torch_hip"] = getattr(version, "hip", None)
    report["torch_cuda"] = getattr(version, "cuda", None)
    if report["torch_hip"]:
        report["build"] = "rocm"
    elif report["torch_cuda"]:
        report["build"] = "cuda"
    else:
        report["build"] = "cpu"
    _wire.progress(0.5, "Looking for GPUs")
    try:
        report["cuda_available"] = bool(torch.cuda.is_available())
        report["device_count"] = int(torch.cuda.device_count())
    except Exception as exc:
        report["errors"].append(f"torch.cuda query failed: {type(exc).__name__}: {exc}")
        return report
    for index in range(report["device_count"] if report["cuda_available"] else 0):
        report["devices"].append(_device_info(torch, index))
    return report


def main() -> None:
    _wire.result(probe())


if __name__ == "__main__":
    _wire.run_main(main)
