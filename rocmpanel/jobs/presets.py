"""Tuning presets: named sets of environment variables and torch runtime settings.

CONTRACT (filled in by the presets work; signatures are fixed, other modules code
against them):

A preset file is YAML (one preset per file; the built-ins are a list in
``resources/presets.yaml``)::

    id: rdna3-consumer            # slug [a-z0-9][a-z0-9-]*, max 48; file stem of a user preset
    name: RDNA3 consumer          # shown; unique (case-insensitive) among all presets
    description: One or two sentences.
    archs: [rdna3]                # any | rdna2 | rdna3 | rdna4 | cdna2 | cdna3 | cdna4
    env:                          # environment variables (values checked by envvars.catalogue)
      TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL:
        value: "1"
        why: One sentence: what it does.      # required in built-ins
        source: pt_sdpa                       # required in built-ins (free text or a key)
        platforms: [linux]                    # optional: only set there (default: both)
    torch:                        # torch runtime settings, keys of TORCH_SETTINGS
      float32_matmul_precision: {value: high, why: ..., source: ...}
      alloc: {value: {expandable_segments: true}, why: ..., source: ...}

An item may also be written short (``KEY: value``) in a user preset: why/source empty.

The format and its checks live in :mod:`rocmpanel.jobs.preset_schema`, the built-ins and
the user's presets in :mod:`rocmpanel.jobs.preset_store`; both are re-exported here (import
from this module).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs.preset_schema import (
    ARCHS,
    HEADER_VAR,
    NO_PRESET,
    TORCH_SETTINGS,
    Effect,
    Item,
    Preset,
    PresetError,
    Problem,
    Target,
    dump_preset,
    parse_preset,
    parse_preset_list,
    preset_data,
    read_preset_file,
)
from rocmpanel.jobs.preset_store import PresetStore, builtin_presets

__all__ = [
    "ARCHS",
    "HEADER_VAR",
    "NO_PRESET",
    "TORCH_SETTINGS",
    "Effect",
    "Item",
    "Preset",
    "PresetError",
    "PresetStore",
    "Problem",
    "Target",
    "builtin_presets",
    "dump_preset",
    "item_effects",
    "parse_preset",
    "parse_preset_list",
    "preset_data",
    "preset_job_env",
    "read_preset_file",
    "resolve",
]

log = logging.getLogger(__name__)

#: gfx targets with TF32 matrix instructions: CDNA3 (MI300, gfx942) and CDNA4 (MI350,
#: gfx950); RDNA2/3/4 and CDNA1/2 have none (FACTS.md section 5; knobs.md section 7).
TF32_GFX: tuple[str, ...] = ("gfx942", "gfx950")
#: Targets AOTriton never marked experimental in any release: flash/mem-efficient SDPA is on
#: there without TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL (pt_sdpa; ROCm/aotriton
#: v3src/util.cc isArchExperimentallySupported lists gfx1101-1103, gfx1150/1152/1153, gfx1200).
AOTRITON_NEVER_GATED: tuple[str, ...] = ("gfx90a", "gfx942")
#: First upstream torch whose ROCm allocator honours expandable_segments, on ROCm >= 7.0:
#: pytorch pulls 177974 (merged 2026-03-20) and 179930 (2026-04-10) landed after the 2.11
#: branch cut (2026-02-16..19) and before the 2.12 one (2026-04-13..15; pytorch pull 171832).
#: AMD's own ROCm/pytorch release/2.11 carries a backport (ROCm/pytorch pull 3106).
EXPANDABLE_TORCH_FROM = (2, 12)
EXPANDABLE_HIP_FROM = (7, 0)
#: Env variables read only by the GPU stack: a CPU-only run ignores them.
_GPU_PREFIXES = (
    "HSA_",
    "HIP_",
    "AMD_",
    "ROCR_",
    "MIOPEN_",
    "PYTORCH_TUNABLEOP_",
    "TORCH_ROCM_",
    "TORCH_BLAS_",
    "GPU_",
    "CUDA_",
    "NCCL_",
    "FLASH_ATTENTION_",
    "HIPBLASLT_",
)
_GPU_TORCH = ("tunableop", "cudnn_benchmark", "memory_fraction", "alloc", "sdpa_backends")
_NO_GPU = "no GPU: CPU runs ignore it"


def _version(text: str | None) -> tuple[int, int] | None:
    from rocmpanel.envvars.catalogue import torch_minor

    return torch_minor(text) if text else None


def _cpu_only(target: Target) -> bool:
    """No AMD GPU: no gfx and a torch that is known and not a ROCm build."""
    return (
        target.gfx is None
        and target.torch_version is not None
        and ("rocm" not in target.torch_version)
    )


def _unknown(note: str) -> str:
    return f"not checked: {note}"


def _effect(item: Item, target: Target) -> Effect:
    from rocmpanel.envvars.catalogue import load_catalogue
    from rocmpanel.machine.gfx import normalise_gfx, parse_override, same_family

    gfx = normalise_gfx(target.gfx)
    place = target.platform.capitalize()
    if target.platform not in item.platforms:
        only = " and ".join(p.capitalize() for p in item.platforms)
        return Effect(item, False, f"set on {only} only: a {place} job does not get it")
    if item.kind == "env":
        info = load_catalogue().lookup(item.key)
        if info is not None and target.platform not in info.platforms:
            only = " and ".join(p.capitalize() for p in info.platforms)
            return Effect(
                item, False, f"{item.key} is read on {only} only: it does nothing on {place}"
            )
        if _cpu_only(target) and item.key.startswith(_GPU_PREFIXES):
            return Effect(item, False, _NO_GPU)
        if item.key.startswith("HSA_OVERRIDE_GFX_VERSION"):
            if gfx is None:
                return Effect(item, True, _unknown("the GPU is not known"))
            named = parse_override(item.value)
            if named is not None and same_family(named.name, gfx):
                return Effect(
                    item,
                    False,
                    f"the GPU is {gfx}, already in the {named.name} family the "
                    f"override names: it changes nothing",
                )
        if item.key == "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL":
            if gfx is None:
                return Effect(item, True, _unknown("the GPU is not known"))
            if gfx in AOTRITON_NEVER_GATED:
                return Effect(
                    item,
                    False,
                    f"AOTriton never marks {gfx} experimental: its fast attention "
                    "is on without this",
                )
        if item.key == "HIPBLASLT_ALLOW_TF32":
            if gfx is None:
                return Effect(item, True, _unknown("the GPU is not known"))
            if gfx not in TF32_GFX:
                return Effect(item, False, f"{gfx} has no TF32 hardware: nothing to allow")
        return Effect(item, True)
    if _cpu_only(target) and item.key in _GPU_TORCH:
        return Effect(item, False, _NO_GPU)
    if item.key == "float32_matmul_precision" and item.value != "highest":
        if _cpu_only(target):
            return Effect(item, True, _unknown("on CPU the effect depends on the processor"))
        if gfx is None:
            return Effect(item, True, _unknown("the GPU is not known"))
        if gfx not in TF32_GFX:
            return Effect(
                item,
                False,
                f"{gfx} has no TF32 hardware: float32 matmuls stay full float32",
            )
    if item.key == "alloc" and item.value.get("expandable_segments") is True:
        return _expandable(item, target)
    return Effect(item, True)


def _expandable(item: Item, target: Target) -> Effect:
    """expandable_segments: a no-op on Windows, before torch 2.12 and before ROCm 7.0."""
    reason: str | None = None
    if target.platform == "windows":
        reason = "expandable_segments does nothing on Windows"
    else:
        torch = _version(target.torch_version)
        hip = _version(target.hip_version)
        if torch is None:
            return Effect(item, True, _unknown("the torch version is not known"))
        if torch < EXPANDABLE_TORCH_FROM:
            reason = (
                f"torch {torch[0]}.{torch[1]} ignores expandable_segments on ROCm (honoured "
                f"from {EXPANDABLE_TORCH_FROM[0]}.{EXPANDABLE_TORCH_FROM[1]} on ROCm 7.0)"
            )
        elif hip is None:
            return Effect(item, True, _unknown("the HIP version is not known"))
        elif hip < EXPANDABLE_HIP_FROM:
            reason = f"ROCm {hip[0]}.{hip[1]} is too old for expandable_segments (needs 7.0)"
    if reason is None:
        return Effect(item, True)
    if len(item.value) > 1:
        return Effect(item, True, f"{reason}; the other allocator options apply")
    return Effect(item, False, reason)


def item_effects(preset: Preset, target: Target) -> list[Effect]:
    """Each item of ``preset`` and whether it does anything on ``target``."""
    return [_effect(item, target) for item in preset.items()]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def preset_job_env(preset: Preset | None, platform: str) -> dict[str, str | None]:
    """The env overrides a job under ``preset`` gets: its env items for ``platform`` and
    ``HEADER_VAR`` = JSON {"id", "name", "torch": {key: value}} (None preset: {}; the
    header then absent)."""
    if preset is None:
        return {}
    env: dict[str, str | None] = {
        item.key: str(item.value) for item in preset.env if platform in item.platforms
    }
    torch = {item.key: _plain(item.value) for item in preset.torch if platform in item.platforms}
    header = {"id": preset.id, "name": preset.name, "torch": torch}
    env[HEADER_VAR] = json.dumps(header, sort_keys=True, separators=(",", ":"))
    return env


def resolve(ident: str | None, active: str, store: PresetStore | None = None) -> Preset | None:
    """The preset a job runs under: ``ident`` None means ``active`` ("" = none);
    NO_PRESET means none. An active id that no longer exists gives None and logs it; an
    explicit unknown ident raises PanelError."""
    store = store if store is not None else PresetStore()
    if ident is None:
        if not active or active == NO_PRESET:
            return None
        try:
            return store.get(active)
        except PanelError:
            log.warning("The active preset %r no longer exists: jobs run without a preset.", active)
            return None
    if ident == NO_PRESET:
        return None
    return store.get(ident)
