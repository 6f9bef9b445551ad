"""The vocabularies a worker must copy (it cannot import rocmpanel) match the originals."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from rocmpanel.base.enums import CheckStatus, Device, Precision

WIRE = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers" / "_wire.py"


def _wire() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rocmpanel_test_wire", WIRE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = sys.stdout
    try:
        spec.loader.exec_module(module)
    finally:
        sys.stdout = saved
    return module


def test_worker_copies_match_the_enums() -> None:
    wire = _wire()
    assert tuple(s.value for s in CheckStatus) == wire.CHECK_STATUSES
    assert tuple(p.value for p in Precision) == wire.PRECISIONS
    assert tuple(d.value for d in Device) == wire.DEVICES


def test_device_reads_older_spellings() -> None:
    assert Device.parse("cuda") is Device.GPU
    assert Device.parse(" CPU ") is Device.CPU
    assert Device.GPU.torch_name == "cuda" and Device.CPU.memory_name == "RAM"


def test_unknown_check_status_is_a_failure_not_a_crash() -> None:
    assert CheckStatus.parse("pass") is CheckStatus.PASS
    assert CheckStatus.parse("exploded") is CheckStatus.FAIL


def test_the_workers_chat_roles_match_the_panels() -> None:
    from rocmpanel.chat.store import ROLES

    assert _wire().ROLES == ROLES
