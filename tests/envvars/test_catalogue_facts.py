"""Facts of issue 11 ("Environment catalogue"), one case each, with the source it comes from.

Every case names its source in the docstring; the catalogue entry must cite the same source
key, so a fact and its evidence cannot drift apart.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from rocmpanel.envvars.catalogue import Catalogue, Status, load_catalogue


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue()


def _cites(catalogue: Catalogue, name: str, *keys: str) -> None:
    info = catalogue.lookup(name)
    assert info is not None, name
    for key in keys:
        assert key in info.sources, f"{name} does not cite {key}"
        assert key in catalogue.sources


# --- allocator options: which name for which torch ----------------------------------------


@pytest.mark.parametrize(
    ("torch_version", "name"),
    [
        ("2.7.1+rocm6.3", "PYTORCH_HIP_ALLOC_CONF"),
        ("2.8.0+rocm6.4", "PYTORCH_HIP_ALLOC_CONF"),
        ("2.9.1+rocm6.4", "PYTORCH_HIP_ALLOC_CONF"),
        ("2.10.0+rocm7.1", "PYTORCH_ALLOC_CONF"),
        ("2.13.0+rocm7.2", "PYTORCH_ALLOC_CONF"),
    ],
)
def test_alloc_conf_name_per_torch(catalogue: Catalogue, torch_version: str, name: str) -> None:
    """pt_alloc_wheels: PyPI wheels 2.8.0 (a1cb3cc0) know no PYTORCH_ALLOC_CONF; in 2.9.0
    (0fabc3ba) c10/cuda/CUDAAllocatorConfig.h still reads only the CUDA/HIP names (issue 183387:
    the new name is ignored by the GPU allocator in 2.9.1); 2.10.0 (449b1768) reads it."""
    assert catalogue.alloc_conf_name(torch_version) == name
    _cites(catalogue, name, "pt_alloc_wheels")


def test_alloc_conf_is_not_the_name_before_2_10(catalogue: Catalogue) -> None:
    """pt_alloc_wheels: the issue says torch 2.8 and FACTS.md says 2.9; the wheels show 2.8
    ignores PYTORCH_ALLOC_CONF and 2.9's GPU allocator does not read it."""
    info = catalogue.lookup("PYTORCH_ALLOC_CONF")
    assert info is not None
    assert not info.recommended_for_torch("2.8.0") and not info.recommended_for_torch("2.9.1")
    assert "2.10" in info.meaning and "2.9" in info.meaning


def test_old_allocator_name_wins_when_both_are_set(catalogue: Catalogue) -> None:
    """pt_alloc_wheels: torch 2.10-2.13 read PYTORCH_CUDA_ALLOC_CONF, then PYTORCH_HIP_ALLOC_CONF,
    then PYTORCH_ALLOC_CONF (2.13.0 run: the CUDA name won); the catalogue must say so."""
    cuda = catalogue.lookup("PYTORCH_CUDA_ALLOC_CONF")
    new = catalogue.lookup("PYTORCH_ALLOC_CONF")
    assert cuda is not None and new is not None
    assert "wins over PYTORCH_ALLOC_CONF" in cuda.caution
    assert "PYTORCH_CUDA_ALLOC_CONF" in new.caution and "unset the old names" in new.caution


def test_installed_torch_reads_the_old_names_first() -> None:
    """pt_alloc_wheels, checked against the torch installed for the tests (2.13.0): its
    c10/cuda/CUDAAllocatorConfig.h asks for PYTORCH_CUDA_ALLOC_CONF, PYTORCH_HIP_ALLOC_CONF,
    PYTORCH_ALLOC_CONF in that order."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    header = (
        Path(next(iter(spec.submodule_search_locations))) / "include/c10/cuda/CUDAAllocatorConfig.h"
    )
    if not header.is_file():
        pytest.skip("this torch ships no c10/cuda headers")
    names = re.findall(r'get_env\("(PYTORCH_[A-Z_]*ALLOC_CONF)"\)', header.read_text())
    if "PYTORCH_ALLOC_CONF" not in names:
        pytest.skip("torch older than 2.10 (no PYTORCH_ALLOC_CONF in the CUDA allocator)")
    assert names == ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"]


# --- visible devices -------------------------------------------------------------------------


def test_rocm_10_docs_list_only_hip_visible_devices(catalogue: Catalogue) -> None:
    """hip_env_101: the ROCm 10.1.0 environment-variable page lists HIP_VISIBLE_DEVICES only;
    clr_flags: the runtime still reads CUDA_VISIBLE_DEVICES."""
    _cites(catalogue, "HIP_VISIBLE_DEVICES", "hip_env_101")
    _cites(catalogue, "CUDA_VISIBLE_DEVICES", "hip_env_101", "clr_flags")
    cuda = catalogue.lookup("CUDA_VISIBLE_DEVICES")
    assert cuda is not None
    assert "lists only HIP_VISIBLE_DEVICES" in cuda.meaning
    assert "HIP_VISIBLE_DEVICES" in cuda.caution


# --- new variables ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("gfx1100;gfx1151", Status.VALID),
        ("gfx90a:xnack+ gfx942", Status.VALID),
        ("gfx11-generic", Status.VALID),
        ("gfx1100,gfx1030", Status.INVALID),
        ("gfx1100;", Status.INVALID),
        ("1100", Status.INVALID),
    ],
)
def test_pytorch_rocm_arch(catalogue: Catalogue, value: str, status: Status) -> None:
    """pt_rocm_arch: torch.utils.cpp_extension splits PYTORCH_ROCM_ARCH on ';' or spaces and
    passes each part as --offload-arch (a comma would reach the compiler inside one flag)."""
    _cites(catalogue, "PYTORCH_ROCM_ARCH", "pt_rocm_arch")
    info = catalogue.lookup("PYTORCH_ROCM_ARCH")
    assert info is not None and not info.before_torch
    assert catalogue.validate("PYTORCH_ROCM_ARCH", value, "linux").status is status


@pytest.mark.parametrize("name", ["HSA_NO_SCRATCH_RECLAIM", "HSA_FORCE_FINE_GRAIN_PCIE"])
def test_hsa_flags_are_on_only_for_1(catalogue: Catalogue, name: str) -> None:
    """rocr_flag_sys: ROCr's flag.h turns HSA_NO_SCRATCH_RECLAIM and HSA_FORCE_FINE_GRAIN_PCIE
    on only for the value "1" (anything else is off), and ROCr is Linux-only."""
    _cites(catalogue, name, "rocr_flag_sys")
    assert catalogue.validate(name, "1", "linux").accepted
    assert catalogue.validate(name, "true", "linux").status is Status.INVALID
    windows = catalogue.validate(name, "1", "windows")
    assert windows.status is Status.WARNING and "nothing on Windows" in windows.message


def test_no_scratch_reclaim_warns_about_held_memory(catalogue: Catalogue) -> None:
    """rocr_env: with HSA_NO_SCRATCH_RECLAIM=1 scratch stays assigned until the process exits."""
    _cites(catalogue, "HSA_NO_SCRATCH_RECLAIM", "rocr_env")
    verdict = catalogue.validate("HSA_NO_SCRATCH_RECLAIM", "1", "linux")
    assert verdict.status is Status.WARNING and "until it exits" in verdict.message


def test_fine_grain_pcie_is_the_rccl_p2p_switch(catalogue: Catalogue) -> None:
    """rccl_tips: RCCL's usage tips (ROCm 10.1.0) enable PCIe peer-to-peer with
    HSA_FORCE_FINE_GRAIN_PCIE=1 on GPUs with large BAR."""
    _cites(catalogue, "HSA_FORCE_FINE_GRAIN_PCIE", "rccl_tips")
    info = catalogue.lookup("HSA_FORCE_FINE_GRAIN_PCIE")
    assert info is not None and "RCCL" in info.meaning and "large BAR" in info.meaning


def test_every_hsa_variable_is_linux_only(catalogue: Catalogue) -> None:
    """rocr_env / therock_1719: HSA_* variables are read by ROCr and libhsakmt, Linux only."""
    hsa = [info for info in catalogue.variables if info.name.startswith("HSA_")]
    assert len(hsa) >= 6
    assert all(info.platforms == ("linux",) for info in hsa)


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("INFO", Status.VALID),
        ("warn", Status.VALID),
        ("Trace", Status.VALID),
        ("LOUD", Status.INVALID),
    ],
)
def test_nccl_debug(catalogue: Catalogue, value: str, status: Status) -> None:
    """rccl_src: RCCL's debug.cc compares NCCL_DEBUG case-insensitively with VERSION, WARN,
    INFO, ABORT, TRACE; rccl_env documents NONE as well."""
    _cites(catalogue, "NCCL_DEBUG", "rccl_env", "rccl_src")
    assert catalogue.validate("NCCL_DEBUG", value, "linux").status is status


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("eth", Status.VALID),
        ("=eth0", Status.VALID),
        ("^docker,lo", Status.VALID),
        ("^=docker0", Status.VALID),
        ("eth0 eth1", Status.INVALID),
        ("", Status.INVALID),
    ],
)
def test_nccl_socket_ifname(catalogue: Catalogue, value: str, status: Status) -> None:
    """rccl_env: NCCL_SOCKET_IFNAME is a comma list of interface prefixes; ^ excludes, =
    matches exactly."""
    _cites(catalogue, "NCCL_SOCKET_IFNAME", "rccl_env")
    assert catalogue.validate("NCCL_SOCKET_IFNAME", value, "linux").status is status


@pytest.mark.parametrize("name", ["NCCL_IB_DISABLE", "NCCL_P2P_DISABLE"])
def test_nccl_disable_switches(catalogue: Catalogue, name: str) -> None:
    """rccl_src: net_ib.cc (NCCL_IB_DISABLE) and graph/paths.cc (NCCL_P2P_DISABLE=1) in RCCL."""
    _cites(catalogue, name, "rccl_src")
    assert catalogue.validate(name, "1", "linux").accepted
    assert catalogue.validate(name, "yes", "linux").status is Status.INVALID


def test_msccl_variables_are_not_offered(catalogue: Catalogue) -> None:
    """rccl_tips: MSCCL and MSCCL++ are removed from RCCL (ROCm 7.14 and 10.1 docs), so the
    catalogue offers no RCCL_MSCCL_* switch."""
    assert "MSCCL" in catalogue.sources["rccl_tips"]
    assert not [name for name in catalogue.known_names() if "MSCCL" in name]


@pytest.mark.parametrize(
    ("value", "status"),
    [("1", Status.VALID), ("true", Status.VALID), ("On", Status.VALID), ("maybe", Status.INVALID)],
)
def test_miopen_disable_cache(catalogue: Catalogue, value: str, status: Status) -> None:
    """miopen_cache: MIOpen's cache.rst disables the kernel cache with MIOPEN_DISABLE_CACHE set
    to true; env.hpp accepts 1/0, true/false, on/off, yes/no, enable(d)/disable(d), any case."""
    _cites(catalogue, "MIOPEN_DISABLE_CACHE", "miopen_cache")
    assert catalogue.validate("MIOPEN_DISABLE_CACHE", value, "linux").status is status


@pytest.mark.parametrize(
    ("value", "status"), [("4", Status.VALID), ("1", Status.VALID), ("0", Status.INVALID)]
)
def test_gpu_max_hw_queues(catalogue: Catalogue, value: str, status: Status) -> None:
    """hip_debug_env / clr_flags: GPU_MAX_HW_QUEUES is an unsigned count of hardware queues per
    device, default 4."""
    _cites(catalogue, "GPU_MAX_HW_QUEUES", "hip_debug_env", "clr_flags")
    info = catalogue.lookup("GPU_MAX_HW_QUEUES")
    assert info is not None and "default 4" in info.meaning
    assert catalogue.validate("GPU_MAX_HW_QUEUES", value, "linux").status is status


@pytest.mark.parametrize(
    ("value", "status"),
    [("8", Status.VALID), ("4,2", Status.VALID), ("0", Status.INVALID), ("auto", Status.INVALID)],
)
def test_omp_num_threads(catalogue: Catalogue, value: str, status: Status) -> None:
    """libgomp: OMP_NUM_THREADS is a comma-separated list of positive integers."""
    _cites(catalogue, "OMP_NUM_THREADS", "libgomp")
    assert catalogue.validate("OMP_NUM_THREADS", value, "linux").status is status


# --- the override ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["HSA_OVERRIDE_GFX_VERSION", "HSA_OVERRIDE_GFX_VERSION_1"])
def test_override_warns_against_gpus_with_native_kernels(catalogue: Catalogue, name: str) -> None:
    """override_harm: AMD (ROCm issues 4557, 5238) and MIOpen issue 3954: an override on a
    GPU that has kernels of its own swaps them for another chip's and faults or hangs."""
    _cites(catalogue, name, "override_harm")
    info = catalogue.lookup(name)
    assert info is not None
    assert "already have kernels" in info.meaning or "already has kernels" in info.meaning
    assert "native kernels" in info.caution
    assert "Caution:" in catalogue.describe(name)
    # The caution is advice for the caller that knows the GPU; a well-formed value still passes.
    assert catalogue.validate(name, "11.0.0", "linux").status is Status.VALID
