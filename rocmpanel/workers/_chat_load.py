"""Loading a model into the chat worker: the folder check, the weight arguments, progress.

A private sibling of ``chat.py``; :meth:`_chat_engine.ChatEngine.load` puts these together.
torch and transformers are passed in (imported by the engine only after ``chat.py`` has
switched the hub off). The benchmark imports :func:`weight_kwargs` from here so that it
loads a model exactly as the worker does.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _wire
from _chat_devices import Placement, estimate_need, gpu_rooms, plan_placement, tensor_shapes
from _chat_devices import text_config as _text_config
from _chat_errors import WorkerFailure

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


def torch_device(device: str) -> str:
    """torch's name for a resolved device of ``_wire.DEVICES`` ("cuda" on ROCm too)."""
    return "cuda" if device == "gpu" else "cpu"


def resolve_device(torch: Any, wanted: str) -> str:
    """ "gpu" or "cpu" for a requested ``auto``/``gpu``/``cpu``; a GPU torch cannot see fails."""
    available = bool(torch.cuda.is_available())
    if wanted == "gpu" and not available:
        raise WorkerFailure("No GPU is visible to torch in this Python.", "no_gpu")
    return "gpu" if wanted != "cpu" and available else "cpu"


def weight_kwargs(transformers: Any, torch: Any, precision: str, device: str) -> dict[str, Any]:
    """``from_pretrained`` arguments for a precision on a device: dtype, quantization, map.

    ``device`` is "gpu" or "cpu" ("cuda", torch's name, is taken as "gpu")."""
    on_gpu = device in ("gpu", "cuda")
    gpu_bf16 = on_gpu and torch.cuda.is_bf16_supported()
    compute = torch.bfloat16 if not on_gpu or gpu_bf16 else torch.float16
    kwargs: dict[str, Any] = {}
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
    kwargs["device_map"] = {"": 0} if on_gpu else "cpu"
    return kwargs


def dtype_keyword(transformers: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` as this transformers wants them: before 4.56 ``dtype`` was ``torch_dtype``."""
    if version(transformers.__version__) >= (4, 56):
        return kwargs
    renamed = dict(kwargs)
    renamed["torch_dtype"] = renamed.pop("dtype")
    return renamed


def plan_gpus(torch: Any, folder: Path, precision: str, context_length: int | None) -> Placement:
    """Where on the visible GPUs the model in ``folder`` goes (see ``_chat_devices``): its
    need from the safetensors headers and config.json, against each GPU's free memory."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        positions = _text_config(config).get("max_position_embeddings")
        shapes = tensor_shapes(folder)
    except (OSError, ValueError, UnicodeDecodeError, AttributeError, TypeError) as exc:
        # from_pretrained will say what is wrong with the file; the plan just cannot help.
        _wire.log(f"The weights' sizes could not be read ({exc}); loading on GPU 0.", "warning")
        return Placement(True, (0,), {"": 0}, None, "Loading on GPU 0.")
    positions = positions if isinstance(positions, int) and positions > 0 else 4096
    context = min(context_length or positions, positions)
    return plan_placement(estimate_need(shapes, config, precision, context), gpu_rooms(torch))


def pci_slot(torch: Any, index: int = 0) -> str | None:
    """The PCI slot ("0000:03:00.0") of torch's GPU ``index``, when this torch reports it.

    Recent torch builds (CUDA and ROCm) give ``pci_domain_id``, ``pci_bus_id`` and
    ``pci_device_id`` in the device properties; the panel finds the card's live VRAM by it.
    """
    try:
        props = torch.cuda.get_device_properties(index)
    except Exception:  # an old or odd build: the slot is simply not known
        return None
    parts = [
        getattr(props, name, None) for name in ("pci_domain_id", "pci_bus_id", "pci_device_id")
    ]
    if not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in parts):
        return None
    domain, bus, device = parts
    return f"{domain:04x}:{bus:02x}:{device:02x}.0"


class ReportingBar:
    """Wraps transformers' "Loading weights" bar to send progress events as it advances."""

    def __init__(self, bar: Any, total: int | None) -> None:
        self._bar = bar
        self._total = total

    def __iter__(self) -> Iterator[Any]:
        last = 0.0
        for done, item in enumerate(self._bar, 1):
            yield item
            now = time.monotonic()
            if self._total and now - last >= 0.2:
                last = now
                fraction = LOAD_START + (LOAD_END - LOAD_START) * done / self._total
                _wire.progress(fraction, f"Loading weights ({done}/{self._total})")

    def __enter__(self) -> ReportingBar:
        return self

    def __exit__(self, *exc: object) -> None:
        close = getattr(self._bar, "close", None)
        if callable(close):
            close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bar, name)


def report_weight_loading(transformers: Any) -> None:
    """Turn the weight-loading progress bar into progress events (transformers >= 5)."""
    setter = getattr(transformers.utils.logging, "set_tqdm_hook", None)
    if setter is None:
        return

    def hook(factory: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        bar = factory(*args, **kwargs)
        if kwargs.get("desc") != "Loading weights" or not args:
            return bar
        total = len(args[0]) if hasattr(args[0], "__len__") else None
        return ReportingBar(bar, total)

    setter(hook)


# bitsandbytes' CPU backend first tries an optional fused 4-bit kernel from the hub
# ("kernels-community", through the ``kernels`` package) and logs a warning when it cannot,
# then uses its own CPU kernel (bitsandbytes/backends/cpu/ops.py, 0.50). With the hub off the
# attempt always fails, so the warning reads like an error while nothing is wrong.
BNB_CPU_LOGGER = "bitsandbytes.backends.cpu.ops"
OPTIONAL_KERNEL_NOTE = (
    "bitsandbytes uses its built-in CPU 4-bit kernel (its optional hub kernel, "
    "kernels-community, is not used)."
)


class OptionalKernelNote(logging.Filter):
    """Turns bitsandbytes' "Failed to load CPU gemm_4bit_forward from kernels-community"
    warning into one info log event; every other record passes unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "kernels-community" not in record.getMessage():
            return True
        _wire.log(OPTIONAL_KERNEL_NOTE)
        return False


def explain_optional_kernels() -> None:
    """Install :class:`OptionalKernelNote` once (before bitsandbytes is imported)."""
    logger = logging.getLogger(BNB_CPU_LOGGER)
    if not any(isinstance(f, OptionalKernelNote) for f in logger.filters):
        logger.addFilter(OptionalKernelNote())


def leave_a_core_free(torch: Any) -> None:
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


def version(text: str) -> tuple[int, int]:
    """(major, minor) of a version string such as "4.56.0.dev0"."""
    parts = [0, 0]
    for index, piece in enumerate(text.split(".")[:2]):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts[index] = int(digits or 0)
    return parts[0], parts[1]


def unpacked_numel(param: Any) -> int:
    """Elements of a weight; 4-bit weights are packed two to a byte with their shape aside."""
    state = getattr(param, "quant_state", None)
    shape = getattr(state, "shape", None)
    if shape is not None:
        count = 1
        for dim in shape:
            count *= int(dim)
        return count
    return int(param.numel())
