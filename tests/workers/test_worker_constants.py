"""The constants a worker must copy from rocmpanel (workers import only the stdlib and the
workload packages, tests/test_import_rules.py) equal their panel-side home.

workers/_preset.py is imported by path, as the worker runs it (tests/workers/
test_preset_header.py does the same); test_worker_copies.py covers the worker scripts that
cannot be imported without running.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest

from rocmpanel.jobs import job_env, preset_effects, presets
from rocmpanel.jobs.preset_schema import SDPA_BACKENDS
from rocmpanel.knowledge.kernels import known_gfx_targets

WORKERS = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(WORKERS))
    return importlib.import_module("_preset")


def test_the_header_and_data_dir_variables(worker: ModuleType) -> None:
    assert (worker.HEADER_VAR, worker.DATA_DIR_VAR) == (presets.HEADER_VAR, job_env.DATA_DIR_VAR)


def test_the_allocator_variables(worker: ModuleType) -> None:
    # The worker's order is the order torch reads them in; the schema's is alphabetical.
    assert sorted(worker.ALLOC_VARS) == sorted(presets.ALLOC_VARS)
    assert len(set(worker.ALLOC_VARS)) == len(worker.ALLOC_VARS) == 3


def test_the_tunableop_variables_the_worker_sets_are_the_ones_presets_refuse() -> None:
    source = (WORKERS / "_preset.py").read_text(encoding="utf-8")
    named = set(re.findall(r"PYTORCH_TUNABLEOP_[A-Z_]+", source))
    assert named == set(presets.TUNABLEOP_VARS)


def test_the_sdpa_backends(worker: ModuleType) -> None:
    assert worker._SDPA == SDPA_BACKENDS


def test_the_settings_without_effect_on_cpu(worker: ModuleType) -> None:
    assert sorted(worker.GPU_ONLY) == sorted(preset_effects.GPU_TORCH_SETTINGS)


def test_the_worker_applies_every_torch_setting(worker: ModuleType) -> None:
    # alloc and tunableop are set before torch is imported (before_torch), the rest after.
    assert set(presets.TORCH_SETTINGS) - set(worker._AFTER) == {"alloc", "tunableop"}
    assert set(worker._AFTER) <= set(presets.TORCH_SETTINGS)


def test_the_tf32_targets_agree_on_every_known_target(worker: ModuleType) -> None:
    # The worker matches gcnArchName by prefix (it sees "gfx942:sramecc+:xnack-"); the
    # panel by exact name. Both must say the same for every target the panel knows.
    targets = sorted(known_gfx_targets() | set(presets.TF32_GFX) | {"gfx940", "gfx941"})
    assert len(targets) > 20
    by_worker = [gfx for gfx in targets if gfx.startswith(worker._TF32_GFX)]
    assert by_worker == list(presets.TF32_GFX)
