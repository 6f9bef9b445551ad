"""The Setup tab: the app's inventory (detected off the GUI thread), cards, checklist
fixes, pasted output analysed in the background, Markdown report, extra pages, and the
real probe."""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QPushButton

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.jobs.runner import JobManager
from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.setup import captured as captured_module
from rocmpanel.setup.views.gpu_card import GpuCard
from rocmpanel.setup.views.tab import SetupTab

from ...machine.test_parsers import ROCMINFO

RX6700 = GpuInfo(
    "AMD Radeon RX 6700 XT",
    gfx="gfx1031",
    pci_id="1002:73df",
    bdf="0000:28:00.0",
    vram_bytes=12 * 2**30,
    integrated=False,
    sources=("rocminfo",),
)
HOST = HostFacts(
    kfd_present=True,
    kfd_rw=True,
    render_nodes=("/dev/dri/renderD128",),
    render_rw=True,
    user="alice",
    process_groups=frozenset({"render", "video"}),
    member_groups=frozenset({"render", "video"}),
    amdgpu_loaded=True,
    rocm_installs=("/opt/rocm",),
)


@pytest.fixture
def make_tab(qtbot, monkeypatch):
    jobs = JobManager()
    messages: list[str] = []
    tabs: list[SetupTab] = []

    def make(
        system: SystemInfo | None = None,
        probe: bool = False,
        detector: Callable[[], Inventory] | None = None,
        holder: InventoryHolder | None = None,
    ) -> SetupTab:
        threads: list[str] = []

        def detect() -> Inventory:
            threads.append(threading.current_thread().name)
            return Inventory(
                system
                or SystemInfo(os="linux", rocm_version="6.2.2", driver="amdgpu", gpus=(RX6700,)),
                HOST,
            )

        monkeypatch.setattr(SetupTab, "probe_on_refresh", probe)
        holder = holder or InventoryHolder(detector=detector or detect)
        ctx = AppContext(
            settings=Settings.load(), jobs=jobs, notify=messages.append, inventory=holder
        )
        tab = SetupTab(ctx)
        tab.messages = messages  # type: ignore[attr-defined]
        tab.detector_threads = threads  # type: ignore[attr-defined]
        qtbot.addWidget(tab)
        tabs.append(tab)
        return tab

    yield make
    for tab in tabs:
        tab.shutdown()
    jobs.shutdown()
    # A detection a test did not wait for still delivers: let it, here. The holder and
    # its pending delivery hold each other (a reference cycle); collect them now, on this
    # thread, rather than leave them to a collection that may run on a pool thread and
    # delete Qt objects there.
    assert wait_for_background(10000)
    qtbot.wait(20)
    tabs.clear()
    gc.collect()


def _show(qtbot, tab: SetupTab) -> None:
    tab.resize(1200, 800)
    tab.show()
    qtbot.waitUntil(lambda: tab.report is not None, timeout=10000)


class _PaintSpy(QObject):
    """Appends "paint" to ``events`` at each paint of ``widget``."""

    def __init__(self, widget: QObject, events: list[str]) -> None:
        super().__init__()
        self.widget, self.events = widget, events
        widget.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.widget and event.type() == QEvent.Type.Paint:
            self.events.append("paint")
        return False


def _spy_on_starts(tab: SetupTab, monkeypatch, events: list[str]) -> None:
    """Record "detect" when the tab asks for a detection and "probe" when it probes."""
    holder = tab.ctx.inventory
    real_ensure = holder.ensure

    def ensure() -> None:
        events.append("detect")
        real_ensure()

    monkeypatch.setattr(holder, "ensure", ensure)
    monkeypatch.setattr(tab.probe_box, "start", lambda: events.append("probe"))


def test_detection_and_probe_start_after_the_first_paint(qtbot, make_tab, monkeypatch) -> None:
    tab = make_tab(probe=True)
    assert not tab.ctx.inventory.busy  # building the tab started no detection
    events: list[str] = []
    _spy_on_starts(tab, monkeypatch, events)
    spy = _PaintSpy(tab, events)
    tab.resize(1200, 800)
    tab.show()
    assert events == []  # nor did showing it: both would hold up the first frame
    qtbot.waitUntil(lambda: "probe" in events, timeout=5000)
    assert events[0] == "paint"
    assert [e for e in events if e != "paint"] == ["detect", "probe"]
    qtbot.waitUntil(lambda: tab.report is not None, timeout=10000)  # and the machine shows
    spy.deleteLater()


def test_a_tab_closed_before_its_first_paint_starts_nothing(qtbot, make_tab, monkeypatch) -> None:
    tab = make_tab(probe=True)
    events: list[str] = []
    _spy_on_starts(tab, monkeypatch, events)
    spy = _PaintSpy(tab, events)
    tab.show()
    tab.shutdown()  # the smoke test closes the window right after its first paint
    qtbot.waitUntil(lambda: "paint" in events, timeout=5000)
    qtbot.wait(50)
    assert "detect" not in events and "probe" not in events
    spy.deleteLater()


def test_detection_runs_off_the_gui_thread_and_fills_cards(qtbot, make_tab) -> None:
    tab = make_tab()
    _show(qtbot, tab)
    assert tab.detector_threads and tab.detector_threads[0] != threading.main_thread().name
    cards = tab.findChildren(GpuCard)
    assert len(cards) == 1
    assert cards[0].verdict.override == "10.3.0"
    assert "community" in cards[0].badge.toolTip()
    assert not tab.busy.isVisible()


def test_override_fix_emits_env_change(qtbot, make_tab) -> None:
    tab = make_tab()
    _show(qtbot, tab)
    button = tab.findChild(QPushButton, "fix_hsa_override")
    assert button is not None
    with qtbot.waitSignal(tab.env_change_requested) as blocker:
        button.click()
    assert blocker.args == ["HSA_OVERRIDE_GFX_VERSION", "10.3.0"]
    # The fix is staged in the Environment page for review, not written.
    assert tab.pages.currentWidget().findChild(type(tab.env_editor)) is tab.env_editor
    assert tab.env_editor.staged == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}


def test_command_fix_copies_and_never_runs(qtbot, make_tab) -> None:
    host_denied = SystemInfo(os="linux", rocm_version="6.2.2", gpus=(RX6700,))
    tab = make_tab(host_denied)
    _show(qtbot, tab)
    tab._host = HostFacts(**{**HOST.__dict__, "kfd_rw": False})
    tab._rebuild()
    button = tab.findChild(QPushButton, "fix_kfd_access")
    assert button is not None and button.text() == "Copy command"
    button.click()
    assert "usermod" in QGuiApplication.clipboard().text()


def test_no_gpu_says_so(qtbot, make_tab) -> None:
    tab = make_tab(SystemInfo(os="linux"))
    _show(qtbot, tab)
    texts = [label.text() for label in tab.findChildren(QLabel)]
    assert any("No AMD GPU was found" in t for t in texts)
    assert tab.check_grid.count() > 0


def test_pasted_output_and_back(qtbot, make_tab) -> None:
    tab = make_tab()
    _show(qtbot, tab)
    with qtbot.waitSignal(tab.report_changed, timeout=10000):
        tab.analyse_texts([ROCMINFO], rocm_version="6.2.2")
    assert "Pasted output" in tab.heading.text()
    assert tab.report is not None
    assert [g.name for g in tab.report.system.gpus] == ["AMD Radeon RX 6800 XT"]
    tab.analyse_texts(["not a tool output"])
    qtbot.waitUntil(lambda: "recognises" in tab.error_label.text(), timeout=10000)
    tab.back_button.click()
    assert "This machine" in tab.heading.text()


def test_copy_report_is_markdown(qtbot, make_tab) -> None:
    tab = make_tab()
    _show(qtbot, tab)
    tab.copy_report()
    text = QGuiApplication.clipboard().text()
    assert text.startswith("### rocmpanel doctor report")
    assert "AMD Radeon RX 6700 XT" in text


def test_add_page(qtbot, make_tab) -> None:
    tab = make_tab()
    tab.add_page(QLabel("more"), "More")
    titles = [tab.pages.tabText(i) for i in range(tab.pages.count())]
    assert titles == ["Overview", "Environment", "More"]


def test_detection_error_is_shown(qtbot, make_tab) -> None:
    def broken() -> Inventory:
        raise RuntimeError("sysfs exploded")

    tab = make_tab(detector=broken)
    tab.resize(800, 600)
    tab.show()
    qtbot.waitUntil(lambda: "sysfs exploded" in tab.error_label.text(), timeout=10000)
    assert not tab.busy.isVisible() and tab.refresh_button.isEnabled()


def test_detecting_until_the_inventory_arrives(qtbot, make_tab) -> None:
    release = threading.Event()

    def slow() -> Inventory:
        release.wait(10)
        return Inventory(SystemInfo(os="linux", gpus=(RX6700,)), HOST)

    tab = make_tab(detector=slow)
    tab.show()
    assert tab.busy.isVisible() and "Detecting" in tab.busy_label.text()
    assert not tab.refresh_button.isEnabled() and tab.report is None
    with qtbot.waitSignal(tab.report_changed, timeout=10000):
        release.set()
    assert not tab.busy.isVisible() and tab.refresh_button.isEnabled()
    assert [card.gpu.name for card in tab.findChildren(GpuCard)] == [RX6700.name]


def test_a_known_inventory_is_shown_without_detecting(qtbot, make_tab) -> None:
    calls: list[int] = []

    def counting() -> Inventory:
        calls.append(1)
        return Inventory(SystemInfo(os="linux"), HOST)

    holder = InventoryHolder(detector=counting)
    holder.set_current(Inventory(SystemInfo(os="linux", gpus=(RX6700,)), HOST))
    tab = make_tab(holder=holder)
    assert tab.report is not None and not tab.busy.isVisible()
    assert [g.name for g in tab.report.system.gpus] == [RX6700.name]
    tab.show()
    qtbot.wait(50)  # past the first paint, when the tab calls ensure()
    assert calls == []  # ensure() found the inventory already there


def test_refresh_asks_the_inventory_to_detect_again(qtbot, make_tab) -> None:
    tab = make_tab()
    _show(qtbot, tab)
    assert len(tab.detector_threads) == 1
    with qtbot.waitSignal(tab.report_changed, timeout=10000):
        tab.refresh_button.click()
    assert len(tab.detector_threads) == 2


def test_the_inventory_of_another_tab_updates_this_one(qtbot, make_tab) -> None:
    tab = make_tab()
    _show(qtbot, tab)
    newer = Inventory(SystemInfo(os="linux", rocm_version="6.2.2"), HOST)
    with qtbot.waitSignal(tab.report_changed, timeout=5000):
        tab.ctx.inventory.set_current(newer)
    assert tab.report is not None and tab.report.system.gpus == ()


def test_detection_failure_goes_through_report(qtbot, make_tab, caplog) -> None:
    def denied() -> Inventory:
        raise PanelError("The GPUs could not be read.", "EACCES on /sys/class/kfd")

    tab = make_tab(detector=denied)
    with caplog.at_level(logging.WARNING, logger="rocmpanel.report"):
        tab.show()
        qtbot.waitUntil(lambda: bool(tab.error_label.text()), timeout=10000)
    assert tab.error_label.text() == "The GPUs could not be read."
    assert "EACCES on /sys/class/kfd" in caplog.text  # the detail is logged, not shown


def test_pasted_output_is_parsed_off_the_gui_thread(qtbot, make_tab, monkeypatch) -> None:
    threads: list[str] = []
    real = captured_module.analyse_texts

    def spy(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(captured_module, "analyse_texts", spy)
    tab = make_tab()
    _show(qtbot, tab)
    with qtbot.waitSignal(tab.report_changed, timeout=10000):
        tab.analyse_texts([ROCMINFO])
        assert "Analysing" in tab.busy_label.text()
    assert threads and threads[0] != threading.main_thread().name


def test_back_drops_an_analysis_still_running(qtbot, make_tab, monkeypatch) -> None:
    release = threading.Event()
    real = captured_module.analyse_texts

    def slow(*args, **kwargs):
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(captured_module, "analyse_texts", slow)
    tab = make_tab()
    _show(qtbot, tab)
    tab.analyse_texts([ROCMINFO])
    tab.back_button.click()
    release.set()
    qtbot.wait(300)
    assert "This machine" in tab.heading.text()
    assert tab.report is not None and [g.name for g in tab.report.system.gpus] == [RX6700.name]


def test_an_inventory_arriving_during_a_failed_analysis_is_shown(
    qtbot, make_tab, monkeypatch
) -> None:
    release = threading.Event()
    real = captured_module.analyse_texts

    def slow(*args, **kwargs):
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(captured_module, "analyse_texts", slow)
    tab = make_tab()
    _show(qtbot, tab)
    tab.analyse_texts(["not a tool output"])
    tab.ctx.inventory.set_current(Inventory(SystemInfo(os="linux", rocm_version="6.2.2"), HOST))
    assert tab.report is not None and tab.report.system.gpus == (RX6700,)  # not yet
    with qtbot.waitSignal(tab.report_changed, timeout=10000):
        release.set()
    assert tab.report.system.gpus == () and "recognises" in tab.error_label.text()


def test_paste_button_analyses_and_warns_on_unknown_text(qtbot, make_tab, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    from rocmpanel.setup.views.paste_dialog import PasteDialog

    pasted = [ROCMINFO]

    def fake_exec(dialog: PasteDialog) -> int:
        dialog.text.setPlainText(pasted[0])
        return 1

    warnings: list[str] = []
    monkeypatch.setattr(PasteDialog, "exec", fake_exec)
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text: warnings.append(text))
    tab = make_tab()
    _show(qtbot, tab)
    with qtbot.waitSignal(tab.report_changed, timeout=10000):
        tab.paste_button.click()
    assert "Pasted output" in tab.heading.text() and tab.back_button.isVisible()
    pasted[0] = "not a tool output"
    tab.paste_button.click()
    qtbot.waitUntil(lambda: bool(warnings), timeout=10000)
    assert "recognises" in warnings[0] and warnings[0] == tab.error_label.text()


@pytest.mark.torch
@pytest.mark.slow
def test_real_probe_fills_torch_check(qtbot, make_tab) -> None:
    pytest.importorskip("torch")
    tab = make_tab(probe=True)
    _show(qtbot, tab)
    qtbot.waitUntil(lambda: tab.report is not None and tab.report.probe is not None, timeout=120000)
    checks = {c.id: c for c in tab.report.checks}  # type: ignore[union-attr]
    assert checks["torch_build"].status.value != "skip"
    assert "Python" in tab.probe_box.label.text()
