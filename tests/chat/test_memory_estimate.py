"""The memory estimate and the fit verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.units import GIB
from rocmpanel.chat.memory_estimate import (
    CPU_PRECISIONS,
    Fit,
    FitVerdict,
    MemoryEstimate,
    default_precision,
    estimate_device,
    estimate_for,
    estimate_memory,
    judge_fit,
)
from rocmpanel.chat.model_check import ModelCheck, ModelShape, TemplateSource

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


# -- exact figures for a small hand-made config (issue 19) ------------------------------------
# vocab 1000 × hidden 64: one embedding matrix is 64 000 weights, embeddings plus an untied
# output head 128 000. KV cache per token: 2 (K and V) × 2 layers × 4 kv heads × 16 dims.
SMALL = ModelShape(hidden_size=64, layers=2, kv_heads=4, head_dim=16, vocab_size=1000)
SMALL_TIED = ModelShape(
    hidden_size=64, layers=2, kv_heads=4, head_dim=16, vocab_size=1000, tied_embeddings=True
)
GPU_FIXED = 536_870_912  # 0.5 GiB: the HIP runtime context
CPU_FIXED = 429_496_729  # int(0.4 GiB): the interpreter with torch


def _sized(total: int, precision: Precision = Precision.FP16) -> MemoryEstimate:
    """An estimate whose total is exactly ``total`` bytes."""
    return MemoryEstimate(precision, 0, weights=total, kv_cache=0, overhead=0)


def _check(parameters: int | None, shape: ModelShape = SMALL) -> ModelCheck:
    return ModelCheck(
        folder=Path("model"),
        architecture="LlamaForCausalLM",
        model_type="llama",
        shape=shape,
        parameters=parameters,
        weight_files=("model.safetensors",),
        weight_bytes=2_000_000,
        weight_dtype="float16",
        tokenizer_files=("tokenizer.json",),
        template=TemplateSource.FILE,
        needs_remote_code=False,
        quantized_on_disk=None,
        problems=(),
        warnings=(),
    )


def test_nf4_weights_are_half_a_byte_plus_a_fp32_absmax_per_64_block() -> None:
    # 872 000 quantized weights at 0.5 + 4/64 = 0.5625 bytes; 128 000 embedding and head
    # weights stay at 2 bytes (fp16 compute dtype).
    nf4 = estimate_memory(1_000_000, SMALL, Precision.NF4, 0)
    assert nf4.weights == 872_000 * 9 // 16 + 128_000 * 2 == 746_500
    assert nf4.kv_cache == 0
    assert nf4.overhead == GPU_FIXED + 59_720  # 8 % of 746 500, rounded down
    assert nf4.total == 746_500 + GPU_FIXED + 59_720


def test_int8_weights_are_a_byte_plus_a_per_row_scale() -> None:
    int8 = estimate_memory(1_000_000, SMALL, Precision.INT8, 0)
    assert int8.weights == 880_720 + 256_000  # 872 000 × 1.01 + 128 000 × 2


def test_tied_embeddings_leave_one_matrix_unquantized_untied_two() -> None:
    untied = estimate_memory(1_000_000, SMALL, Precision.NF4, 0)
    tied = estimate_memory(1_000_000, SMALL_TIED, Precision.NF4, 0)
    assert untied.weights == 872_000 * 9 // 16 + 128_000 * 2 == 746_500
    assert tied.weights == 936_000 * 9 // 16 + 64_000 * 2 == 654_500


def test_a_model_smaller_than_its_embeddings_is_all_compute_dtype() -> None:
    assert estimate_memory(50_000, SMALL, Precision.NF4, 0).weights == 100_000
    assert estimate_memory(64_000, SMALL_TIED, Precision.NF4, 0).weights == 128_000


@pytest.mark.parametrize(
    "shape",
    [
        ModelShape(hidden_size=64, layers=2, kv_heads=4, head_dim=16),
        ModelShape(layers=2, kv_heads=4, head_dim=16, vocab_size=1000),
        ModelShape(hidden_size=64, vocab_size=0),
    ],
)
def test_without_vocab_or_hidden_size_every_weight_is_quantized(shape: ModelShape) -> None:
    assert estimate_memory(1_000_000, shape, Precision.NF4, 0).weights == 562_500


@pytest.mark.parametrize(
    ("precision", "weights", "kv"),
    [
        (Precision.FP32, 4_000_000, 204_800),
        (Precision.BF16, 2_000_000, 102_400),
        (Precision.FP16, 2_000_000, 102_400),
    ],
)
def test_plain_precisions_ignore_the_embeddings(
    precision: Precision, weights: int, kv: int
) -> None:
    estimate = estimate_memory(1_000_000, SMALL, precision, 200)
    # KV: 2 × 2 layers × 4 heads × 16 dims × 200 tokens × 2 or 4 bytes.
    assert (estimate.weights, estimate.kv_cache) == (weights, kv)
    assert estimate.overhead == GPU_FIXED + int(0.08 * (weights + kv))
    assert estimate.context == 200 and estimate.precision is precision


@pytest.mark.parametrize(
    "shape",
    [
        ModelShape(kv_heads=4, head_dim=16),
        ModelShape(layers=2, head_dim=16),
        ModelShape(layers=2, kv_heads=4),
    ],
)
def test_no_kv_cache_when_a_dimension_is_unknown(shape: ModelShape) -> None:
    assert estimate_memory(1000, shape, Precision.FP16, 4096).kv_cache == 0


def test_gpu_and_cpu_overheads_exactly() -> None:
    gpu = estimate_memory(1_000_000, SMALL, Precision.BF16, 100, device=Device.GPU)
    cpu = estimate_memory(1_000_000, SMALL, Precision.BF16, 100, device=Device.CPU)
    # weights 2 000 000 + kv 51 200 = 2 051 200 bytes; 8 % of it is 164 096.
    assert gpu.overhead == GPU_FIXED + 164_096
    assert cpu.overhead == CPU_FIXED + 164_096
    assert estimate_memory(1_000_000, SMALL, Precision.BF16, 100) == gpu  # the GPU by default


def test_zero_is_allowed_and_below_zero_raises() -> None:
    zero = estimate_memory(0, SMALL, Precision.FP16, 0)
    assert (zero.weights, zero.kv_cache, zero.overhead) == (0, 0, GPU_FIXED)
    for parameters, context in ((-1, 0), (0, -1)):
        with pytest.raises(ValueError) as raised:
            estimate_memory(parameters, SMALL, Precision.FP16, context)
        assert str(raised.value) == "parameters and context must not be negative"


def test_estimate_for_a_checked_folder() -> None:
    assert estimate_for(_check(None), Precision.FP16, 100) is None
    assert estimate_for(_check(1_000_000), Precision.NF4, 100) == estimate_memory(
        1_000_000, SMALL, Precision.NF4, 100, device=Device.GPU
    )
    assert estimate_for(_check(1_000_000), Precision.NF4, 100, device=Device.CPU) == (
        estimate_memory(1_000_000, SMALL, Precision.NF4, 100, device=Device.CPU)
    )


TEN_GIB = 10 * GIB  # 0.9 × 10 GiB is exactly 9 GiB in floating point too


@pytest.mark.parametrize(
    ("total", "fit", "message"),
    [
        (9 * GIB, Fit.FITS, "Needs about 9.00 GiB; 10.00 GiB of VRAM is free."),
        (
            9 * GIB + 1,
            Fit.TIGHT,
            "Needs about 9.00 GiB of 10.00 GiB free VRAM: tight, other programs may push it "
            "out of memory.",
        ),
        (
            TEN_GIB,
            Fit.TIGHT,
            "Needs about 10.00 GiB of 10.00 GiB free VRAM: tight, other programs may push it "
            "out of memory.",
        ),
        (
            TEN_GIB + 1,
            Fit.WONT_FIT,
            "Needs about 10.00 GiB but only 10.00 GiB of VRAM is free: it will not fit. "
            "Try 8-bit (bitsandbytes) or a shorter context.",
        ),
    ],
)
def test_fit_boundaries_at_90_and_100_percent_of_free(total: int, fit: Fit, message: str) -> None:
    estimate = _sized(total)
    verdict = judge_fit(estimate, Device.GPU, TEN_GIB)
    assert verdict == FitVerdict(estimate, Device.GPU, TEN_GIB, fit, message)


def test_fit_messages_on_the_cpu_name_ram() -> None:
    verdict = judge_fit(_sized(GIB), Device.CPU, 4 * GIB)
    assert verdict.message == "Needs about 1.00 GiB; 4.00 GiB of RAM is free."


@pytest.mark.parametrize(
    ("total", "fit", "message"),
    [
        (
            8 * GIB,
            Fit.UNKNOWN,
            "Needs about 8.00 GiB; free VRAM is unknown (of 8.00 GiB in all).",
        ),
        (
            8 * GIB + 1,
            Fit.WONT_FIT,
            "Needs about 8.00 GiB but the device has only 8.00 GiB of VRAM: it will not fit."
            " Try 8-bit (bitsandbytes) or a shorter context.",
        ),
    ],
)
def test_fit_against_the_total_when_free_is_unknown(total: int, fit: Fit, message: str) -> None:
    estimate = _sized(total)
    assert judge_fit(estimate, Device.GPU, None, total=8 * GIB) == FitVerdict(
        estimate, Device.GPU, None, fit, message
    )


def test_fit_with_nothing_known() -> None:
    estimate = _sized(GIB)
    assert judge_fit(estimate, Device.CPU, None) == FitVerdict(
        estimate, Device.CPU, None, Fit.UNKNOWN, "Needs about 1.00 GiB; free RAM is unknown."
    )


@pytest.mark.parametrize(
    ("precision", "hint"),
    [
        (Precision.FP32, " Try bfloat16 or a shorter context."),
        (Precision.BF16, " Try 8-bit (bitsandbytes) or a shorter context."),
        (Precision.FP16, " Try 8-bit (bitsandbytes) or a shorter context."),
        (Precision.INT8, " Try 4-bit NF4 (bitsandbytes) or a shorter context."),
        (Precision.NF4, " Try a shorter context or a smaller model."),
    ],
)
def test_a_wont_fit_names_the_next_smaller_precision(precision: Precision, hint: str) -> None:
    verdict = judge_fit(_sized(2 * GIB, precision), Device.GPU, GIB)
    assert verdict.message == (
        "Needs about 2.00 GiB but only 1.00 GiB of VRAM is free: it will not fit." + hint
    )
    unknown = judge_fit(_sized(2 * GIB, precision), Device.GPU, None, total=GIB)
    assert unknown.message.endswith("it will not fit." + hint)


def test_cpu_precisions_best_first() -> None:
    assert CPU_PRECISIONS == (Precision.BF16, Precision.FP32, Precision.NF4, Precision.INT8)
