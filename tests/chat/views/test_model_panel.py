"""The model panel without a worker: the folder check off the GUI thread (debounced, stale
results dropped), ranges from the settings' declarations, VRAM from the inventory and the
Monitor's live readings for the right card."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.settings import ChatSettings, Settings, option_of
from rocmpanel.base.units import GIB
from rocmpanel.chat.memory_estimate import Fit
from rocmpanel.chat.model_check import ModelCheck
from rocmpanel.chat.views import model_panel
from rocmpanel.chat.views.model_panel import CHECK_DELAY_MS, ModelPanel
from rocmpanel.chat.views.transcript import MessageWidget
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.jobs.runner import JobManager
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.machine.inventory import Inventory

IGPU = GpuInfo(name="Radeon 780M", bdf="0000:c5:00.0", vram_bytes=2 * GIB, integrated=True)
DGPU = GpuInfo(name="RX 7900 XTX", bdf="0000:03:00.0", vram_bytes=24 * GIB, integrated=False)


@pytest.fixture
def make_panel(qtbot, monkeypatch: pytest.MonkeyPatch, fake_check):
    calls: list[str] = []

    def counting_check(folder: Path | str, *, trust_remote_code: bool = False) -> ModelCheck:
        calls.append(str(folder))
        return fake_check(folder, trust_remote_code=trust_remote_code)

    monkeypatch.setattr(model_panel, "check_model", counting_check)

    def make(inventory: Inventory | None = None) -> ModelPanel:
        holder = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux")))
        if inventory is not None:
            holder.set_current(inventory)
        ctx = AppContext(Settings.load(), JobManager(), inventory=holder)
        panel = ModelPanel(ctx)
        panel.calls = calls  # type: ignore[attr-defined]
        qtbot.addWidget(panel)
        return panel

    return make


def test_typing_a_folder_checks_once_after_a_pause(qtbot, make_panel) -> None:
    panel = make_panel()
    with qtbot.waitSignal(panel.check_finished, timeout=5000):
        qtbot.keyClicks(panel.folder_edit, "/models/llama")
        assert panel.calls == []  # not on each keystroke, not on the GUI thread
        assert panel.check is None and not panel.load_button.isEnabled()
    assert panel.calls == ["/models/llama"]
    assert panel.check is not None and panel.load_button.isEnabled()
    qtbot.wait(CHECK_DELAY_MS + 100)
    assert panel.calls == ["/models/llama"]


def test_a_stale_check_result_is_dropped(qtbot, make_panel, monkeypatch, fake_check) -> None:
    panel = make_panel()
    release = threading.Event()

    def slow_for_a(folder: Path | str, *, trust_remote_code: bool = False) -> ModelCheck:
        if str(folder) == "/a":
            release.wait(5)
        return fake_check(folder)

    monkeypatch.setattr(model_panel, "check_model", slow_for_a)
    panel.set_folder("/a")
    with qtbot.waitSignal(panel.check_finished, timeout=5000):
        panel.set_folder("/b")
    assert panel.check is not None and panel.check.folder == Path("/b")
    release.set()
    qtbot.wait(200)  # /a's answer arrives now and is ignored
    assert panel.check.folder == Path("/b")


def test_a_missing_folder_is_reported_in_the_check_label(qtbot, make_panel, monkeypatch) -> None:
    from rocmpanel.chat.model_check import check_model

    monkeypatch.setattr(model_panel, "check_model", check_model)
    panel = make_panel()
    with qtbot.waitSignal(panel.check_finished, timeout=5000):
        panel.set_folder("/no/such/folder")
    assert panel.check is None and "is not a folder" in panel.check_label.text()


def test_spin_boxes_take_their_ranges_and_defaults_from_the_declarations(make_panel) -> None:
    panel = make_panel()
    box = panel.sampling_box
    for spin, name in (
        (box.temperature_spin, "temperature"),
        (box.top_p_spin, "top_p"),
        (box.top_k_spin, "top_k"),
        (box.repetition_spin, "repetition_penalty"),
        (box.max_new_spin, "max_new_tokens"),
        (box.seed_spin, "seed"),
        (panel.context_spin, "context_length"),
    ):
        declared = option_of(ChatSettings, name)
        assert (spin.minimum(), spin.maximum()) == (declared.minimum, declared.maximum), name
    defaults = ChatSettings()
    assert panel.sampling().repetition_penalty == defaults.repetition_penalty
    assert panel.sampling().max_new_tokens == defaults.max_new_tokens


def test_the_estimate_uses_the_discrete_cards_live_free_vram(qtbot, make_panel) -> None:
    inventory = Inventory(SystemInfo("linux", gpus=(IGPU, DGPU)))
    panel = make_panel(inventory)
    assert panel.has_amd_gpu and panel.precision() is Precision.NF4
    panel.ctx.live_memory.publish(IGPU.bdf or "", 0, 2 * GIB)
    panel.ctx.live_memory.publish(DGPU.bdf or "", 20 * GIB, 24 * GIB)  # 4 GiB free
    panel.set_precision(Precision.FP16)
    with qtbot.waitSignal(panel.check_finished, timeout=5000):
        panel.set_folder("/models/llama")
    verdict = panel.verdict
    assert verdict is not None and verdict.device is Device.GPU
    assert verdict.available == 4 * GIB and verdict.fit is Fit.WONT_FIT
    panel.ctx.live_memory.publish(DGPU.bdf or "", 1 * GIB, 24 * GIB)
    panel.refresh_estimate()
    assert panel.verdict is not None and panel.verdict.fit is Fit.FITS
    panel.device_combo.setCurrentIndex(panel.device_combo.findData(Device.CPU.value))
    assert panel.verdict is not None and panel.verdict.device is Device.CPU
    assert "RAM" in panel.verdict.message


def test_the_default_precision_follows_the_inventory_until_chosen(qtbot, make_panel) -> None:
    panel = make_panel()
    assert panel.precision() is Precision.BF16  # no GPU known yet
    panel.ctx.inventory.set_current(Inventory(SystemInfo("linux", gpus=(DGPU,))))
    assert panel.precision() is Precision.NF4
    index = panel.precision_combo.findData(Precision.INT8.value)
    panel.precision_combo.setCurrentIndex(index)
    panel.precision_combo.activated.emit(index)  # the user's choice
    panel.ctx.inventory.set_current(Inventory(SystemInfo("linux")))
    assert panel.precision() is Precision.INT8
    panel.save_settings()
    assert Settings.load().chat.precision is Precision.INT8


def test_the_automatic_precision_is_not_saved_as_a_choice(qtbot, make_panel) -> None:
    panel = make_panel()
    assert panel.precision() is Precision.BF16  # picked for the CPU, not by the user
    panel.save_settings()
    assert Settings.load().chat.precision is None  # still automatic at the next start


def test_message_widgets_do_not_override_qwidget_render() -> None:
    assert MessageWidget.render is QWidget.render
    assert hasattr(MessageWidget, "refresh_body")


def test_enter_in_the_folder_field_checks_at_once(qtbot, make_panel) -> None:
    panel = make_panel()
    panel.folder_edit.setFocus()
    with qtbot.waitSignal(panel.check_finished, timeout=5000):
        qtbot.keyClicks(panel.folder_edit, "/m")
        qtbot.keyClick(panel.folder_edit, Qt.Key.Key_Return)
    assert panel.calls == ["/m"]


def test_chat_views_read_no_sysfs() -> None:
    import ast

    views = Path(model_panel.__file__).parent
    forbidden = {
        "read_amd_vram",
        "read_device_vram",
        "detected_gpu_budget",
        "read_int",
        "read_text",
    }
    for path in views.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                assert "sysfs" not in module, f"{path.name} imports {module}"
                assert not forbidden & {a.name for a in node.names}, path.name
