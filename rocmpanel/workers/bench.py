"""One side of an A/B benchmark, run inside the workload Python under a tuning preset.

Usage: ``bench.py --workload gemm|sdpa|alloc|chat [--device auto|cpu|cuda] [--quick]
[--model DIR] [--precision auto|fp16|bf16|fp32]``

The panel starts a fresh process per run (A, B, A, B, …) with the preset in the job's
environment; this script applies the preset's header before and after importing torch
(``_preset``), measures one workload and sends one result::

    {"cases": [{"case", "unit", "higher_is_better", "value"}], "device_label", "device",
     "torch_version", "preset": {"id", "name"} | None, "preset_hash": "<12 hex>" | None,
     "preset_settings": [...], "extra"}

Every case is a figure the panel compares across runs; sizes are fixed per mode so the two
sides measure exactly the same work. A failure is an ``error`` event with a plain message
and a non-zero exit.
"""

from __future__ import annotations

import argparse
import functools
import gc
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import _preset
import _wire
from _chat_errors import is_oom

WORKLOADS = ("gemm", "sdpa", "alloc", "chat")
# Timed loops run at least this many calls and about this long (after a warm-up).
MIN_ITERS = 3
TARGET_S = {True: 0.05, False: 0.5}  # by --quick
MAX_ITERS = 10_000
# Greedy tokens the chat workload generates (after a 2-token warm-up).
CHAT_TOKENS = {True: 16, False: 128}
#: A copy of rocmpanel.tuning.bench.CHAT_NEEDS_MODEL (workers import no rocmpanel; a test
#: ties the two).
CHAT_NEEDS_MODEL = (
    "The chat workload needs a model folder: choose a model in the Chat tab, or pass "
    "--model DIR to `rocmpanel bench`."
)
CHAT_PROMPT = "Explain in one paragraph what a GPU does when it multiplies two matrices."


class BenchFailure(Exception):
    """A failure with a message for the user and a ``kind`` for the panel."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="One run of rocmpanel's A/B benchmark.")
    parser.add_argument("--workload", choices=WORKLOADS, required=True)
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--quick", action="store_true", help="small sizes (tests, CPU)")
    parser.add_argument("--model", default="", help="chat: the model folder")
    parser.add_argument("--precision", choices=("auto", "fp16", "bf16", "fp32"), default="auto")
    return parser.parse_args(argv)


# -- timing --------------------------------------------------------------------------------
def _sync(torch: Any, device: str) -> Callable[[], None]:
    if device == "cuda":
        sync: Callable[[], None] = torch.cuda.synchronize
        return sync
    return lambda: None


def timed(fn: Callable[[], Any], sync: Callable[[], None], quick: bool) -> float:
    """Seconds per call of ``fn``: two warm-up calls, then enough calls to fill the target
    time (the count is chosen from the warm-up, so the clock is read only twice)."""
    fn()
    sync()
    start = time.perf_counter()
    fn()
    sync()
    once = max(time.perf_counter() - start, 1e-9)
    iters = max(MIN_ITERS, min(MAX_ITERS, int(TARGET_S[quick] / once)))
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - start) / iters


def case(name: str, unit: str, higher_is_better: bool, value: float) -> dict[str, Any]:
    return {"case": name, "unit": unit, "higher_is_better": higher_is_better, "value": value}


# -- the workloads -------------------------------------------------------------------------
def gemm_sizes(device: str, quick: bool) -> tuple[int, ...]:
    if quick:
        return (128, 256)
    return (1024, 2048, 4096) if device == "cuda" else (256, 512)


def gemm_dtypes(device: str) -> tuple[str, ...]:
    return ("fp32", "fp16", "bf16") if device == "cuda" else ("fp32", "bf16")


DTYPE_NAMES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def run_gemm(torch: Any, device: str, quick: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """TFLOP/s of an n x n matrix product (2 n^3 floating-point operations per call)."""
    sync = _sync(torch, device)
    plan = [(n, d) for n in gemm_sizes(device, quick) for d in gemm_dtypes(device)]
    cases = []
    for index, (n, dtype_name) in enumerate(plan):
        _wire.progress(index / len(plan), f"GEMM {n} {dtype_name}")
        dtype = getattr(torch, DTYPE_NAMES[dtype_name])
        gen = torch.Generator(device=device).manual_seed(0)
        a = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
        b = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
        seconds = timed(functools.partial(torch.mm, a, b), sync, quick)
        cases.append(case(f"gemm {n} {dtype_name}", "TFLOP/s", True, 2 * n**3 / seconds / 1e12))
        del a, b
    return cases, {}


def sdpa_shapes(device: str, quick: bool) -> tuple[tuple[int, int, int, int], ...]:
    """(batch, heads, sequence, head_dim) of the attention calls."""
    if quick:
        return ((1, 4, 128, 64), (2, 8, 256, 64))
    if device == "cuda":
        return ((4, 16, 1024, 64), (2, 16, 4096, 128))
    return ((1, 8, 512, 64), (2, 8, 1024, 64))


def sdpa_backends(torch: Any) -> dict[str, bool]:
    """Which scaled_dot_product_attention backends torch may pick (torch.backends.cuda)."""
    backends = torch.backends.cuda
    found = {}
    for name in ("flash", "mem_efficient", "math", "cudnn"):
        probe = getattr(backends, f"{name}_sdp_enabled", None)
        if callable(probe):
            found[name] = bool(probe())
    return found


def run_sdpa(torch: Any, device: str, quick: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """ms per call of torch.nn.functional.scaled_dot_product_attention (fp16 on a GPU,
    fp32 on the CPU), causal, at fixed shapes."""
    sync = _sync(torch, device)
    dtype = torch.float16 if device == "cuda" else torch.float32
    attention = torch.nn.functional.scaled_dot_product_attention
    shapes = sdpa_shapes(device, quick)
    cases = []
    for index, (batch, heads, seq, dim) in enumerate(shapes):
        _wire.progress(index / len(shapes), f"SDPA {batch}x{heads}x{seq}x{dim}")
        gen = torch.Generator(device=device).manual_seed(0)
        q, k, v = (
            torch.randn(batch, heads, seq, dim, device=device, dtype=dtype, generator=gen)
            for _ in range(3)
        )
        with torch.inference_mode():
            seconds = timed(functools.partial(attention, q, k, v, is_causal=True), sync, quick)
        name = f"sdpa b{batch} h{heads} s{seq} d{dim} {'fp16' if device == 'cuda' else 'fp32'}"
        cases.append(case(name, "ms", False, seconds * 1e3))
        del q, k, v
    return cases, {"sdpa_backends": sdpa_backends(torch)}


#: Tensors one churn iteration allocates, and the exponent bound of their element counts
#: (by --quick). Each count is 1, 3, 5 or 7 times 2**k, 10 <= k < top: from 1 Ki elements
#: to 7 * 2**(top - 1): 3.5 Mi (14 MiB of float32) quick, 14 Mi (56 MiB) full.
ALLOC_COUNT = {True: 64, False: 128}
ALLOC_TOP = {True: 20, False: 22}
FLOAT32_BYTES = 4


def alloc_pattern(quick: bool) -> list[int]:
    """Element counts of the float32 tensors one iteration allocates: a fixed mix (the same
    in every run) of :data:`ALLOC_COUNT` tensors up to 7 * 2**(ALLOC_TOP - 1) elements.
    Planned peak (:func:`alloc_peak_bytes`): 0.09 GiB quick, 0.83 GiB full, so a full run
    fits an 8 GiB card with room for the allocator's rounding and other programs."""
    rng = random.Random(0)
    top = ALLOC_TOP[quick]
    return [rng.choice((1, 3, 5, 7)) << rng.randrange(10, top) for _ in range(ALLOC_COUNT[quick])]


def alloc_peak_bytes(sizes: list[int]) -> int:
    """Bytes the tensors of one churn iteration hold at most (before the allocator rounds
    them up): all of them at first; then the odd ones with the refill (every third size)."""
    held_all = sum(sizes)
    odd_and_refill = sum(sizes[1::2]) + sum(sizes[::3])
    return max(held_all, odd_and_refill) * FLOAT32_BYTES


def run_alloc(torch: Any, device: str, quick: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Allocation churn: each iteration allocates tensors of mixed sizes, frees every other
    one, allocates again into the holes, then frees all; ms per iteration. On a GPU also
    peak reserved / peak allocated memory: how much the caching allocator held beyond what
    the tensors needed (1.0 = no fragmentation)."""
    sync = _sync(torch, device)
    sizes = alloc_pattern(quick)
    iterations = 5 if quick else 20
    _wire.progress(0.0, f"Allocation churn ({len(sizes)} tensors per iteration)")

    def churn() -> None:
        held = [torch.empty(n, device=device) for n in sizes]
        for index in range(0, len(held), 2):
            held[index] = None
        refill = [torch.empty(n, device=device) for n in reversed(sizes[::3])]
        del held, refill

    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    churn()
    sync()
    started = time.perf_counter()
    for index in range(iterations):
        churn()
        _wire.progress((index + 1) / iterations, "Allocation churn")
    sync()
    per_iter_ms = (time.perf_counter() - started) / iterations * 1e3
    cases = [case("alloc churn", "ms", False, per_iter_ms)]
    extra: dict[str, Any] = {}
    if device == "cuda":
        reserved = torch.cuda.max_memory_reserved()
        allocated = torch.cuda.max_memory_allocated()
        if allocated > 0:
            cases.append(case("alloc peak reserved/allocated", "x", False, reserved / allocated))
        extra = {"peak_reserved_bytes": reserved, "peak_allocated_bytes": allocated}
    gc.collect()
    return cases, extra


class _Clock:
    """A generate() streamer that notes when the first new token arrives (the first
    ``put`` is the prompt; see transformers' BaseStreamer)."""

    def __init__(self) -> None:
        self.puts = 0
        self.first_at: float | None = None

    def put(self, value: Any) -> None:
        self.puts += 1
        if self.puts == 2:
            self.first_at = time.perf_counter()

    def end(self) -> None:
        return None


def run_chat(
    torch: Any, device: str, quick: bool, model_dir: str, precision: str, threads_set: bool
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Greedy decode speed of a model, loaded as the chat worker loads it: tokens per second
    after the first (the first includes the prompt), and the time to the first token."""
    from pathlib import Path

    from _chat_errors import WorkerFailure
    from _chat_generate import decode_speed
    from _chat_load import check_folder, dtype_keyword, leave_a_core_free, weight_kwargs

    if not model_dir:
        raise BenchFailure(CHAT_NEEDS_MODEL, "no_model")
    try:
        check_folder(Path(model_dir), trust_remote_code=False)
    except WorkerFailure as exc:
        raise BenchFailure(str(exc), exc.kind) from None
    _wire.progress(0.05, "Importing transformers")
    import transformers

    transformers.logging.set_verbosity_error()
    if device == "cpu" and not threads_set:
        leave_a_core_free(torch)  # as the chat worker does, unless the preset chose
    if precision == "auto":
        on_gpu_bf16 = device == "cuda" and torch.cuda.is_bf16_supported()
        precision = "bf16" if on_gpu_bf16 else ("fp16" if device == "cuda" else "fp32")
    kwargs = {"use_safetensors": True, **weight_kwargs(transformers, torch, precision, device)}
    _wire.progress(0.1, f"Loading the model ({precision} on {device})")
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        model_dir, **dtype_keyword(transformers, kwargs)
    )
    model.eval()
    encoded = tokenizer(CHAT_PROMPT, return_tensors="pt").to(model.device)
    pad = tokenizer.pad_token_id or tokenizer.eos_token_id
    count = CHAT_TOKENS[quick]
    sync = _sync(torch, device)

    def generate(tokens: int, clock: _Clock | None = None) -> Any:
        with torch.inference_mode():
            return model.generate(
                **encoded,
                max_new_tokens=tokens,
                min_new_tokens=tokens,  # exactly ``tokens``: the end token is held back
                do_sample=False,
                pad_token_id=pad,
                streamer=clock,
            )

    _wire.progress(0.5, "Warm-up")
    generate(2)
    sync()
    _wire.progress(0.6, f"Generating {count} tokens")
    clock = _Clock()
    started = time.perf_counter()
    ids = generate(count, clock)
    sync()
    ended = time.perf_counter()
    new_tokens = int(ids.shape[-1]) - int(encoded["input_ids"].shape[-1])
    speed = decode_speed(new_tokens, clock.first_at, ended)
    if speed is None or clock.first_at is None:
        raise BenchFailure(
            f"The model produced {new_tokens} tokens; decode speed needs at least 2.", "generate"
        )
    cases = [
        case("chat decode", "tok/s", True, speed),
        case("chat first token", "ms", False, (clock.first_at - started) * 1e3),
    ]
    return cases, {"precision": precision, "new_tokens": new_tokens}


# -- the run -------------------------------------------------------------------------------
def pick_device(torch: Any, wanted: str) -> str:
    available = bool(torch.cuda.is_available())
    if wanted == "cuda" and not available:
        raise BenchFailure(
            "No GPU is visible to torch in this Python (torch "
            f"{torch.__version__}); run with --device cpu or pick a ROCm build.",
            "no_gpu",
        )
    return "cuda" if wanted != "cpu" and available else "cpu"


def device_label(torch: Any, device: str) -> str:
    """ "CPU", or the GPU's name with its gfx target ("AMD Radeon RX 7900 XTX (gfx1100)")."""
    if device == "cpu":
        return "CPU"
    name = torch.cuda.get_device_name(0)
    arch = getattr(torch.cuda.get_device_properties(0), "gcnArchName", "") or ""
    gfx = arch.split(":", 1)[0]
    return f"{name} ({gfx})" if gfx else name


def measure(args: argparse.Namespace) -> dict[str, Any]:
    _preset.before_torch()
    _wire.progress(0.0, "Importing torch")
    try:
        import torch
    except ImportError as exc:
        raise BenchFailure(
            f"torch cannot be imported in {sys.executable} ({exc}); install PyTorch in the "
            "PyTorch tab or pick another workload Python.",
            "no_torch",
        ) from None
    settings = _preset.after_torch(torch)
    _preset.log_applied(settings)
    device = pick_device(torch, args.device)
    threads_set = any(s.get("key") == "cpu_threads" and s.get("applied") for s in settings)
    try:
        if args.workload == "chat":
            cases, extra = run_chat(
                torch, device, args.quick, args.model, args.precision, threads_set
            )
        else:
            runner = {"gemm": run_gemm, "sdpa": run_sdpa, "alloc": run_alloc}[args.workload]
            cases, extra = runner(torch, device, args.quick)
    except BenchFailure:
        raise
    except Exception as exc:
        if is_oom(exc):
            message = (
                f"Out of memory during the {args.workload} benchmark on {device}: {exc}. "
                "Close other GPU programs or use --quick."
            )
            del exc
            raise BenchFailure(message, "oom") from None
        raise
    _wire.progress(1.0, "Done")
    return {
        "workload": args.workload,
        "cases": cases,
        "device": device,
        "device_label": device_label(torch, device),
        "torch_version": str(torch.__version__),
        "threads": int(torch.get_num_threads()),
        "preset": _preset.summary(),
        "preset_hash": _preset.header_hash(),
        "preset_settings": settings,
        "extra": extra,
    }


def main() -> None:
    args = parse_args()
    try:
        data = measure(args)
    except BenchFailure as exc:
        _wire.error(str(exc), kind=exc.kind)
        sys.exit(1)
    _wire.result(data)


if __name__ == "__main__":
    _wire.run_main(main)
