"""Known error strings (as users meet them) → cause and fix."""

from __future__ import annotations

import pytest

from rocmpanel.knowledge.torch_builds import Override
from rocmpanel.pytorch.explanations import explain, match

# Messages as torch/ROCm print them (FACTS.md §2 lists the strings and their causes).
RECORDED = [
    (
        '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
        "no_binary_for_gpu",
    ),
    (
        "RuntimeError: HIP error: invalid device function\nHIP kernel errors might be "
        "asynchronously reported at some other API call",
        "invalid_device_function",
    ),
    (
        "Unable to open /dev/kfd read-write: Permission denied\nuser is not member of render group",
        "kfd_permission",
    ),
    ("AssertionError: Torch not compiled with CUDA enabled", "cpu_build"),
    (
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
        "resources. This error may also occur when the core runtime library needs to spawn "
        "threads or create internal OS-specific events.",
        "hsa_out_of_resources",
    ),
    ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB", "out_of_memory"),
    ("ModuleNotFoundError: No module named 'torch'", "torch_missing"),
]


@pytest.mark.parametrize(("text", "fix_id"), RECORDED)
def test_recorded_messages_map_to_their_fix(text: str, fix_id: str):
    assert match(text) == fix_id
    fix = explain(text=text, gfx="gfx1100")
    assert fix is not None and fix.id == fix_id and fix.cause and fix.fix


def test_unknown_text_has_no_fix():
    assert match("Segmentation fault in something else") is None
    assert explain(text="ValueError: bad shape") is None


def test_no_binary_gives_the_override_value_for_this_gfx_on_linux():
    override = Override("gfx1031", "10.3.0", "gfx1030", ())
    fix = explain(text="hipErrorNoBinaryForGpu", gfx="gfx1031", override=override)
    assert fix is not None and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in fix.fix
    windows = explain(
        text="hipErrorNoBinaryForGpu", gfx="gfx1031", override=override, os_name="windows"
    )
    assert windows is not None and "does nothing on Windows" in windows.fix


def test_invalid_device_function_suggests_hiding_the_igpu():
    fix = explain(text="HIP error: invalid device function")
    assert fix is not None and "HIP_VISIBLE_DEVICES" in fix.fix


def test_kfd_permission_fix_names_the_groups_and_relogin():
    fix = explain("kfd_permission")
    assert fix is not None and "render" in fix.fix and "log out" in fix.fix


def test_worker_fix_ids_all_explained():
    for fix_id in (
        "not_rocm_build",
        "no_gpu",
        "arch_mismatch",
        "wrong_results",
        "vram_mismatch",
        "out_of_memory",
        "torch_missing",
    ):
        assert explain(fix_id) is not None, fix_id
