"""The Setup tab: detection off the GUI thread, cards, checklist fixes, pasted output,
Markdown report, extra pages, and the real probe."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QPushButton

from rocmpanel.base.settings import Settings
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager
from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo
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
    ctx = AppContext(settings=Settings.load(), jobs=jobs, notify=messages.append)
    tabs: list[SetupTab] = []

    def make(system: SystemInfo | None = None, probe: bool = False) -> SetupTab:
        threads: list[str] = []

        def detector():
            threads.append(threading.current_thread().name)
            return system or SystemInfo(
                os="linux", rocm_version="6.2.2", driver="amdgpu", gpus=(RX6700,)
            ), HOST

        monkeypatch.setattr(SetupTab, "detector", staticmethod(detector))
        monkeypatch.setattr(SetupTab, "probe_on_refresh", probe)
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


def _show(qtbot, tab: SetupTab) -> None:
    with qtbot.waitSignal(tab.report_changed, timeout=10000):
        tab.resize(1200, 800)
        tab.show()


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
    assert tab.analyse_texts([ROCMINFO], rocm_version="6.2.2")
    assert "Pasted output" in tab.heading.text()
    assert tab.report is not None
    assert [g.name for g in tab.report.system.gpus] == ["AMD Radeon RX 6800 XT"]
    assert not tab.analyse_texts(["not a tool output"])
    assert "recognises" in tab.error_label.text()
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


def test_detection_error_is_shown(qtbot, make_tab, monkeypatch) -> None:
    tab = make_tab()

    def broken():
        raise RuntimeError("sysfs exploded")

    monkeypatch.setattr(SetupTab, "detector", staticmethod(broken))
    tab.resize(800, 600)
    tab.show()
    qtbot.waitUntil(lambda: "sysfs exploded" in tab.error_label.text(), timeout=10000)


@pytest.mark.torch
@pytest.mark.slow
def test_real_probe_fills_torch_check(qtbot, make_tab) -> None:
    pytest.importorskip("torch")
    tab = make_tab(probe=True)
    _show(qtbot, tab)
    qtbot.waitUntil(lambda: tab.report is not None and tab.report.probe is not None, timeout=120000)
    checks = {c.id: c for c in tab.report.checks}  # type: ignore[union-attr]
    assert checks["torch_build"].status.value != "skip"
    assert "Python" in tab.probe_label.text()
