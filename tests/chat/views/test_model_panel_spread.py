"""The model panel with two GPUs chosen for jobs: it says before the load that a model
will be spread over them, and after the load which layers went where."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.settings import Settings
from rocmpanel.base.units import GIB
from rocmpanel.chat.memory_estimate import Fit
from rocmpanel.chat.model_check import ModelCheck
from rocmpanel.chat.protocol import LoadedModel, LoadRequest
from rocmpanel.chat.views import model_panel
from rocmpanel.chat.views.model_panel import ModelPanel
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.jobs.runner import JobManager
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.machine.inventory import Inventory

GPU_A = GpuInfo("RX 7900 XTX", bdf="0000:03:00.0", vram_bytes=24 * GIB, integrated=False)
GPU_B = GpuInfo("RX 7900 XTX", bdf="0000:43:00.0", vram_bytes=24 * GIB, integrated=False)
IGPU = GpuInfo("Radeon 780M", bdf="0000:c5:00.0", vram_bytes=2 * GIB, integrated=True)


@pytest.fixture
def panel(qtbot, monkeypatch: pytest.MonkeyPatch, fake_check) -> ModelPanel:
    def check(folder: Path | str, *, trust_remote_code: bool = False) -> ModelCheck:
        return fake_check(folder, trust_remote_code=trust_remote_code)

    monkeypatch.setattr(model_panel, "check_model", check)
    holder = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux")))
    holder.set_current(Inventory(SystemInfo("linux", gpus=(GPU_A, IGPU, GPU_B))))
    ctx = AppContext(Settings.load(), JobManager(), inventory=holder)
    widget = ModelPanel(ctx)
    qtbot.addWidget(widget)
    widget.set_precision(Precision.FP16)  # 7B in fp16: about 15 GiB with its cache
    widget.device_combo.setCurrentIndex(widget.device_combo.findData(Device.GPU.value))
    return widget


def publish_used(panel: ModelPanel, used_a: float, used_b: float) -> None:
    live = panel.ctx.live_memory
    live.publish(GPU_A.bdf or "", int(used_a * GIB), 24 * GIB)
    live.publish(GPU_B.bdf or "", int(used_b * GIB), 24 * GIB)
    live.publish(IGPU.bdf or "", 0, 2 * GIB)


def test_before_the_load_it_says_the_model_will_be_spread(qtbot, panel: ModelPanel) -> None:
    publish_used(panel, 14, 14)  # 10 GiB free on each
    with qtbot.waitSignal(panel.check_finished, timeout=5000):
        panel.set_folder("/models/llama")
    verdict = panel.verdict
    assert verdict is not None and verdict.fit is Fit.SPREAD and verdict.spread_over == 2
    text = panel.check_label.text()
    assert "it will be spread over GPU 0 and GPU 1 (10.00 GiB + 10.00 GiB free)" in text
    publish_used(panel, 2, 14)  # GPU 0 alone holds it now
    panel.refresh_estimate()
    assert panel.verdict is not None and panel.verdict.fit is Fit.FITS


def test_only_the_chosen_gpus_count(qtbot, panel: ModelPanel) -> None:
    panel.settings.general.job_gpus = "0000:03:00.0"  # one GPU chosen for jobs
    publish_used(panel, 14, 0)
    with qtbot.waitSignal(panel.check_finished, timeout=5000):
        panel.set_folder("/models/llama")
    assert panel.verdict is not None and panel.verdict.fit is Fit.WONT_FIT
    assert "10.00 GiB" in panel.verdict.message


def test_after_the_load_the_status_names_each_gpu_and_its_layers(panel: ModelPanel) -> None:
    result = {
        "path": "/models/llama", "precision": "nf4", "device": "gpu",
        "device_name": "2 × AMD Radeon RX 7900 XTX", "parameters": 7_000_000_000,
        "context_length": 4096, "load_s": 12.5, "memory_bytes": 18 * GIB,
        "memory_kind": "vram",
        "gpus": [
            {"index": 0, "bdf": "0000:03:00.0", "name": "RX 7900 XTX",
             "bytes": int(9.1 * GIB), "layers": [[0, 15]]},
            {"index": 1, "bdf": "0000:43:00.0", "name": "RX 7900 XTX",
             "bytes": int(8.7 * GIB), "layers": [[16, 31]]},
        ],
    }  # fmt: skip
    request = LoadRequest("/models/llama", Precision.NF4, Device.GPU, 4096)
    panel.set_loaded(LoadedModel.from_result(result, request))
    status = panel.status_label.text()
    assert "nf4 on 2 × AMD Radeon RX 7900 XTX" in status
    assert "Spread over GPU 0 and GPU 1 (layers 0-15 / 16-31), 9.1 + 8.7 GiB." in status
    one = LoadedModel.from_result({**result, "gpus": result["gpus"][:1]}, request)
    panel.set_loaded(one)
    assert "Spread" not in panel.status_label.text()


def test_the_live_line_reads_every_card_of_a_spread_model(panel: ModelPanel) -> None:
    from rocmpanel.chat.views.figures import vram_text_over

    live = panel.ctx.live_memory
    assert vram_text_over(live, (GPU_A.bdf or "", GPU_B.bdf or "")) == "VRAM n/a"
    publish_used(panel, 9.1, 8.7)
    assert vram_text_over(live, (GPU_A.bdf or "", GPU_B.bdf or "")) == (
        "VRAM used 9.10 GiB + 8.70 GiB"
    )
    assert vram_text_over(live, (GPU_A.bdf or "",)) == "VRAM used 9.10 GiB"
    assert vram_text_over(live, ()) == "VRAM n/a"
