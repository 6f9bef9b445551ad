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
    "accelerate",
    "safetensors",
    "tokenizers",
)
NO_4BIT = (
    "4-bit on the GPU: not available for {gfx} with torch built for ROCm {rocm} on {os} "
    "(bitsandbytes' PyPI wheels have no ROCm kernels for it), so bitsandbytes is not "
    "installed. Chat still works in bf16/fp16 on the GPU if the model fits its memory, or on "
    "the CPU."
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
    assert p.extra_packages == (*CHAT, "bitsandbytes>=0.50")
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
        torch_only.command + " && python -m pip install 'transformers>=4.45' accelerate "
        "safetensors tokenizers 'bitsandbytes>=0.50' --index-url https://pypi.org/simple"
    )
    assert p.four_bit_gpu is True
    assert p.four_bit_note == "4-bit on the GPU: available (gfx1100, torch built for ROCm 7.2)."
    assert p.extra_lines[-1] == (
        "bitsandbytes>=0.50: 4-bit (NF4) weights on the GPU (0.50 is the first PyPI release "
        "with correct ROCm 4-bit kernels); its Linux wheels include ROCm 7.2 kernels for gfx90a, "
        "gfx942, gfx950, gfx1100, gfx1101, gfx1150, gfx1151, gfx1200, gfx1201"
    )
    assert p.extra_lines[0] == (
        "transformers>=4.45: loads the model and its tokenizer (the chat worker supports 4.45 "
        "and later, transformers 5 included)"
    )
    assert p.download_bytes == torch_only.download_bytes + 150_000_000  # 60 + 90 MB estimates
    assert any("github.com/unslothai/unsloth/pull/7535" in s for s in p.sources)


def test_rdna2_linux_gets_no_bitsandbytes_and_says_why(manifest: Manifest) -> None:
    p = plan("gfx1030", "7.2.4", "linux", "3.12", manifest, profile="llm")
    assert p.extra_packages == CHAT and p.four_bit_gpu is False
    assert p.four_bit_note == NO_4BIT.format(gfx="gfx1030", rocm="7.2", os="Linux")


def test_windows_rdna3_on_the_newest_build_has_no_4bit_gpu_path(manifest: Manifest) -> None:
    # AMD's ROCm 10.1 wheels: bitsandbytes' PyPI wheels stop at ROCm 10.0 (0.50.2 notes).
    p = plan("gfx1100", None, "windows", "3.12", manifest, profile="llm")
    assert p.rocm_build == "10.1.0" and p.extra_packages == CHAT
    assert p.four_bit_note == NO_4BIT.format(gfx="gfx1100", rocm="10.1", os="Windows")


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
    assert p.extra_packages == (*CHAT, "bitsandbytes>=0.50") and p.four_bit_gpu is True
    assert p.four_bit_note == (
        "4-bit on the GPU: available (gfx1100, torch built for ROCm 7.2). Windows targets "
        "assumed to be the Linux RDNA ones: bitsandbytes' Windows target list was not read."
    )


def test_an_unsupported_rocm_gets_no_bitsandbytes(manifest: Manifest) -> None:
    # torch 2.14 from the rocm7.14 index: no bitsandbytes PyPI wheel carries ROCm 7.14 kernels.
    p = plan("gfx1100", "7.14.1", "linux", "3.12", manifest, profile="llm")
    assert p.rocm_build == "7.14" and p.extra_packages == CHAT and p.four_bit_gpu is False
    assert p.four_bit_note == NO_4BIT.format(gfx="gfx1100", rocm="7.14", os="Linux")
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


def test_the_rocm_of_the_torch_build_decides_not_the_host() -> None:
    data = install_profiles.load()
    # the boundaries of the data: gfx1150 from ROCm 6.4, gfx950 from 7.0; no 10.1 yet
    assert (
        extras(data, "llm", os_name="linux", torch_rocm="6.3", gfx="gfx1150").four_bit_gpu is False
    )
    assert (
        extras(data, "llm", os_name="linux", torch_rocm="6.4", gfx="gfx1150").four_bit_gpu is True
    )
    assert (
        extras(data, "llm", os_name="linux", torch_rocm="6.4", gfx="gfx950").four_bit_gpu is False
    )
    assert extras(data, "llm", os_name="linux", torch_rocm="7.0.2", gfx="gfx950").four_bit_gpu
    assert not extras(data, "llm", os_name="linux", torch_rocm="10.1.0", gfx="gfx1100").four_bit_gpu
    assert not extras(data, "llm", os_name="linux", torch_rocm=None, gfx="gfx1100").four_bit_gpu
    assert extras(data, "pytorch", os_name="linux", torch_rocm="7.2", gfx="gfx1100").packages == ()


def test_every_entry_names_a_known_source() -> None:
    data = install_profiles.load()
    keys = [s for p in data.profiles.values() for pkg in p.packages for s in pkg.src]
    keys += [*data.bitsandbytes.src, *(s for b in data.gpu_builds for s in b.src)]
    assert keys and all(k in data.sources for k in keys)


def test_malformed_data_is_a_panel_error() -> None:
    with pytest.raises(PanelError) as caught:
        parse("profiles: {}\n")
    assert caught.value.message == "install_profiles.yaml is malformed."
    with pytest.raises(PanelError) as caught:
        parse("profiles: [\n")
    assert caught.value.message == "install_profiles.yaml is not valid YAML."
