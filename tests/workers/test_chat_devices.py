"""Where the chat worker puts a model on the GPUs (pure planning; no GPU needed).

The worker's ``_chat_devices`` is imported by path, as ``chat.py`` imports it. The engine's
report of a spread load is checked with a stand-in for torch's ``cuda`` calls and a model
carrying a recorded-shape ``hf_device_map``: a real second GPU is not available here.
"""

from __future__ import annotations

import importlib
import json
import struct
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

WORKERS = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"
GIB = 1024**3


@pytest.fixture
def devices(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(WORKERS))
    return importlib.import_module("_chat_devices")


def room(devices: ModuleType, index: int, free_gib: float, total_gib: float = 24) -> Any:
    return devices.GpuRoom(index, int(free_gib * GIB), int(total_gib * GIB))


def need(devices: ModuleType, weights_gib: float, reserve_gib: float = 1.0, **kw: Any) -> Any:
    return devices.Need(int(weights_gib * GIB), int(reserve_gib * GIB), **kw)


def assert_headroom(devices: ModuleType, plan: Any, n: Any, rooms: list[Any]) -> None:
    """Each GPU's cap, with its share of the cache and the slack, leaves the runtime's room."""
    per_weight = (1 + n.reserve / n.weights) * (1 + devices.SLACK)
    free = {r.index: r.free for r in rooms}
    for index, cap in plan.max_memory.items():
        assert cap * per_weight + devices.RUNTIME_BYTES <= free[index] + 1


def test_a_model_that_fits_goes_on_gpu_0_alone(devices: ModuleType) -> None:
    rooms = [room(devices, 0, 20), room(devices, 1, 23)]
    plan = devices.plan_placement(need(devices, 12), rooms)
    assert plan.fits and plan.gpus == (0,) and not plan.spread
    assert plan.kwargs() == {"device_map": {"": 0}}
    assert "fits on GPU 0" in plan.message


def test_one_other_gpu_that_holds_it_beats_a_spread(devices: ModuleType) -> None:
    rooms = [room(devices, 0, 6), room(devices, 1, 23)]
    plan = devices.plan_placement(need(devices, 12), rooms)
    assert plan.gpus == (1,) and plan.device_map == {"": 1} and plan.max_memory is None


def test_two_gpus_hold_what_one_cannot(devices: ModuleType) -> None:
    rooms = [room(devices, 0, 15), room(devices, 1, 15), room(devices, 2, 15)]
    n = need(devices, 20, 2)
    plan = devices.plan_placement(n, rooms)
    assert plan.fits and plan.spread and plan.gpus == (0, 1)  # the fewest: not all three
    kwargs = plan.kwargs()
    assert kwargs["device_map"] == "balanced"
    assert set(kwargs["max_memory"]) == {0, 1}  # GPUs only: never "cpu" or "disk"
    assert sum(kwargs["max_memory"].values()) >= n.weights
    assert_headroom(devices, plan, n, rooms)
    assert "spread over GPU 0 and GPU 1 (15.0 GiB + 15.0 GiB free)" in plan.message


def test_three_gpus_when_two_are_not_enough(devices: ModuleType) -> None:
    rooms = [room(devices, i, 10) for i in range(4)]
    n = need(devices, 24, 2)
    plan = devices.plan_placement(n, rooms)
    assert plan.fits and plan.gpus == (0, 1, 2)
    assert set(plan.max_memory) == {0, 1, 2}
    assert_headroom(devices, plan, n, rooms)
    assert "GPU 0, GPU 1 and GPU 2" in plan.message


def test_nothing_fits_says_so_with_the_numbers(devices: ModuleType) -> None:
    rooms = [room(devices, 0, 10), room(devices, 1, 9.5)]
    n = need(devices, 40, 4)
    plan = devices.plan_placement(n, rooms)
    assert not plan.fits
    assert "does not fit even on 2 GPUs" in plan.message
    assert "10.0 GiB on GPU 0, 9.5 GiB on GPU 1 free" in plan.message
    assert f"about {n.on_one_gpu / GIB:.1f} GiB" in plan.message
    assert "40.0 GiB of weights, 4.0 GiB for the context" in plan.message
    # The best try stays on the GPUs; the load then fails as out of memory, with this text.
    assert set(plan.max_memory) == {0, 1} and plan.device_map == "sequential"


def test_nothing_fits_on_a_single_gpu_keeps_the_plain_load(devices: ModuleType) -> None:
    plan = devices.plan_placement(need(devices, 40), [room(devices, 0, 20)])
    assert not plan.fits and plan.kwargs() == {"device_map": {"": 0}}
    assert "does not fit even on 1 GPU (" in plan.message


def test_a_gpu_with_little_free_memory_is_left_out(devices: ModuleType) -> None:
    rooms = [room(devices, 0, 12), room(devices, 1, 1.2), room(devices, 2, 12)]
    plan = devices.plan_placement(need(devices, 16, 1), rooms)
    assert plan.gpus == (0, 2) and set(plan.max_memory) == {0, 2}
    assert "Left out, too little free memory: GPU 1 (1.2 GiB free)" in plan.message


def test_the_biggest_gpus_are_used_first_and_kept_in_index_order(devices: ModuleType) -> None:
    rooms = [room(devices, 0, 4), room(devices, 1, 14), room(devices, 2, 14)]
    plan = devices.plan_placement(need(devices, 18, 1), rooms)
    assert plan.gpus == (1, 2)


def test_uneven_gpus_are_filled_in_order_rather_than_evenly(devices: ModuleType) -> None:
    rooms = [room(devices, 0, 22), room(devices, 1, 5)]
    n = need(devices, 22, 1)
    plan = devices.plan_placement(n, rooms)
    # An even split would put 11 GiB on GPU 1, which has 5: accelerate's "sequential".
    assert plan.gpus == (0, 1) and plan.device_map == "sequential"
    assert_headroom(devices, plan, n, rooms)


def test_bitsandbytes_share_and_the_largest_layer_are_counted(devices: ModuleType) -> None:
    rooms = [room(devices, 0, 10), room(devices, 1, 10), room(devices, 2, 10)]
    plain = devices.plan_placement(need(devices, 16.5, 0.5), rooms)
    quantized = devices.plan_placement(need(devices, 16.5, 0.5, quantized=True), rooms)
    assert plain.gpus == (0, 1)
    assert quantized.gpus == (0, 1, 2)  # bitsandbytes gives accelerate 90 % of max_memory
    layered = devices.plan_placement(need(devices, 16.5, 0.5, largest_layer=2 * GIB), rooms)
    assert layered.gpus == (0, 1, 2)  # accelerate keeps the largest layer's room on GPU 0


HF_MAP_2 = {
    "model.embed_tokens": 0,
    **{f"model.layers.{i}": 0 for i in range(16)},
    **{f"model.layers.{i}": 1 for i in range(16, 32)},
    "model.norm": 1,
    "model.rotary_emb": 1,
    "lm_head": 1,
}


def test_the_layer_split_of_a_recorded_device_map(devices: ModuleType) -> None:
    runs = devices.layer_ranges(HF_MAP_2)
    assert runs == [(0, 0, 15), (1, 16, 31)]
    assert devices.split_text(runs) == "layers 0-15 on GPU 0, 16-31 on GPU 1"
    assert devices.offloaded(HF_MAP_2) == []


def test_split_layers_torch_device_names_and_offload(devices: ModuleType) -> None:
    device_map = {
        "model.embed_tokens": "cuda:0",
        "model.layers.0": "cuda:0",
        "model.layers.1.self_attn": "cuda:0",
        "model.layers.1.mlp": "cuda:1",
        "model.layers.2": "cuda:1",
        "model.layers.3": "cpu",
        "lm_head": "disk",
    }
    runs = devices.layer_ranges(device_map)
    assert runs == [(0, 0, 1), (1, 1, 2), ("cpu", 3, 3)]
    assert devices.split_text(runs) == "layers 0-1 on GPU 0, 1-2 on GPU 1, 3 on cpu"
    assert devices.offloaded(device_map) == ["model.layers.3", "lm_head"]
    assert devices.device_of("cuda") == 0 and devices.device_of(2) == 2
    assert devices.split_text([]) == ""


def write_safetensors(path: Path, tensors: dict[str, tuple[int, ...]]) -> None:
    """A safetensors file whose header names ``tensors`` (the data is zeros)."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape in tensors.items():
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {
            "dtype": "BF16",
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))


CONFIG = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 100,
    "max_position_embeddings": 256,
}
TENSORS = {
    "model.embed_tokens.weight": (100, 64),
    **{f"model.layers.{i}.self_attn.q_proj.weight": (64, 64) for i in range(2)},
    **{f"model.layers.{i}.mlp.up_proj.weight": (128, 64) for i in range(2)},
    **{f"model.layers.{i}.input_layernorm.weight": (64,) for i in range(2)},
    "model.norm.weight": (64,),
    "lm_head.weight": (100, 64),
}


def test_the_need_is_read_from_safetensors_headers_and_config(
    devices: ModuleType, tmp_path: Path
) -> None:
    write_safetensors(
        tmp_path / "model-00001-of-00002.safetensors", dict(list(TENSORS.items())[:4])
    )
    write_safetensors(
        tmp_path / "model-00002-of-00002.safetensors", dict(list(TENSORS.items())[4:])
    )
    shapes = devices.tensor_shapes(tmp_path)
    assert shapes == TENSORS
    linear = 2 * 64 * 64 + 2 * 128 * 64
    plain = 2 * 100 * 64 + 3 * 64
    fp16 = devices.estimate_need(shapes, CONFIG, "fp16", 128)
    assert fp16.weights == 2 * (linear + plain) and not fp16.quantized
    nf4 = devices.estimate_need(shapes, CONFIG, "nf4", 128)
    assert nf4.weights == int(linear * (0.5 + 4 / 64) + 2 * plain) and nf4.quantized
    kv = 2 * 2 * 2 * 16 * 128 * 2  # 2 × layers × kv heads × head dim × tokens × bytes
    assert fp16.reserve == kv + 128 * (64 + 3 * 128) * 2
    # A decoder layer (q, up and its norm) outweighs the embedding (100 × 64) here.
    assert fp16.largest_layer == 2 * (64 * 64 + 128 * 64 + 64) > 2 * 100 * 64
    fp32 = devices.estimate_need(shapes, CONFIG, "fp32", 128)
    assert fp32.weights == 2 * fp16.weights and fp32.reserve == 2 * fp16.reserve


def test_a_damaged_header_is_an_error_not_a_guess(devices: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 10**12))
    with pytest.raises(ValueError, match="implausible header"):
        devices.tensor_shapes(tmp_path)


def test_the_copies_match_the_panel_estimate(devices: ModuleType) -> None:
    from rocmpanel.base.enums import Precision
    from rocmpanel.chat import memory_estimate

    for precision in Precision:
        assert devices.WEIGHT_BYTES[precision.value] == precision.weight_bytes_per_param
    assert devices.RUNTIME_BYTES == memory_estimate.GPU_RUNTIME_BYTES
    assert devices.SLACK == memory_estimate.OVERHEAD_SHARE
    assert devices.MIN_SHARE_BYTES == memory_estimate.MIN_SHARE_BYTES


def test_prompts_go_to_the_embedding_device_not_model_device(devices: ModuleType) -> None:
    embedding = SimpleNamespace(weight=SimpleNamespace(device="cuda:1"))
    model = SimpleNamespace(device="cuda:0", get_input_embeddings=lambda: embedding)
    assert devices.input_device(model) == "cuda:1"
    assert devices.input_device(SimpleNamespace(device="cpu")) == "cpu"


# -- the engine's report of a spread load, with torch's cuda calls stood in ----------------
class FakeCuda:
    """The few ``torch.cuda`` calls the worker makes about placement, for two cards."""

    def __init__(self, free: list[int]) -> None:
        self.free = free
        self.allocated = {0: int(9.1 * GIB), 1: int(8.7 * GIB)}

    def device_count(self) -> int:
        return len(self.free)

    def mem_get_info(self, index: int) -> tuple[int, int]:
        return self.free[index], 24 * GIB

    def get_device_name(self, index: int) -> str:
        return "AMD Radeon RX 7900 XTX"

    def get_device_properties(self, index: int) -> Any:
        return SimpleNamespace(pci_domain_id=0, pci_bus_id=3 + index, pci_device_id=0)

    def memory_allocated(self, index: int) -> int:
        return self.allocated[index]

    def max_memory_allocated(self, index: int) -> int:
        return self.allocated[index] + GIB


@pytest.fixture
def engine_module(devices: ModuleType) -> ModuleType:
    return importlib.import_module("_chat_engine")


def test_a_spread_load_reports_each_gpu_and_the_split(engine_module: ModuleType) -> None:
    torch = SimpleNamespace(cuda=FakeCuda([20 * GIB, 20 * GIB]))
    engine = engine_module.ChatEngine()
    engine.torch = torch
    placement = sys.modules["_chat_devices"].Placement(
        True, (0, 1), "balanced", {0: 18 * GIB, 1: 18 * GIB}, "spread"
    )
    model = SimpleNamespace(hf_device_map=HF_MAP_2)
    gpus, split = engine._placed(torch, model, placement)
    assert split == "layers 0-15 on GPU 0, 16-31 on GPU 1"
    assert [g["index"] for g in gpus] == [0, 1]
    assert [g["bdf"] for g in gpus] == ["0000:03:00.0", "0000:04:00.0"]
    assert [g["bytes"] for g in gpus] == [int(9.1 * GIB), int(8.7 * GIB)]
    assert gpus[0]["layers"] == [[0, 15]] and gpus[1]["layers"] == [[16, 31]]
    assert engine_module._device_name(gpus) == "2 × AMD Radeon RX 7900 XTX"
    engine.gpus = (0, 1)
    assert engine._peak() == int(9.1 * GIB) + int(8.7 * GIB) + 2 * GIB  # both cards


def test_a_load_that_landed_in_ram_is_refused(engine_module: ModuleType) -> None:
    failure = importlib.import_module("_chat_errors").WorkerFailure
    torch = SimpleNamespace(cuda=FakeCuda([20 * GIB, 20 * GIB]))
    placement = sys.modules["_chat_devices"].Placement(
        False, (0, 1), "sequential", {0: GIB, 1: GIB}, "It does not fit even on 2 GPUs."
    )
    model = SimpleNamespace(hf_device_map={**HF_MAP_2, "lm_head": "cpu"})
    with pytest.raises(failure) as caught:
        engine_module.ChatEngine()._placed(torch, model, placement)
    assert caught.value.kind == "oom"
    assert "1 parts (lm_head) were put in RAM or on disk" in caught.value.message
    assert "does not fit even on 2 GPUs" in caught.value.message


def test_plan_gpus_reads_the_folder_and_each_gpu(engine_module: ModuleType, tmp_path: Path) -> None:
    load = importlib.import_module("_chat_load")
    write_safetensors(tmp_path / "model.safetensors", TENSORS)
    (tmp_path / "config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    roomy = SimpleNamespace(cuda=FakeCuda([20 * GIB, 20 * GIB]))
    assert load.plan_gpus(roomy, tmp_path, "bf16", None).device_map == {"": 0}
    # GPU 0 is nearly full (another program): the tiny model goes to GPU 1 alone.
    busy = SimpleNamespace(cuda=FakeCuda([GIB // 4, 20 * GIB]))
    assert load.plan_gpus(busy, tmp_path, "bf16", 128).device_map == {"": 1}


def test_the_panel_reads_the_engine_report_of_a_spread_load(engine_module: ModuleType) -> None:
    from rocmpanel.base.enums import Device, Precision
    from rocmpanel.chat.protocol import LoadedModel, LoadRequest

    torch = SimpleNamespace(cuda=FakeCuda([20 * GIB, 20 * GIB]))
    placement = sys.modules["_chat_devices"].Placement(
        True, (0, 1), "balanced", {0: 18 * GIB, 1: 18 * GIB}, "spread"
    )
    gpus, split = engine_module.ChatEngine()._placed(
        torch, SimpleNamespace(hf_device_map=HF_MAP_2), placement
    )
    report = engine_module.LoadReport(
        path="/m", precision="nf4", device="gpu", device_name=engine_module._device_name(gpus),
        bdf=gpus[0]["bdf"], compute_dtype="bfloat16", parameters=8, context_length=4096,
        load_s=1.0, memory_bytes=19 * GIB, footprint_bytes=18 * GIB, threads=1,
        gpus=gpus, split=split,
    )  # fmt: skip
    request = LoadRequest("/m", Precision.NF4, Device.GPU, 4096)
    loaded = LoadedModel.from_result(report.as_result(), request)
    assert loaded.split == split and loaded.bdfs == ("0000:03:00.0", "0000:04:00.0")
    assert loaded.placement_text() == (
        "Spread over GPU 0 and GPU 1 (layers 0-15 / 16-31), 9.1 + 8.7 GiB"
    )
