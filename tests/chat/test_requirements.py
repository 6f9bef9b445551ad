"""The chat's package table: what each precision and device needs, version comparison at
its boundaries, and the words of the fix (panel and CLI)."""

from __future__ import annotations

import pytest

from rocmpanel.base.enums import Device, Precision
from rocmpanel.chat.requirements import (
    REQUIREMENTS,
    SERVE_REQUIREMENTS,
    Missing,
    describe_missing,
    distributions,
    missing_for,
    missing_for_serve,
    version_tuple,
)

ALL = {
    "torch": "2.13.0+rocm7.2",
    "transformers": "5.24.0",
    "accelerate": "1.16.0",
    "safetensors": "0.8.0",
    "tokenizers": "0.23.3",
    "bitsandbytes": "0.50.2",
    "fastapi": "0.165.0",
    "uvicorn": "0.55.0",
}


def test_every_distribution_is_asked_about_once() -> None:
    assert distributions() == (
        "torch",
        "transformers",
        "accelerate",
        "safetensors",
        "tokenizers",
        "bitsandbytes",
        "fastapi",
        "uvicorn",
    )


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("2.13.0+cpu", (2, 13, 0)),
        ("0.50.0.dev1", (0, 50, 0)),
        ("4.39", (4, 39)),
        ("1.0rc1", (1, 0)),
        ("5", (5,)),
        ("nightly", ()),
    ],
)
def test_versions_compare_by_their_leading_numbers(text: str, numbers: tuple[int, ...]) -> None:
    assert version_tuple(text) == numbers


def test_everything_installed_means_nothing_missing() -> None:
    for precision in Precision:
        for device in (Device.GPU, Device.CPU):
            assert missing_for(ALL, precision, device) == ()


def test_bitsandbytes_is_needed_for_nf4_and_int8_only() -> None:
    without = {**ALL, "bitsandbytes": None}
    for precision in (Precision.NF4, Precision.INT8):
        assert missing_for(without, precision, Device.CPU) == (
            Missing("bitsandbytes", "0.47", None),
        )
    for precision in (Precision.FP16, Precision.BF16, Precision.FP32):
        assert missing_for(without, precision, Device.GPU) == ()


@pytest.mark.parametrize(
    ("installed", "device", "missing"),
    [
        ("0.50.0", Device.GPU, ()),  # the first with a complete ROCm 4-bit path
        ("0.49.2", Device.GPU, (Missing("bitsandbytes", "0.50", "0.49.2"),)),
        ("0.47.0", Device.CPU, ()),  # 4-bit on the CPU from 0.47
        ("0.46.1", Device.CPU, (Missing("bitsandbytes", "0.47", "0.46.1"),)),
    ],
)
def test_bitsandbytes_minimum_depends_on_the_device(
    installed: str, device: Device, missing: tuple[Missing, ...]
) -> None:
    assert missing_for({**ALL, "bitsandbytes": installed}, Precision.NF4, device) == missing


def test_transformers_minimum_at_its_boundary() -> None:
    assert missing_for({**ALL, "transformers": "4.45.0"}, Precision.BF16, Device.CPU) == ()
    assert missing_for({**ALL, "transformers": "4.44.2"}, Precision.BF16, Device.CPU) == (
        Missing("transformers", "4.45", "4.44.2"),
    )


def test_an_empty_python_lacks_everything_in_table_order() -> None:
    chat = [m.name for m in missing_for({}, Precision.NF4, Device.GPU)]
    serve = [m.name for m in missing_for_serve({})]
    assert (chat, serve) == (list(distributions())[:-2], ["fastapi", "uvicorn"])


def test_the_chat_does_not_need_the_server_packages() -> None:
    without = {**ALL, "fastapi": None, "uvicorn": None}
    for precision in Precision:
        for device in (Device.GPU, Device.CPU):
            assert missing_for(without, precision, device) == ()
    assert missing_for_serve(without) == (
        Missing("fastapi", "0.110", None),
        Missing("uvicorn", "0.29", None),
    )


@pytest.mark.parametrize(
    ("fastapi", "uvicorn", "missing"),
    [
        ("0.110.0", "0.29.0", ()),
        ("0.109.2", "0.29.0", (Missing("fastapi", "0.110", "0.109.2"),)),
        ("0.110.0", "0.28.1", (Missing("uvicorn", "0.29", "0.28.1"),)),
        ("0.165.0", None, (Missing("uvicorn", "0.29", None),)),
    ],
)
def test_the_server_packages_at_their_floors(
    fastapi: str, uvicorn: str | None, missing: tuple[Missing, ...]
) -> None:
    versions = {**ALL, "fastapi": fastapi, "uvicorn": uvicorn}
    assert missing_for_serve(versions) == missing


def test_missing_server_packages_get_the_same_fix() -> None:
    missing = missing_for_serve({"fastapi": "0.100.0"})
    assert describe_missing(missing) == (
        "The workload Python lacks fastapi 0.100.0 (needs 0.110 or newer), uvicorn. "
        "The install button below installs them."
    )
    assert describe_missing(missing, gui=False) == (
        "The workload Python lacks fastapi 0.100.0 (needs 0.110 or newer), uvicorn. "
        "Install them: pip install -U fastapi uvicorn."
    )


def test_the_fix_for_missing_torch_is_the_pytorch_tab() -> None:
    torch_only = (Missing("torch", None, None),)
    assert describe_missing(torch_only) == (
        "PyTorch is not installed in the workload Python: install PyTorch from the PyTorch "
        "tab (its plan picks the build for this GPU)."
    )
    assert describe_missing(torch_only, gui=False) == (
        "PyTorch is not installed in the workload Python: rocmpanel torch plan shows the "
        "build for this GPU, and rocmpanel torch install installs it."
    )


def test_the_fix_for_the_other_packages_is_the_install_button() -> None:
    missing = (Missing("transformers", None, None), Missing("bitsandbytes", "0.50", "0.49.2"))
    assert describe_missing(missing) == (
        "The workload Python lacks transformers, bitsandbytes 0.49.2 (needs 0.50 or newer). "
        "The install button below installs them."
    )
    assert describe_missing(missing, can_install=False) == (
        "The workload Python lacks transformers, bitsandbytes 0.49.2 (needs 0.50 or newer). "
        "Install them into the workload Python."
    )
    assert describe_missing(missing, gui=False) == (
        "The workload Python lacks transformers, bitsandbytes 0.49.2 (needs 0.50 or newer). "
        "Install them: pip install -U transformers bitsandbytes."
    )


def test_torch_and_others_missing_say_both() -> None:
    missing = (Missing("torch", None, None), Missing("accelerate", None, None))
    assert describe_missing(missing) == (
        "PyTorch is not installed in the workload Python: install PyTorch from the PyTorch "
        "tab (its plan picks the build for this GPU). It also lacks accelerate. The install "
        "button below installs them."
    )
    assert describe_missing(()) == ""


def test_the_floors_agree_with_the_llm_install_profile() -> None:
    """What the Chat tab asks for is what its one-click install ("llm") installs."""
    from packaging.requirements import Requirement as Pep508

    from rocmpanel.knowledge import install_profiles

    data = install_profiles.load()
    floors = {}
    for package in (*data.get("llm").packages, data.bitsandbytes):
        spec = Pep508(package.requirement)
        floors[spec.name] = next((s.version for s in spec.specifier if s.operator == ">="), None)
    on_gpu = {
        r.name: r.minimum
        for r in (*REQUIREMENTS, *SERVE_REQUIREMENTS)
        if r.name != "torch" and Device.GPU in r.devices and Precision.NF4 in r.precisions
    }
    assert on_gpu == floors
