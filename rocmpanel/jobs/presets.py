"""Tuning presets: named sets of environment variables and torch runtime settings.

CONTRACT (filled in by the presets work; signatures are fixed, other modules code
against them):

A preset file is YAML (one preset per file; the built-ins are a list in
``resources/presets.yaml``)::

    id: rdna3-consumer            # slug [a-z0-9][a-z0-9-]*, max 48; file stem of a user
                                  # preset; not "none", not a Windows device name (con, nul)
    name: RDNA3 consumer          # shown; unique among all presets (see name_key); one line
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
Texts refuse control and invisible characters (descriptions, why and source may hold line
breaks and tabs); env items may not set ROCMPANEL_* or PYTHON* variables, nor the
allocator (ALLOC_VARS) or TunableOp (TUNABLEOP_VARS) variables the worker sets from the
``alloc`` and ``tunableop`` torch settings; a file nesting more than MAX_DEPTH levels is
refused.

The format and its checks live in :mod:`rocmpanel.jobs.preset_schema`, the built-ins and
the user's presets in :mod:`rocmpanel.jobs.preset_store`, reading files in
:mod:`rocmpanel.jobs.preset_yaml`, and what each item does on a machine in
:mod:`rocmpanel.jobs.preset_effects`; all are re-exported here (import from this module).
"""

from __future__ import annotations

import json
import logging

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs.preset_effects import TF32_GFX, item_effects, machine_target
from rocmpanel.jobs.preset_schema import (
    ALLOC_VARS,
    ARCHS,
    HEADER_VAR,
    NO_PRESET,
    TORCH_SETTINGS,
    TUNABLEOP_VARS,
    Effect,
    Item,
    Preset,
    PresetError,
    Problem,
    Target,
    dump_preset,
    name_key,
    plain,
    preset_data,
    visible,
)
from rocmpanel.jobs.preset_store import PresetStore, builtin_presets
from rocmpanel.jobs.preset_yaml import parse_preset, parse_preset_list, read_preset_file

__all__ = [
    "ALLOC_VARS",
    "ARCHS",
    "HEADER_VAR",
    "NO_PRESET",
    "TF32_GFX",
    "TORCH_SETTINGS",
    "TUNABLEOP_VARS",
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
    "machine_target",
    "name_key",
    "parse_preset",
    "parse_preset_list",
    "preset_data",
    "preset_job_env",
    "read_preset_file",
    "resolve",
    "visible",
]

log = logging.getLogger(__name__)


def preset_job_env(preset: Preset | None, platform: str) -> dict[str, str | None]:
    """The env overrides a job under ``preset`` gets: its env items for ``platform`` and
    ``HEADER_VAR`` = JSON {"id", "name", "torch": {key: value}} (None preset: {}; the
    header then absent)."""
    if preset is None:
        return {}
    env: dict[str, str | None] = {
        item.key: str(item.value) for item in preset.env if platform in item.platforms
    }
    torch = {item.key: plain(item.value) for item in preset.torch if platform in item.platforms}
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
