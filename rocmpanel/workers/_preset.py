"""The tuning preset a worker runs under (stdlib only; imported by sibling workers).

The panel puts the preset's environment variables in the job's environment and a JSON
header in ROCMPANEL_PRESET: {"id": ..., "name": ..., "torch": {key: value}} (keys:
rocmpanel/jobs/presets.py TORCH_SETTINGS). A worker calls ``before_torch()`` before it
imports torch and ``after_torch(torch)`` right after; ``summary()`` names the preset for
the worker's result. Settings torch reads from the environment at start (the allocator,
TunableOp) are set by ``before_torch``; the runtime ones by ``after_torch``. Each setting
gives one record {"key", "value", "applied", "note"}; a setting that fails never stops
the worker.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
from typing import Any

import _wire

HEADER_VAR = "ROCMPANEL_PRESET"
#: The panel's data folder (rocmpanel.base.paths.data_dir); TunableOp results go below it.
DATA_DIR_VAR = "ROCMPANEL_DATA_DIR"

#: The allocator variables, in the order torch 2.10 and later read them (the first one set
#: wins). Checked in the torch 2.13.0 wheel (libc10.so; a run with two set: the CUDA one
#: wins) and the env catalogue's source pt_alloc_wheels: 2.8 reads the CUDA then the HIP
#: name; 2.9's CUDA/HIP caching allocator still reads only those two (pytorch issue 183387:
#: PYTORCH_ALLOC_CONF ignored in 2.9.1); 2.10-2.13 read CUDA, HIP, then PYTORCH_ALLOC_CONF.
ALLOC_VARS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF")

#: The TunableOp results file, below the data dir. torch puts the current device ordinal in
#: place of "%d" in PYTORCH_TUNABLEOP_FILENAME (TuningContext::SetFilename, called with
#: insert_device_ordinal for the variable; aten/src/ATen/cuda/tunable/Tunable.cpp), so each
#: device index gets its own file. The ordinal is counted after HIP_VISIBLE_DEVICES /
#: CUDA_VISIBLE_DEVICES, so two different GPUs that each run as device 0 share one file; the
#: validator lines hold no GPU arch. One file per torch version: the CSV's validator lines
#: make torch reject results from another torch/ROCm (aten/src/ATen/cuda/tunable/README.md).
TUNABLEOP_FOLDER = "tunableop"

_SDPA = ("flash", "mem_efficient", "math")

_state: dict[str, Any] = {"header": None, "raw": None, "before": [], "records": []}


def _record(key: str, value: Any, applied: bool, note: str) -> dict[str, Any]:
    return {"key": key, "value": value, "applied": applied, "note": note}


def _torch_version() -> str | None:
    """The installed torch's version, read from its metadata (torch is not imported)."""
    try:
        return importlib.metadata.version("torch")
    except Exception:  # not installed, or broken metadata
        return None


def _major_minor(version: str | None) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def alloc_var(version: str | None) -> str:
    """The allocator variable to set for torch ``version``: PYTORCH_ALLOC_CONF from 2.10
    (the documented name; no deprecation warning); before that, and when the version is
    not known, PYTORCH_CUDA_ALLOC_CONF, the one name every release reads first (ROCm
    builds too; 2.9 warns it is deprecated, but its GPU allocator reads nothing else)."""
    mm = _major_minor(version)
    return "PYTORCH_ALLOC_CONF" if mm is not None and mm >= (2, 10) else "PYTORCH_CUDA_ALLOC_CONF"


def alloc_conf(options: dict[str, Any]) -> str:
    """``key:value,key:value`` as torch's allocator parser wants it: True/False
    capitalised (a lower-case ``true`` is an error when the allocator first reads its
    options, not at ``import torch``; checked in 2.13.0)."""
    return ",".join(f"{key}:{value}" for key, value in options.items())  # str(True) == "True"


def _apply_alloc(value: Any) -> dict[str, Any]:
    for name in ALLOC_VARS:
        if os.environ.get(name):
            return _record("alloc", value, False, f"kept your {name}={os.environ[name]}")
    if not isinstance(value, dict) or not value:
        return _record("alloc", value, False, "not a mapping of allocator options")
    name = alloc_var(_torch_version())
    conf = alloc_conf(value)
    os.environ[name] = conf
    return _record("alloc", value, True, f"{name}={conf}")


def _safe_version(version: str | None) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]", "_", version or "unknown")


def _set_unless_yours(name: str, value: str) -> str:
    """Set ``name`` unless the job's environment already has it (the user's own setting
    wins over a preset's, as in the panel's job environment); what was done, as a note."""
    mine = os.environ.get(name)
    if mine:
        return f"kept your {name}={mine}"
    os.environ[name] = value
    return f"{name}={value}"


def _tunableop_file(notes: list[str]) -> None:
    """PYTORCH_TUNABLEOP_FILENAME below the panel's data dir, one file per device index
    and torch version (notes say where, or why not)."""
    data_dir = os.environ.get(DATA_DIR_VAR)
    if not data_dir:
        notes.append(
            "results in torch's default tunableop_results<device index>.csv, in the job's folder"
        )
        return
    folder = os.path.join(data_dir, TUNABLEOP_FOLDER)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        notes.append(f"results not kept: cannot create {folder}: {exc.strerror or exc}")
        return
    name = f"tunableop_torch-{_safe_version(_torch_version())}_gpu%d.csv"
    os.environ["PYTORCH_TUNABLEOP_FILENAME"] = os.path.join(folder, name)
    notes.append(f"results in {os.environ['PYTORCH_TUNABLEOP_FILENAME']}")


def _apply_tunableop(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return _record("tunableop", value, False, "not a mapping (enabled, tuning)")
    if not value.get("enabled", False):
        mine = os.environ.get("PYTORCH_TUNABLEOP_ENABLED")
        if mine:  # the job's environment has it (the user's job variables): it wins
            return _record(
                "tunableop", value, mine == "0", f"kept your PYTORCH_TUNABLEOP_ENABLED={mine}"
            )
        return _record("tunableop", value, True, "off (PYTORCH_TUNABLEOP_ENABLED left unset)")
    notes = [
        _set_unless_yours("PYTORCH_TUNABLEOP_ENABLED", "1"),
        _set_unless_yours("PYTORCH_TUNABLEOP_TUNING", "1" if value.get("tuning", True) else "0"),
    ]
    if os.environ.get("PYTORCH_TUNABLEOP_FILENAME"):
        notes.append(
            f"kept your PYTORCH_TUNABLEOP_FILENAME={os.environ['PYTORCH_TUNABLEOP_FILENAME']}"
        )
    else:
        _tunableop_file(notes)
    applied = os.environ.get("PYTORCH_TUNABLEOP_ENABLED") == "1"
    return _record("tunableop", value, applied, "; ".join(notes))


def _read_header() -> dict[str, Any] | None:
    raw = os.environ.get(HEADER_VAR)
    if not raw:
        return None
    try:
        header = json.loads(raw)
    except ValueError as exc:
        _wire.log(
            f"The preset header {HEADER_VAR} is not JSON ({exc}); running without a preset.",
            "warning",
        )
        return None
    if not isinstance(header, dict) or not isinstance(header.get("torch", {}), dict):
        _wire.log(
            f"The preset header {HEADER_VAR} is not a preset; running without one.", "warning"
        )
        return None
    return header


def before_torch() -> dict[str, Any] | None:
    """Read the header; set what must be in os.environ before torch starts (the
    allocator variable the installed torch reads, TunableOp's variables and results
    file). Returns the header, or None without one (or with a bad one: logged)."""
    header = _read_header()
    records: list[dict[str, Any]] = []
    settings = (header.get("torch") or {}) if header is not None else {}
    for key, apply in (("alloc", _apply_alloc), ("tunableop", _apply_tunableop)):
        if key in settings:
            try:
                records.append(apply(settings[key]))
            except Exception as exc:  # one setting never stops the worker
                records.append(_record(key, settings[key], False, f"{type(exc).__name__}: {exc}"))
    raw = os.environ.get(HEADER_VAR) if header is not None else None
    _state.update(header=header, raw=raw, before=records, records=list(records))
    return header


# The AMD GPUs where TF32 changes float32 GEMMs: CDNA3 (gfx942) has TF32 matrix
# instructions; on CDNA4 (gfx950) hipBLASLt emulates TF32 with bf16 instructions
# (ROCm/hipBLASLt pull 1806). RDNA and CDNA1/2 have no TF32 (ROCm precision support table:
# https://rocm.docs.amd.com/en/latest/reference/precision-support.html).
_TF32_GFX = ("gfx94", "gfx95")


def _gpu_without_tf32(torch: Any) -> str | None:
    """The gfx target of GPU 0 when it is an AMD GPU without TF32, else None (CPU, CUDA,
    a GPU with TF32, or not known)."""
    try:
        if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
            return None
        arch = str(torch.cuda.get_device_properties(0).gcnArchName).split(":")[0]
    except Exception:  # a property this torch lacks: say nothing rather than guess
        return None
    return None if not arch or arch.startswith(_TF32_GFX) else arch


def _float32_matmul_precision(torch: Any, value: Any) -> str:
    torch.set_float32_matmul_precision(value)
    done = f"torch.set_float32_matmul_precision({value!r})"
    gfx = _gpu_without_tf32(torch) if value != "highest" else None
    if gfx is not None:
        return f"{done}, but {gfx} has no TF32: float32 matmuls run as before"
    return done


def _sdpa_backends(torch: Any, value: Any) -> str:
    allowed = set(value)
    unknown = allowed - set(_SDPA)
    if unknown or not allowed:
        raise ValueError(f"expected a non-empty subset of {', '.join(_SDPA)}")
    backends = torch.backends.cuda
    for name in _SDPA:
        getattr(backends, f"enable_{name}_sdp")(name in allowed)
    return "allowed: " + ", ".join(name for name in _SDPA if name in allowed)


def _memory_fraction(torch: Any, value: Any) -> str | None:
    if not torch.cuda.is_available():
        return None
    count = int(torch.cuda.device_count())
    for index in range(count):
        torch.cuda.set_per_process_memory_fraction(float(value), index)
    return f"set on {count} GPU{'s' if count != 1 else ''}"


def _cudnn_benchmark(torch: Any, value: Any) -> str:
    torch.backends.cudnn.benchmark = bool(value)
    return f"torch.backends.cudnn.benchmark = {bool(value)}"


def _cpu_threads(torch: Any, value: Any) -> str:
    # torch.set_num_threads sets torch's intra-op pool at run time: the real setting.
    # OMP_NUM_THREADS is not set: torch only takes its default from it, and it would also
    # change every other OpenMP library in the process.
    torch.set_num_threads(int(value))
    return f"torch.set_num_threads({int(value)})"


_AFTER = {
    "float32_matmul_precision": _float32_matmul_precision,
    "sdpa_backends": _sdpa_backends,
    "memory_fraction": _memory_fraction,
    "cudnn_benchmark": _cudnn_benchmark,
    "cpu_threads": _cpu_threads,
}


#: Settings that only change what torch does on a GPU: the GPU caching allocator's options
#: (docs.pytorch.org notes/cuda.html, "Memory management": the CUDA/HIP allocator; CPU
#: tensors never go through it), TunableOp (torch.cuda.tunable: GEMMs on CUDA/ROCm),
#: torch.cuda.set_per_process_memory_fraction (per GPU), and cudnn.benchmark (the cuDNN /
#: MIOpen convolution auto-tuner). On a CPU run they are recorded as not applied.
GPU_ONLY = ("alloc", "tunableop", "memory_fraction", "cudnn_benchmark")
NO_EFFECT_ON_CPU = "no effect on CPU"


def _gpu_visible(torch: Any) -> bool:
    """Whether torch sees a GPU (a torch that cannot tell counts as one: no claim made)."""
    try:
        return bool(torch.cuda.is_available())
    except Exception:
        return True


def after_torch(torch: Any) -> list[dict[str, Any]]:
    """Apply the header's torch runtime settings; one record per setting:
    {"key": ..., "value": ..., "applied": bool, "note": "why not / what it did"}.
    The records of ``before_torch`` come first. Without a header: []. When torch sees no
    GPU, the GPU-only settings (:data:`GPU_ONLY`; ``before_torch`` could not know) are
    recorded as not applied: "no effect on CPU"."""
    header = _state["header"]
    if header is None:
        return []
    on_gpu = _gpu_visible(torch)
    records = [
        r if on_gpu else _record(r["key"], r["value"], False, NO_EFFECT_ON_CPU)
        for r in _state["before"]
    ]
    for key, value in (header.get("torch") or {}).items():
        if key in ("alloc", "tunableop"):
            continue
        if not on_gpu and key in GPU_ONLY:
            records.append(_record(key, value, False, NO_EFFECT_ON_CPU))
            continue
        apply = _AFTER.get(key)
        if apply is None:
            records.append(_record(key, value, False, "not a setting this worker knows"))
            continue
        try:
            note = apply(torch, value)
        except Exception as exc:  # one setting never stops the worker
            records.append(_record(key, value, False, f"{type(exc).__name__}: {exc}"))
            continue
        if note is None:
            records.append(_record(key, value, False, NO_EFFECT_ON_CPU))
        else:
            records.append(_record(key, value, True, note))
    _state["records"] = records
    return records


def summary() -> dict[str, Any] | None:
    """{"id", "name"} of the preset this worker runs under, or None."""
    header = _state["header"]
    if header is None:
        return None
    return {"id": str(header.get("id", "")), "name": str(header.get("name", ""))}


def header_hash() -> str | None:
    """First 12 hex digits of the SHA-256 of the header as read (its raw JSON), or None
    without one: the panel compares it across the runs of one side of an A/B benchmark."""
    raw = _state["raw"]
    if raw is None:
        return None
    return hashlib.sha256(str(raw).encode("utf-8")).hexdigest()[:12]


def log_applied(records: list[dict[str, Any]]) -> None:
    """One log line naming the preset and what was and was not applied."""
    info = summary()
    if info is None:
        return
    done = [r["key"] for r in records if r["applied"]]
    not_done = [f"{r['key']} ({r['note']})" for r in records if not r["applied"]]
    text = f"Preset {info['name']}: applied {', '.join(done) or 'nothing'}"
    if not_done:
        text += f"; not applied: {', '.join(not_done)}"
    _wire.log(text + ".", "warning" if not_done else "info")


def report() -> dict[str, Any]:
    """What a worker puts in its result: {"preset": summary(), "preset_settings": records}."""
    return {"preset": summary(), "preset_settings": list(_state["records"])}
