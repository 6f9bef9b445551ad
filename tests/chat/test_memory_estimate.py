"""The memory estimate and the fit verdict."""

from __future__ import annotations

import pytest

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.units import GIB
from rocmpanel.chat.memory_estimate import (
    CPU_PRECISIONS,
    Fit,
    default_precision,
    estimate_device,
    estimate_memory,
    judge_fit,
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
    wont = judge_fit(estimate, Device.GPU, 8 * GIB)
    assert wont.fit is Fit.WONT_FIT and wont.device is Device.GPU
    assert "will not fit" in wont.message and "8-bit" in wont.message
    assert judge_fit(estimate, Device.GPU, int(estimate.total / 0.95)).fit is Fit.TIGHT
    fits = judge_fit(estimate, Device.CPU, 64 * GIB)
    assert fits.fit is Fit.FITS and "RAM" in fits.message
    unknown = judge_fit(estimate, Device.GPU, None)
    assert unknown.fit is Fit.UNKNOWN and "unknown" in unknown.message


def test_a_known_total_judges_when_free_memory_is_not_known() -> None:
    estimate = estimate_memory(LLAMA2_7B_PARAMS, LLAMA2_7B, Precision.FP16, 4096)
    small = judge_fit(estimate, Device.GPU, None, total=8 * GIB)
    assert small.fit is Fit.WONT_FIT and "8.00 GiB of VRAM" in small.message
    big = judge_fit(estimate, Device.GPU, None, total=48 * GIB)
    assert big.fit is Fit.UNKNOWN and "48.00 GiB in all" in big.message
    # A measured free figure wins over the total.
    assert judge_fit(estimate, Device.GPU, 64 * GIB, total=8 * GIB).fit is Fit.FITS


def test_where_a_load_lands_and_its_default_precision() -> None:
    assert estimate_device(Device.AUTO, has_amd_gpu=True) is Device.GPU
    assert estimate_device(Device.AUTO, has_amd_gpu=False) is Device.CPU
    assert estimate_device(Device.GPU, has_amd_gpu=False) is Device.GPU
    assert default_precision(Device.AUTO, True) is Precision.NF4
    assert default_precision(Device.CPU, True) is Precision.BF16
    assert default_precision(Device.AUTO, False) is Precision.BF16


def test_the_cpu_estimate_has_a_smaller_fixed_overhead() -> None:
    gpu = estimate_memory(1000, ModelShape(), Precision.BF16, 0, device=Device.GPU)
    cpu = estimate_memory(1000, ModelShape(), Precision.BF16, 0, device=Device.CPU)
    assert gpu.overhead - cpu.overhead == int(0.5 * GIB) - int(0.4 * GIB)


def test_cpu_precisions_say_what_works_there() -> None:
    assert set(CPU_PRECISIONS) == {Precision.FP32, Precision.BF16, Precision.NF4, Precision.INT8}
