"""The memory estimate, the fit verdict and the sysfs VRAM reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.chat.memory_estimate import (
    CPU_PRECISIONS,
    GIB,
    Fit,
    Precision,
    estimate_memory,
    free_vram,
    judge_fit,
    read_amd_vram,
    read_device_vram,
)
from rocmpanel.chat.model_check import ModelShape

# LLaMA-2-7B's published config.
LLAMA2_7B = ModelShape(
    hidden_size=4096,
    layers=32,
    attention_heads=32,
    kv_heads=32,
    head_dim=128,
    vocab_size=32000,
    max_positions=4096,
)
LLAMA2_7B_PARAMS = 6_738_415_616


def test_kv_cache_is_two_times_layers_heads_dim_tokens() -> None:
    estimate = estimate_memory(LLAMA2_7B_PARAMS, LLAMA2_7B, Precision.FP16, 4096)
    assert estimate.kv_cache == 2 * 32 * 32 * 128 * 4096 * 2 == 2 * GIB
    fp32 = estimate_memory(LLAMA2_7B_PARAMS, LLAMA2_7B, Precision.FP32, 4096)
    assert fp32.kv_cache == 4 * GIB


def test_weights_by_precision() -> None:
    fp16 = estimate_memory(LLAMA2_7B_PARAMS, LLAMA2_7B, Precision.FP16, 0)
    assert fp16.weights == LLAMA2_7B_PARAMS * 2
    nf4 = estimate_memory(LLAMA2_7B_PARAMS, LLAMA2_7B, Precision.NF4, 0)
    int8 = estimate_memory(LLAMA2_7B_PARAMS, LLAMA2_7B, Precision.INT8, 0)
    # Embeddings and the head stay 16-bit, so NF4 is a bit over a quarter of fp16.
    assert 0.27 * fp16.weights < nf4.weights < 0.33 * fp16.weights
    assert nf4.weights < int8.weights < fp16.weights


def test_llama2_7b_nf4_fits_the_guides_8_gb_target() -> None:
    estimate = estimate_memory(LLAMA2_7B_PARAMS, LLAMA2_7B, Precision.NF4, 4096)
    assert 5 * GIB < estimate.total < 8 * 10**9


def test_gqa_models_need_less_kv_cache() -> None:
    gqa = ModelShape(hidden_size=4096, layers=32, kv_heads=8, head_dim=128)
    estimate = estimate_memory(8_000_000_000, gqa, Precision.NF4, 8192)
    assert estimate.kv_cache == 2 * 32 * 8 * 128 * 8192 * 2


def test_unknown_shape_gives_no_kv_and_bad_input_raises() -> None:
    assert estimate_memory(1000, ModelShape(), Precision.BF16, 4096).kv_cache == 0
    with pytest.raises(ValueError):
        estimate_memory(-1, ModelShape(), Precision.BF16, 1)


def test_fit_verdicts() -> None:
    estimate = estimate_memory(LLAMA2_7B_PARAMS, LLAMA2_7B, Precision.FP16, 4096)
    wont = judge_fit(estimate, "gpu", 8 * GIB)
    assert wont.fit is Fit.WONT_FIT
    assert "will not fit" in wont.message and "8-bit" in wont.message
    assert judge_fit(estimate, "gpu", int(estimate.total / 0.95)).fit is Fit.TIGHT
    fits = judge_fit(estimate, "cpu", 64 * GIB)
    assert fits.fit is Fit.FITS and "RAM" in fits.message
    unknown = judge_fit(estimate, "gpu", None)
    assert unknown.fit is Fit.UNKNOWN and "unknown" in unknown.message


def test_cpu_precisions_say_what_works_there() -> None:
    assert set(CPU_PRECISIONS) == {Precision.FP32, Precision.BF16, Precision.NF4, Precision.INT8}


def _card(root: Path, name: str, vendor: str, total: int | None, used: int | None) -> None:
    device = root / name / "device"
    device.mkdir(parents=True)
    (device / "vendor").write_text(vendor + "\n")
    if total is not None:
        (device / "mem_info_vram_total").write_text(f"{total}\n")
    if used is not None:
        (device / "mem_info_vram_used").write_text(f"{used}\n")


def test_read_amd_vram_from_a_drm_tree(tmp_path: Path) -> None:
    _card(tmp_path, "card0", "0x1002", 16 * GIB, 1 * GIB)
    _card(tmp_path, "card1", "0x10de", 8 * GIB, 0)  # not AMD
    _card(tmp_path, "card2", "0x1002", 8 * GIB, 7 * GIB)
    _card(tmp_path, "card3", "0x1002", None, None)  # an APU without the files
    (tmp_path / "card0-DP-1").mkdir()
    readings = read_amd_vram(tmp_path)
    assert [r.card for r in readings] == ["card0", "card2"]
    assert free_vram(tmp_path) == 15 * GIB
    assert free_vram(tmp_path / "missing") is None


def test_real_sysfs_snapshots(shared_fixtures: Path) -> None:
    sysfs = shared_fixtures / "sysfs"
    rx6900 = read_device_vram(sysfs / "rx6900xt", "card0")
    assert rx6900 is not None
    assert (rx6900.total, rx6900.used) == (17163091968, 668274688)
    assert rx6900.free == 17163091968 - 668274688
    # These snapshots lack the mem_info files: not reported, not zero.
    assert read_device_vram(sysfs / "rx7900xt", "card1") is None
