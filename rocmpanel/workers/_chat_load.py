"""Loading a model into the chat worker: folder checks, precision, weights, progress.

A private sibling of ``chat.py``. torch and transformers are imported inside ``load`` only,
after ``chat.py`` has switched the hub off. The benchmark imports ``weight_kwargs`` from
here so that it loads the model exactly as the worker does.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import _wire
from _chat_common import WorkerFailure, _rss_bytes

PRECISIONS = ("nf4", "int8", "fp16", "bf16", "fp32")
FALLBACK_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)
LOAD_START, LOAD_END = 0.3, 0.95  # the share of the load progress that weights take


def check_folder(folder: Path, trust_remote_code: bool) -> None:
    """Refuse a folder that is no model, holds no safetensors, or would run its own code."""
    if not folder.is_dir():
        raise WorkerFailure(f"{folder} is not a folder.", "no_model")
    if not (folder / "config.json").is_file():
        raise WorkerFailure(f"{folder} has no config.json.", "no_model")
    if not any(folder.glob("*.safetensors")):
        pickled = any(folder.glob("*.bin")) or any(folder.glob("*.pt"))
        raise WorkerFailure(
            "Only pickled weights were found; rocmpanel loads safetensors only."
            if pickled
            else f"No weights were found in {folder} (no .safetensors files).",
            "no_weights",
        )
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    tok_config = {}
    if (folder / "tokenizer_config.json").is_file():
        tok_config = json.loads((folder / "tokenizer_config.json").read_text("utf-8"))
    if ("auto_map" in config or "auto_map" in tok_config) and not trust_remote_code:
        raise WorkerFailure(
            "This model needs its own Python code (auto_map); it was not run. Allow "
            "remote code for this model only if you trust its repository.",
            "remote_code",
        )


def weight_kwargs(transformers: Any, torch: Any, precision: str, device: str) -> dict:
    """``from_pretrained`` arguments for a precision on a device: dtype, quantization, map."""
    gpu_bf16 = device == "cuda" and torch.cuda.is_bf16_supported()
    compute = torch.bfloat16 if device == "cpu" or gpu_bf16 else torch.float16
    kwargs: dict = {}
    if precision == "nf4":
        kwargs["quantization_config"] = transformers.BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=compute,
            bnb_4bit_use_double_quant=True,
        )
        kwargs["dtype"] = compute
    elif precision == "int8":
        kwargs["quantization_config"] = transformers.BitsAndBytesConfig(load_in_8bit=True)
        kwargs["dtype"] = torch.float16
    else:
        kwargs["dtype"] = {
            "fp16": torch.float16,
            "bf16": torch.bfloat16,
            "fp32": torch.float32,
        }[precision]
    kwargs["device_map"] = {"": 0} if device == "cuda" else "cpu"
    return kwargs


def load(engine: Any, cmd: dict) -> None:
    """Load the model ``cmd`` asks for into ``engine`` and report it (a ``loaded`` result)."""
    folder = Path(str(cmd.get("path", ""))).expanduser()
    precision = str(cmd.get("precision", "nf4"))
    if precision not in PRECISIONS:
        raise WorkerFailure(f"Unknown precision {precision!r}.", "bad_command")
    trust = bool(cmd.get("trust_remote_code", False))
    check_folder(folder, trust)
    if engine.model is not None:
        engine.unload(report=False)
    started = time.perf_counter()
    _wire.progress(0.05, "Importing torch and transformers")
    import torch
    import transformers

    engine.torch = torch
    transformers.logging.set_verbosity_error()
    _report_weight_loading(transformers)
    want = str(cmd.get("device", "auto"))
    if want == "cuda" and not torch.cuda.is_available():
        raise WorkerFailure("No GPU is visible to torch in this Python.", "no_gpu")
    device = "cuda" if want != "cpu" and torch.cuda.is_available() else "cpu"
    if device == "cpu":
        _leave_a_core_free(torch)
    kwargs = {
        "trust_remote_code": trust,
        "use_safetensors": True,
        **weight_kwargs(transformers, torch, precision, device),
    }
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    _wire.progress(0.15, "Reading the tokenizer")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), trust_remote_code=trust)
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = FALLBACK_TEMPLATE
        _wire.log("The tokenizer has no chat template; using a plain role: text layout.")
    _wire.progress(LOAD_START, f"Loading weights ({precision} on {device})")
    load_kwargs = dict(kwargs)
    if _version(transformers.__version__) < (4, 56):
        # Older transformers call it torch_dtype (renamed to dtype in 4.56).
        load_kwargs["torch_dtype"] = load_kwargs.pop("dtype")
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), **load_kwargs)
    model.eval()
    _wire.progress(LOAD_END, "Ready check")
    max_positions = getattr(model.config, "max_position_embeddings", None) or 4096
    context = int(cmd.get("context_length") or max_positions)
    engine.model, engine.tokenizer, engine.device = model, tokenizer, device
    engine.precision, engine.path = precision, str(folder)
    engine.context_length = max(16, min(context, max_positions))
    params = sum(_unpacked_numel(p) for p in model.parameters())
    memory = torch.cuda.max_memory_allocated() if device == "cuda" else _rss_bytes()[0]
    _wire.progress(1.0, "Loaded")
    _wire.result(
        {
            "kind": "loaded",
            "path": engine.path,
            "precision": precision,
            "device": device,
            "device_name": torch.cuda.get_device_name(0) if device == "cuda" else "CPU",
            "compute_dtype": str(kwargs["dtype"]).replace("torch.", ""),
            "parameters": params,
            "context_length": engine.context_length,
            "load_s": round(time.perf_counter() - started, 3),
            "memory_bytes": memory,
            "memory_kind": "vram" if device == "cuda" else "rss",
            "footprint_bytes": int(model.get_memory_footprint()),
            "threads": torch.get_num_threads(),
        }
    )


class _ReportingBar:
    """Wraps transformers' "Loading weights" bar to send progress events as it advances."""

    def __init__(self, bar, total: int | None) -> None:
        self._bar = bar
        self._total = total

    def __iter__(self):
        last = 0.0
        for done, item in enumerate(self._bar, 1):
            yield item
            now = time.monotonic()
            if self._total and now - last >= 0.2:
                last = now
                fraction = LOAD_START + (LOAD_END - LOAD_START) * done / self._total
                _wire.progress(fraction, f"Loading weights ({done}/{self._total})")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        close = getattr(self._bar, "close", None)
        if callable(close):
            close()

    def __getattr__(self, name: str):
        return getattr(self._bar, name)


def _report_weight_loading(transformers) -> None:
    """Turn the weight-loading progress bar into progress events (transformers >= 5)."""
    setter = getattr(transformers.utils.logging, "set_tqdm_hook", None)
    if setter is None:
        return

    def hook(factory, args, kwargs):
        bar = factory(*args, **kwargs)
        if kwargs.get("desc") != "Loading weights" or not args:
            return bar
        total = len(args[0]) if hasattr(args[0], "__len__") else None
        return _ReportingBar(bar, total)

    setter(hook)


def _leave_a_core_free(torch) -> None:
    """On the CPU, use one thread less than torch would, unless the user chose a number.

    torch starts one OpenMP thread per core and they spin-wait for each other at every
    operation; when anything else wants a core (the panel drawing the reply), one of them
    is descheduled and each operation waits for it: measured here on 2 cores, a busy
    neighbour cut a small model from ~900 to ~30 tokens/s with 2 threads, not at all with 1.
    """
    if any(os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")):
        return
    threads = torch.get_num_threads()
    if threads > 1:
        torch.set_num_threads(threads - 1)


def _version(text: str) -> tuple[int, int]:
    parts = [0, 0]
    for index, piece in enumerate(text.split(".")[:2]):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts[index] = int(digits or 0)
    return parts[0], parts[1]


def _unpacked_numel(param) -> int:
    """Elements of a weight; 4-bit weights are packed two to a byte with their shape aside."""
    state = getattr(param, "quant_state", None)
    shape = getattr(state, "shape", None)
    if shape is not None:
        count = 1
        for dim in shape:
            count *= int(dim)
        return count
    return int(param.numel())
