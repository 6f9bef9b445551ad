"""Install profiles: the exact plan per profile, where 4-bit on the GPU works, the mirror."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.knowledge import install_profiles
from rocmpanel.knowledge.install_profiles import extras, parse
from rocmpanel.knowledge.torch_builds import Manifest, load_manifest
from rocmpanel.pytorch.plan import Mirrors, plan

CHAT = (
    "transformers>=4.45",
    "accelerate>=1.1.0",
    "safetensors",
    "tokenizers",
    "fastapi>=0.110",
    "uvicorn>=0.29",
)
BNB = "bitsandbytes>=0.50"
NO_4BIT = (
    "4-bit on the GPU: not available for {gfx} with torch built for ROCm {rocm} on {os}, so "
    "bitsandbytes is not installed: {why}. Chat still works in bf16/fp16 on the GPU if the "
    "model fits its memory, or on the CPU."
)
NO_KERNELS = "its PyPI wheels for {os} have no ROCm {rocm} kernels for {gfx}"
FALLBACK_10_1 = (
    "bitsandbytes has no library for ROCm 10.1's HIP 7.16 yet: it loads its ROCm 10.0 one and "
    "warns; reported to work, not verified by rocmpanel."
)


def _no_kernels(gfx: str, rocm: str, os: str) -> str:
    """The exact note for a GPU and ROCm that bitsandbytes' wheels carry no kernels for."""
    return NO_4BIT.format(
        gfx=gfx, rocm=rocm, os=os, why=NO_KERNELS.format(gfx=gfx, rocm=rocm, os=os)
    )


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    return load_manifest(user_path=Path("/nonexistent/torch_builds.yaml"))


def test_the_pytorch_profile_installs_what_it_always_did(manifest: Manifest) -> None:
    p = plan("gfx1100", "7.2.4", "linux", "3.12", manifest, profile="pytorch")
    assert (p.profile, p.extra_packages, p.extra_pip_args, p.extra_lines) == ("pytorch", (), (), ())
    assert p.four_bit_gpu is None and p.four_bit_note == ""
    assert (
        p.worker_pip_args()
        == p.pip_args
        == (
            "torch==2.13.*",
            "torchvision",
            "torchaudio",
            "--index-url",
            "https://download.pytorch.org/whl/rocm7.2",
        )
    )
    assert p.command == (
        "python -m pip install 'torch==2.13.*' torchvision torchaudio "
        "--index-url https://download.pytorch.org/whl/rocm7.2"
    )


def test_rdna3_linux_gets_the_chat_stack_and_bitsandbytes_after_torch(manifest: Manifest) -> None:
    torch_only = plan("gfx1100", "7.2.4", "linux", "3.12", manifest, profile="pytorch")
    p = plan("gfx1100", "7.2.4", "linux", "3.12", manifest, profile="llm")
    assert p.rocm_build == "7.2" and p.extra_packages == (*CHAT, BNB)
    # torch's call first, from its index; then the chat packages from PyPI, never torch's index
    assert p.worker_pip_args() == (
        *torch_only.pip_args,
        "--then",
        *CHAT,
        "bitsandbytes>=0.50",
        "--index-url",
        "https://pypi.org/simple",
    )
    assert p.command == (
        torch_only.command + " && python -m pip install 'transformers>=4.45' "
        "'accelerate>=1.1.0' safetensors tokenizers 'fastapi>=0.110' 'uvicorn>=0.29' "
        "'bitsandbytes>=0.50' "
        "--index-url https://pypi.org/simple"
    )
    assert p.four_bit_gpu is True
    assert p.four_bit_note == "4-bit on the GPU: available (gfx1100, torch built for ROCm 7.2)."
    assert p.extra_lines[-1] == (
        "bitsandbytes>=0.50: 4-bit (NF4) weights on the GPU (0.50 is the first PyPI release "
        "with correct ROCm 4-bit kernels); its Linux wheels include ROCm 7.2 kernels for gfx908, "
        "gfx90a, gfx942, gfx950, gfx1030, gfx1100, gfx1101, gfx1102, gfx1103, gfx1150, gfx1151, "
        "gfx1152, gfx1153, gfx1200, gfx1201"
    )
    assert p.extra_lines[0] == (
        "transformers>=4.45: loads the model and its tokenizer (the chat worker supports 4.45 "
        "and later, transformers 5 included)"
    )
    assert p.download_bytes == torch_only.download_bytes + 155_000_000  # 65 + 90 MB estimates
    assert any("github.com/unslothai/unsloth/pull/7535" in s for s in p.sources)


def test_rdna2_linux_on_rocm_7_2_gets_bitsandbytes(manifest: Manifest) -> None:
    # gfx1030 is in bitsandbytes 0.50.2's rocm64-72 libraries (0.49 had no RDNA2 kernels)
    p = plan("gfx1030", "7.2.4", "linux", "3.12", manifest, profile="llm")
    assert p.rocm_build == "7.2" and p.extra_packages == (*CHAT, BNB) and p.four_bit_gpu is True
    assert p.four_bit_note == "4-bit on the GPU: available (gfx1030, torch built for ROCm 7.2)."


@pytest.mark.parametrize(("os_name", "host_rocm"), [("linux", "10.1.0"), ("windows", None)])
def test_rdna3_on_rocm_10_1_gets_bitsandbytes_with_the_fallback_said(
    manifest: Manifest, os_name: str, host_rocm: str | None
) -> None:
    # AMD's ROCm 10.1 wheels bundle HIP 7.16; bitsandbytes 0.50.2 has up to HIP 7.15 (ROCm 10.0)
    p = plan("gfx1100", host_rocm, os_name, "3.12", manifest, profile="llm")
    assert p.rocm_build == "10.1.0" and p.extra_packages == (*CHAT, BNB)
    assert p.four_bit_gpu is True
    assert p.four_bit_note == (
        f"4-bit on the GPU: available (gfx1100, torch built for ROCm 10.1). {FALLBACK_10_1}"
    )
    assert any("Fizgig PR #103" in s for s in p.sources)


def test_windows_rdna3_on_rocm_7_2_wheels_gets_bitsandbytes(manifest: Manifest) -> None:
    p = plan(
        "gfx1100",
        None,
        "windows",
        "3.12",
        manifest,
        profile="llm",
        build_id="amd-windows-rocm7.2.1-torch2.9",
    )
    assert p.extra_packages == (*CHAT, BNB) and p.four_bit_gpu is True
    assert p.four_bit_note == "4-bit on the GPU: available (gfx1100, torch built for ROCm 7.2)."
    assert p.extra_lines[-1].endswith(
        "; its Windows wheels include ROCm 7.2 kernels for gfx1100, gfx1101, gfx1102, gfx1150, "
        "gfx1151, gfx1200, gfx1201"
    )


def test_rdna3_on_a_rocm_6_4_torch_is_refused_because_its_kernels_are_wrong(
    manifest: Manifest,
) -> None:
    # bitsandbytes#2087: the rocm64 library has gfx1100 kernels, but its fused NF4 GEMM is wrong
    p = plan("gfx1100", "6.4.1", "linux", "3.12", manifest, profile="llm")
    assert p.rocm_build == "6.4" and p.extra_packages == CHAT and p.four_bit_gpu is False
    assert p.four_bit_note == NO_4BIT.format(
        gfx="gfx1100",
        rocm="6.4",
        os="Linux",
        why="its ROCm 6.4 library gives wrong 4-bit results on this GPU (bitsandbytes#2087)",
    )
    assert "bitsandbytes" not in p.command
    assert any("bitsandbytes/issues/2087" in s for s in p.sources)
    # the next RDNA3 target in the same library is not affected
    p = plan("gfx1101", "6.4.1", "linux", "3.12", manifest, profile="llm")
    assert p.rocm_build == "6.4" and p.four_bit_gpu is True


def test_a_rocm_6_3_torch_gets_no_bitsandbytes(manifest: Manifest) -> None:
    # bitsandbytes 0.50 ships no rocm63 library; the fallback to rocm64 is not offered
    p = plan("gfx1100", "6.3.0", "linux", "3.12", manifest, profile="llm")
    assert p.rocm_build == "6.3" and p.extra_packages == CHAT and p.four_bit_gpu is False
    assert p.four_bit_note == _no_kernels("gfx1100", "6.3", "Linux")
    assert "bitsandbytes" not in p.command


def test_the_pypi_mirror_is_used_for_the_chat_packages(manifest: Manifest) -> None:
    mirrors = Mirrors(pytorch_index="https://t.example/whl", pypi_index="https://p.example/simple")
    p = plan("gfx1100", "7.2.4", "linux", "3.12", manifest, profile="llm", mirrors=mirrors)
    assert p.pip_args[-2:] == ("--index-url", "https://t.example/whl/rocm7.2")
    assert p.extra_pip_args == (
        *CHAT,
        "bitsandbytes>=0.50",
        "--index-url",
        "https://p.example/simple",
    )


def test_a_refused_plan_adds_nothing_and_an_unknown_profile_is_an_error(
    manifest: Manifest,
) -> None:
    p = plan(None, None, "linux", "3.12", manifest, profile="llm")
    assert not p.supported and p.extra_pip_args == () and p.profile == "llm"
    with pytest.raises(PanelError) as caught:
        plan("gfx1100", "7.2.4", "linux", "3.12", manifest, profile="chat")
    assert caught.value.message == "There is no install profile 'chat'."


def test_the_rocm_of_the_torch_build_decides_not_the_host(manifest: Manifest) -> None:
    # a ROCm 7.2 host, but gfx906's newest torch is built for ROCm 6.3: that one counts
    p = plan("gfx906", "7.2.4", "linux", "3.12", manifest, profile="llm")
    assert p.rocm_build == "6.3" and p.extra_packages == CHAT
    assert p.four_bit_note == _no_kernels("gfx906", "6.3", "Linux")


@pytest.mark.parametrize(
    ("os_name", "torch_rocm", "gfx", "four_bit"),
    [
        # the boundaries of the data: gfx1150 from ROCm 6.4, gfx950 from 7.0, RDNA1 and
        # gfx1031-1036 from 7.14; Windows has no CDNA before 7.14 and no gfx942 at all
        ("linux", "6.3", "gfx1150", False),
        ("linux", "6.4", "gfx1150", True),
        ("linux", "6.4", "gfx950", False),
        ("linux", "7.0.2", "gfx950", True),
        ("linux", "7.2", "gfx1031", False),
        ("linux", "7.14.1", "gfx1031", True),
        ("linux", "10.0.0", "gfx1250", True),
        ("linux", "10.2.0", "gfx1100", False),
        ("windows", "7.2", "gfx1030", False),
        ("windows", "7.14", "gfx1030", True),
        ("windows", "10.1.0", "gfx942", False),
    ],
)
def test_where_4bit_starts_and_stops(
    os_name: str, torch_rocm: str, gfx: str, four_bit: bool
) -> None:
    data = install_profiles.load()
    found = extras(data, "llm", os_name=os_name, torch_rocm=torch_rocm, gfx=gfx)
    assert found.four_bit_gpu is four_bit
    assert (BNB in found.requirements) is four_bit


@pytest.mark.parametrize(
    ("os_name", "torch_rocm", "gfx", "system", "rocm"),
    [
        ("linux", "7.2", "gfx906", "Linux", "7.2"),  # Vega 20: no kernels in any library
        ("windows", "7.2.1", "gfx942", "Windows", "7.2"),  # CDNA3: Linux-only kernels
    ],
)
def test_a_gpu_without_kernels_gets_no_bitsandbytes(
    os_name: str, torch_rocm: str, gfx: str, system: str, rocm: str
) -> None:
    found = extras(install_profiles.load(), "llm", os_name=os_name, torch_rocm=torch_rocm, gfx=gfx)
    assert (found.requirements, found.four_bit_gpu) == (CHAT, False)
    assert found.note == _no_kernels(gfx, rocm, system)


def test_a_cpu_torch_or_an_unknown_gpu_gets_no_bitsandbytes() -> None:
    data = install_profiles.load()
    cpu = extras(data, "llm", os_name="linux", torch_rocm=None, gfx="gfx1100")
    assert (cpu.requirements, cpu.four_bit_gpu) == (CHAT, False)
    assert cpu.note == (
        "4-bit on the GPU: not available with a torch built without ROCm (a CPU or CUDA "
        "build), so bitsandbytes is not installed. Chat still works on the CPU."
    )
    unknown = extras(data, "llm", os_name="linux", torch_rocm="7.2", gfx=None)
    assert unknown.four_bit_gpu is False
    assert unknown.note == _no_kernels("an unknown GPU", "7.2", "Linux")
    assert extras(data, "pytorch", os_name="linux", torch_rocm="7.2", gfx="gfx1100").packages == ()


MINI = """
profiles:
  llm: {label: L, summary: S, packages: [{requirement: "transformers>=4.45", why: w}]}
bitsandbytes:
  requirement: "bitsandbytes>=0.50"
  why: "4-bit"
  gpu_builds:
    - {os: linux, rocm: ["7.2"], gfx: [gfx1100, gfx1101]}
"""


def test_a_broken_entry_wins_over_a_build_and_its_why_is_the_reason() -> None:
    data = parse(
        MINI + "  broken:\n"
        '    - {os: linux, rocm: "7.2", gfx: gfx1101, src: [s], why: "its kernels are wrong."}\n'
    )
    assert data.broken == (
        install_profiles.Broken("linux", ("7.2",), ("gfx1101",), "its kernels are wrong", ("s",)),
    )
    assert extras(data, "llm", os_name="linux", torch_rocm="7.2.4", gfx="gfx1100").four_bit_gpu
    refused = extras(data, "llm", os_name="linux", torch_rocm="7.2.4", gfx="gfx1101")
    assert refused.requirements == ("transformers>=4.45",) and refused.four_bit_gpu is False
    assert refused.note == NO_4BIT.format(
        gfx="gfx1101", rocm="7.2", os="Linux", why="its kernels are wrong"
    )
    assert refused.sources == ("s",)
    # another OS with the same ROCm and gfx is not matched
    assert extras(data, "llm", os_name="windows", torch_rocm="7.2", gfx="gfx1101").note == (
        _no_kernels("gfx1101", "7.2", "Windows")
    )
    assert parse(MINI).broken == ()


@pytest.mark.parametrize(
    ("entry", "detail"),
    [
        (
            '{os: linux, rocm: ["7.2"], gfx: [gfx1101], why: " "}',
            "ValueError('bitsandbytes.broken: an entry has an empty why')",
        ),
        (
            '{os: Linux, rocm: ["7.2"], gfx: [gfx1101], why: "w"}',
            "ValueError(\"bitsandbytes.broken: os 'Linux' is not linux or windows\")",
        ),
        (
            '{os: windows, rocm: [], gfx: [gfx1101], why: "w"}',
            "ValueError('bitsandbytes.broken: an entry for windows lists no rocm or no gfx')",
        ),
        ('{os: linux, rocm: ["7.2"], gfx: [gfx1101]}', "KeyError('why')"),
    ],
)
def test_a_malformed_broken_entry_is_a_panel_error(entry: str, detail: str) -> None:
    with pytest.raises(PanelError) as caught:
        parse(MINI + f"  broken:\n    - {entry}\n")
    assert caught.value.message == "install_profiles.yaml is malformed."
    assert caught.value.detail == detail


def test_every_entry_names_a_known_source() -> None:
    data = install_profiles.load()
    keys = [s for p in data.profiles.values() for pkg in p.packages for s in pkg.src]
    keys += [*data.bitsandbytes.src, *(s for b in data.gpu_builds for s in b.src)]
    keys += [s for b in data.broken for s in b.src]
    assert [b.src for b in data.broken] == [("bnb_2087",)]
    assert keys and all(k in data.sources for k in keys)


def test_malformed_data_is_a_panel_error() -> None:
    with pytest.raises(PanelError) as caught:
        parse("profiles: {}\n")
    assert caught.value.message == "install_profiles.yaml is malformed."
    with pytest.raises(PanelError) as caught:
        parse("profiles: [\n")
    assert caught.value.message == "install_profiles.yaml is not valid YAML."
