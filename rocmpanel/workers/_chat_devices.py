"""Where a chat model goes on the GPUs: one card, spread over the fewest that hold it, or none.

A private sibling of ``chat.py`` (stdlib only; torch is passed in where it is needed). The
job runs with the user's GPU choice in its environment (``ROCR_VISIBLE_DEVICES``), so the
GPUs torch numbers 0, 1, ... are the chosen ones. :func:`estimate_need` reads what a load
will take from the folder (safetensors headers and config.json, nothing is loaded);
:func:`plan_placement` compares it with each GPU's free memory and returns the
``from_pretrained`` arguments: ``device_map={"": i}`` when one GPU holds it, else one of
accelerate's documented strategies ("balanced", or "sequential" when the GPUs are too
uneven for an even split) with ``max_memory`` holding only GPU indices, so nothing is ever
put in RAM or on disk. After the load, :func:`layer_ranges` reads ``hf_device_map`` back
to say which layers went where.

The figures copy the panel's estimate (``rocmpanel/chat/memory_estimate.py``; a test
checks the copies): half a GiB per GPU for the runtime, 8 % slack on weights and cache.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIB = 1024**3
# Each GPU a model uses loads HIP's kernels and the BLAS libraries on first use: copy of
# memory_estimate's fixed GPU overhead.
RUNTIME_BYTES = GIB // 2
SLACK = 0.08  # allocator slack and activations, as memory_estimate's overhead
# A GPU with less room than this (after the runtime) is left out of a spread: it would
# hold a layer or two and add a hop between cards for every token.
MIN_SHARE_BYTES = GIB
# bitsandbytes' quantizers hand accelerate 90 % of max_memory for their buffers
# (transformers' quantizer_bnb_*bit.adjust_max_memory): the plan counts with that.
QUANTIZER_SHARE = 0.9
# accelerate's balanced split adds 1.25 times the largest layer to each GPU's even share.
BALANCE_BUFFER = 1.25
# Copies of rocmpanel.base.enums: bytes per weight by precision (NF4: half a byte plus an
# fp32 absmax per 64 weights; int8: a byte plus a per-row scale).
WEIGHT_BYTES = {"nf4": 0.5 + 4 / 64, "int8": 1.01, "fp16": 2.0, "bf16": 2.0, "fp32": 4.0}
QUANTIZED = ("nf4", "int8")
HEADER_LIMIT = 100 * 1024 * 1024  # a safetensors header larger than this is not read
_LAYER = re.compile(r"(?:^|\.)(?:layers|h|blocks|block)\.(\d+)(?:\.|$)")


def gib(count: float) -> str:
    return f"{count / GIB:.1f} GiB"


@dataclass(frozen=True)
class GpuRoom:
    """One visible GPU's memory as torch sees it (``torch.cuda.mem_get_info(index)``)."""

    index: int
    free: int
    total: int


@dataclass(frozen=True)
class Need:
    """What a load takes: ``weights`` in memory, ``reserve`` for the context's KV cache and
    activations, the ``largest_layer`` (accelerate keeps room for it on the first GPU)."""

    weights: int
    reserve: int
    largest_layer: int = 0
    quantized: bool = False

    @property
    def on_one_gpu(self) -> int:
        """Bytes one GPU must have free to hold everything (the panel's estimate total)."""
        return int((self.weights + self.reserve) * (1 + SLACK)) + RUNTIME_BYTES

    def describe(self) -> str:
        return (
            f"about {gib(self.on_one_gpu)} ({gib(self.weights)} of weights, "
            f"{gib(self.reserve)} for the context)"
        )


@dataclass(frozen=True)
class Placement:
    """Where the model goes. ``fits`` False: not even on every GPU; ``gpus`` then holds the
    best try (the load may still fail with out of memory)."""

    fits: bool
    gpus: tuple[int, ...]
    device_map: str | dict[str, int]
    max_memory: dict[int, int] | None
    message: str

    @property
    def spread(self) -> bool:
        return len(self.gpus) > 1

    def kwargs(self) -> dict[str, Any]:
        """The ``from_pretrained`` arguments (GPU indices only in ``max_memory``)."""
        kwargs: dict[str, Any] = {"device_map": self.device_map}
        if self.max_memory is not None:
            kwargs["max_memory"] = dict(self.max_memory)
        return kwargs


def _names(indices: Sequence[int]) -> str:
    names = [f"GPU {i}" for i in indices]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def plan_placement(need: Need, rooms: Sequence[GpuRoom]) -> Placement:
    """One GPU when one holds ``need`` (GPU 0 first), else a spread over the fewest GPUs
    that hold it, else the best try over every GPU with room, saying it will not fit."""
    if not rooms:
        return Placement(False, (), {"": 0}, None, "No GPU is visible to torch.")
    by_index = sorted(rooms, key=lambda r: r.index)
    alone = [r for r in by_index if r.free >= need.on_one_gpu]
    if alone:
        room = alone[0] if alone[0].index == by_index[0].index else max(alone, key=_free)
        return Placement(
            True,
            (room.index,),
            {"": room.index},
            None,
            f"Needs {need.describe()}; fits on GPU {room.index} ({gib(room.free)} free).",
        )
    # Per GPU: the weights it can hold together with their share of the KV cache (each
    # layer's cache lives beside it), after the runtime; too little room: left out.
    per_weight = (1 + need.reserve / max(1, need.weights)) * (1 + SLACK)
    caps = {r.index: int((r.free - RUNTIME_BYTES) / per_weight) for r in by_index}
    usable = [r for r in by_index if r.free - RUNTIME_BYTES >= MIN_SHARE_BYTES]
    skipped = [r for r in by_index if r not in usable]
    share = QUANTIZER_SHARE if need.quantized else 1.0
    biggest_first = sorted(usable, key=lambda r: (-caps[r.index], r.index))
    for count in range(2, len(usable) + 1):
        chosen = sorted(r.index for r in biggest_first[:count])
        held = [
            caps[i] * share - (need.largest_layer if n == 0 else 0) for n, i in enumerate(chosen)
        ]
        if sum(held) < need.weights:
            continue
        even = need.weights / count + BALANCE_BUFFER * need.largest_layer
        strategy = "balanced" if all(h >= even for h in held) else "sequential"
        frees = " + ".join(gib(next(r.free for r in rooms if r.index == i)) for i in chosen)
        left_out = f" {_left_out(skipped)}" if skipped else ""
        return Placement(
            True,
            tuple(chosen),
            strategy,
            {i: caps[i] for i in chosen},
            f"Needs {need.describe()}, more than any one GPU has free; spread over "
            f"{_names(chosen)} ({frees} free).{left_out}",
        )
    frees = ", ".join(f"{gib(r.free)} on GPU {r.index}" for r in by_index)
    message = (
        f"Needs {need.describe()}: it does not fit even on {len(by_index)} "
        f"GPU{'s' if len(by_index) > 1 else ''} ({frees} free; {gib(RUNTIME_BYTES)} of each "
        "is kept for the runtime)."
    )
    if len(usable) < 2:
        first = (usable or by_index)[0].index
        return Placement(False, (first,), {"": first}, None, message)
    # The best try: every GPU with room, filled in order up to what it has (still GPUs only).
    indices = tuple(r.index for r in usable)
    best = {r.index: max(0, r.free - RUNTIME_BYTES) for r in usable}
    return Placement(False, indices, "sequential", best, message)


def _free(room: GpuRoom) -> int:
    return room.free


def _left_out(skipped: Sequence[GpuRoom]) -> str:
    names = ", ".join(f"GPU {r.index} ({gib(r.free)} free)" for r in skipped)
    return f"Left out, too little free memory: {names}."


# -- what a load will take, from the folder ---------------------------------------------------
def tensor_shapes(folder: Path) -> dict[str, tuple[int, ...]]:
    """Every tensor's shape from the folder's safetensors headers (nothing else is read)."""
    shapes: dict[str, tuple[int, ...]] = {}
    for path in sorted(folder.glob("*.safetensors")):
        with open(path, "rb") as handle:
            raw = handle.read(8)
            if len(raw) != 8:
                raise ValueError(f"{path.name} is too short to be safetensors")
            (length,) = struct.unpack("<Q", raw)
            if length > HEADER_LIMIT:
                raise ValueError(f"{path.name} has an implausible header ({length} bytes)")
            header = json.loads(handle.read(length).decode("utf-8"))
        for name, entry in header.items():
            if name != "__metadata__" and isinstance(entry, dict):
                shapes[name] = tuple(int(d) for d in entry.get("shape", ()))
    return shapes


def _quantizable(name: str, shape: tuple[int, ...]) -> bool:
    """A linear weight bitsandbytes quantizes (embeddings, the head and norms stay)."""
    return len(shape) == 2 and "embed" not in name and not name.startswith("lm_head")


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    nested = config.get("text_config")
    return nested if isinstance(nested, Mapping) else config


def estimate_need(
    shapes: Mapping[str, tuple[int, ...]],
    config: Mapping[str, Any],
    precision: str,
    context: int,
) -> Need:
    """Bytes for the weights at ``precision``, the KV cache and activations of ``context``
    tokens, and the largest layer, from the tensor shapes and config.json."""
    compute = 4 if precision == "fp32" else 2
    per_weight = WEIGHT_BYTES.get(precision, 2.0)
    weights = 0.0
    layers: dict[str, float] = {}
    largest_leaf = 0.0
    for name, shape in shapes.items():
        count = 1
        for dim in shape:
            count *= dim
        size = count * (per_weight if _quantizable(name, shape) else compute)
        weights += size
        largest_leaf = max(largest_leaf, size)
        match = _LAYER.search(name)
        if match:
            key = name[: match.end(1)]
            layers[key] = layers.get(key, 0.0) + size
    cfg = text_config(config)
    heads = _int(cfg, "num_attention_heads")
    hidden = _int(cfg, "hidden_size")
    kv_heads = _int(cfg, "num_key_value_heads") or heads
    head_dim = _int(cfg, "head_dim") or (hidden // heads if heads else 0)
    kv = 2 * _int(cfg, "num_hidden_layers") * kv_heads * head_dim * context * compute
    # The prompt's pass: hidden states and the MLP's gate/up/down tensors for every token.
    activations = context * (hidden + 3 * _int(cfg, "intermediate_size")) * compute
    return Need(
        weights=int(weights),
        reserve=int(kv + activations),
        largest_layer=int(max([largest_leaf, *layers.values()])),
        quantized=precision in QUANTIZED,
    )


def _int(config: Mapping[str, Any], key: str) -> int:
    value = config.get(key)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


def gpu_rooms(torch: Any) -> list[GpuRoom]:
    """Free and total memory of every GPU this job sees (the user's chosen ones)."""
    rooms = []
    for index in range(int(torch.cuda.device_count())):
        free, total = torch.cuda.mem_get_info(index)
        rooms.append(GpuRoom(index, int(free), int(total)))
    return rooms


# -- where the layers went ---------------------------------------------------------------
def device_of(value: Any) -> int | str:
    """A device of ``hf_device_map`` as a GPU index, or "cpu"/"disk"/another name."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value)
    kind, _, number = text.partition(":")
    if kind in ("cuda", "hip") and number.isdigit():
        return int(number)
    return 0 if text in ("cuda", "hip") else text  # no index: the current device


def offloaded(device_map: Mapping[str, Any]) -> list[str]:
    """The modules placed anywhere but a GPU (RAM or disk)."""
    return [name for name, dev in device_map.items() if not isinstance(device_of(dev), int)]


def layer_ranges(device_map: Mapping[str, Any]) -> list[tuple[int | str, int, int]]:
    """(device, first layer, last layer) runs in layer order; a layer split between two
    devices is counted on each."""
    per_layer: dict[int, list[int | str]] = {}
    for name, dev in device_map.items():
        match = _LAYER.search(name)
        if match:
            places = per_layer.setdefault(int(match.group(1)), [])
            device = device_of(dev)
            if device not in places:
                places.append(device)
    runs: list[tuple[int | str, int, int]] = []
    for layer in sorted(per_layer):
        for device in per_layer[layer]:
            same = [n for n, run in enumerate(runs) if run[0] == device and run[2] == layer - 1]
            if same:
                dev, first, _ = runs[same[0]]
                runs[same[0]] = (dev, first, layer)
            else:
                runs.append((device, layer, layer))
    return runs


def split_text(runs: Sequence[tuple[int | str, int, int]]) -> str:
    """``layers 0-15 on GPU 0, 16-31 on GPU 1``; "" when no layer is named."""
    parts = []
    for device, first, last in runs:
        where = f"GPU {device}" if isinstance(device, int) else str(device)
        span = str(first) if first == last else f"{first}-{last}"
        parts.append(f"{span} on {where}")
    return "layers " + ", ".join(parts) if parts else ""


def input_device(model: Any) -> Any:
    """Where a prompt's ids must go: the input embedding's device. For a model dispatched
    over several GPUs ``model.device`` is only its first parameter's device, which some
    models do not keep beside the embedding."""
    try:
        return model.get_input_embeddings().weight.device
    except (AttributeError, NotImplementedError):
        return model.device
