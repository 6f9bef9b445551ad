"""A model spread over several GPUs: the verdict before the load, the report after it."""

from __future__ import annotations

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.units import GIB, format_memory
from rocmpanel.chat.memory_estimate import (
    Fit,
    GpuRoom,
    chosen_gpu_rooms,
    estimate_memory,
    judge_fit,
)
from rocmpanel.chat.model_check import ModelShape
from rocmpanel.chat.protocol import GpuShare, LoadedModel, LoadRequest
from rocmpanel.machine.gpu_model import GpuInfo

SHAPE = ModelShape(hidden_size=4096, layers=32, kv_heads=8, head_dim=128, vocab_size=32000)
# 7B parameters in fp16 with a 4096-token cache: about 15.1 GiB in all.
ESTIMATE = estimate_memory(7_000_000_000, SHAPE, Precision.FP16, 4096)
REQUESTED = LoadRequest("/models/big", Precision.NF4, Device.GPU, 4096)

# The ``loaded`` result of a spread load, as _chat_engine.LoadReport.as_result sends it.
RECORDED = {
    "kind": "loaded",
    "path": "/models/big",
    "precision": "nf4",
    "device": "gpu",
    "device_name": "2 × AMD Radeon RX 7900 XTX",
    "bdf": "0000:03:00.0",
    "parameters": 70_553_706_496,
    "context_length": 4096,
    "load_s": 41.2,
    "memory_bytes": 19 * GIB,
    "memory_kind": "vram",
    "gpus": [
        {"index": 0, "name": "AMD Radeon RX 7900 XTX", "bdf": "0000:03:00.0",
         "bytes": int(9.1 * GIB), "layers": [[0, 15]]},
        {"index": 1, "name": "AMD Radeon RX 7900 XTX", "bdf": "0000:04:00.0",
         "bytes": int(8.7 * GIB), "layers": [[16, 31]]},
    ],
    "split": "layers 0-15 on GPU 0, 16-31 on GPU 1",
}  # fmt: skip


def rooms(*free_gib: float) -> list[GpuRoom]:
    return [GpuRoom(f"GPU {i}", int(f * GIB), 24 * GIB) for i, f in enumerate(free_gib)]


def judge(gpus: list[GpuRoom]) -> object:
    first = gpus[0]
    return judge_fit(ESTIMATE, Device.GPU, first.free, total=first.total, gpus=gpus)


def test_the_estimate_is_as_large_as_the_examples_assume() -> None:
    assert 15 * GIB < ESTIMATE.total < 15.2 * GIB


def test_two_gpus_hold_what_one_cannot() -> None:
    verdict = judge(rooms(9, 9))
    assert verdict.fit is Fit.SPREAD and verdict.spread_over == 2
    assert "it will be spread over GPU 0 and GPU 1 (9.00 GiB + 9.00 GiB free)" in verdict.message
    assert verdict.available == 9 * GIB  # the first GPU's figures stay in the verdict


def test_the_fewest_gpus_are_named_biggest_first_in_their_order() -> None:
    verdict = judge(rooms(5, 6, 6, 6))
    assert verdict.fit is Fit.SPREAD and verdict.spread_over == 3
    assert "GPU 1, GPU 2 and GPU 3" in verdict.message
    little = judge(rooms(0.9, 8, 8))  # GPU 0 has too little for a share
    assert little.fit is Fit.SPREAD and "over GPU 1 and GPU 2 (" in little.message


def test_another_gpu_that_holds_it_alone_is_preferred() -> None:
    verdict = judge(rooms(4, 20))
    assert verdict.fit is Fit.FITS and "on GPU 1 alone (20.00 GiB free)" in verdict.message


def test_not_even_all_of_them_says_so_with_the_numbers() -> None:
    verdict = judge(rooms(5, 5))
    assert verdict.fit is Fit.WONT_FIT
    assert verdict.message.startswith(f"Needs about {format_memory(ESTIMATE.total)} but")
    assert "the 2 chosen GPUs have only 5.00 GiB + 5.00 GiB free" in verdict.message
    assert "not even spread over them" in verdict.message and "Try 8-bit" in verdict.message


def test_one_gpu_or_a_fitting_first_gpu_keeps_the_plain_verdict() -> None:
    assert judge(rooms(9)).fit is Fit.WONT_FIT
    assert judge(rooms(20, 20)).fit is Fit.FITS
    cpu = judge_fit(ESTIMATE, Device.CPU, 9 * GIB, gpus=rooms(9, 9))
    assert cpu.fit is Fit.WONT_FIT  # RAM is never spread over GPUs


def test_unmeasured_gpus_are_judged_by_their_size_and_say_so() -> None:
    gpus = [GpuRoom("GPU 0", None, 8 * GIB), GpuRoom("GPU 1", None, 8 * GIB)]
    verdict = judge_fit(ESTIMATE, Device.GPU, None, total=8 * GIB, gpus=gpus)
    assert verdict.fit is Fit.SPREAD and "free or in all" in verdict.message


def test_the_chosen_gpus_are_numbered_as_the_job_numbers_them() -> None:
    igpu = GpuInfo("Radeon 780M", bdf="0000:c5:00.0", integrated=True, kfd_node=1)
    second = GpuInfo("RX 7900 XT", bdf="0000:43:00.0", integrated=False, kfd_node=3)
    first = GpuInfo("RX 7900 XTX", bdf="0000:03:00.0", integrated=False, kfd_node=2)
    free = {"0000:03:00.0": 10 * GIB, "0000:43:00.0": 12 * GIB, "0000:c5:00.0": GIB}
    seen: list[str] = []

    def memory_of(gpu: GpuInfo) -> tuple[int | None, int | None]:
        seen.append(gpu.name)
        return free[gpu.bdf or ""], 24 * GIB

    default = chosen_gpu_rooms([second, igpu, first], "", memory_of)
    # The integrated GPU is left out by default; KFD order decides GPU 0 and GPU 1.
    assert [(r.label, r.free) for r in default] == [("GPU 0", 10 * GIB), ("GPU 1", 12 * GIB)]
    assert seen == ["RX 7900 XTX", "RX 7900 XT"]
    everything = chosen_gpu_rooms([second, igpu, first], "all", memory_of)
    assert [r.free for r in everything] == [GIB, 10 * GIB, 12 * GIB]
    one = chosen_gpu_rooms([second, igpu, first], "0000:43:00.0", memory_of)
    assert [(r.label, r.free) for r in one] == [("GPU 0", 12 * GIB)]


def test_a_spread_load_is_read_from_the_recorded_result() -> None:
    loaded = LoadedModel.from_result(RECORDED, REQUESTED)
    assert loaded.spread and loaded.gpus == (0, 1)
    assert loaded.per_gpu_bytes == (int(9.1 * GIB), int(8.7 * GIB))
    assert loaded.bdfs == ("0000:03:00.0", "0000:04:00.0")
    assert loaded.split == "layers 0-15 on GPU 0, 16-31 on GPU 1"
    assert loaded.shares[1] == GpuShare(1, "0000:04:00.0", "AMD Radeon RX 7900 XTX",
                                        int(8.7 * GIB), ((16, 31),))  # fmt: skip
    assert loaded.placement_text() == (
        "Spread over GPU 0 and GPU 1 (layers 0-15 / 16-31), 9.1 + 8.7 GiB"
    )


def test_an_older_worker_or_one_gpu_reads_as_one_device() -> None:
    old = {k: v for k, v in RECORDED.items() if k not in ("gpus", "split")}
    loaded = LoadedModel.from_result(old, REQUESTED)
    assert loaded.shares == () and not loaded.spread and loaded.placement_text() == ""
    single = LoadedModel.from_result({**RECORDED, "gpus": RECORDED["gpus"][:1]}, REQUESTED)
    assert single.gpus == (0,) and single.placement_text() == ""


def test_garbled_gpu_entries_are_left_out_and_missing_figures_dropped() -> None:
    gpus = [
        {"index": 0, "name": "A", "layers": [[0, 3], [8, 11]]},
        {"index": "1"},
        "GPU 2",
        {"index": 2, "bdf": 7, "bytes": True, "layers": [[12], "x", [13, 31]]},
    ]
    loaded = LoadedModel.from_result({**RECORDED, "gpus": gpus}, REQUESTED)
    assert loaded.gpus == (0, 2)
    assert loaded.shares[1].bdf is None and loaded.shares[1].bytes is None
    # Layers where both said; no figures when one GPU's are unknown.
    assert loaded.placement_text() == "Spread over GPU 0 and GPU 2 (layers 0-3, 8-11 / 13-31)"
