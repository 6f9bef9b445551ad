"""File → Export health report…: gathered in the background, previewed, saved, copied."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager
from rocmpanel.machine.inventory import detect_inventory
from rocmpanel.shell.report_dialog import HealthReportDialog, export_health_report


@pytest.fixture
def ctx(qtbot, tmp_path: Path, kfd: ModuleType, monkeypatch):
    tree = kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX)
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(tree))
    monkeypatch.setenv("USER", "alicebob")
    monkeypatch.setenv("HIP_NOTE", "/home/alicebob/hip")
    manager = JobManager(grace_s=2.0)
    context = AppContext(Settings.load(), manager, lambda _message: None)
    context.inventory.set_current(detect_inventory({}, sysfs_root=tree))
    yield context
    manager.shutdown()
    assert wait_for_background(10_000)


@pytest.fixture
def window(qtbot) -> QWidget:
    """What the dialog opens over (the main window in the panel)."""
    parent = QWidget()
    qtbot.addWidget(parent)
    return parent


@pytest.fixture
def opened(qtbot, ctx: AppContext, window: QWidget) -> HealthReportDialog:
    dialog = export_health_report(window, ctx)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=20_000)
    return dialog


def test_gathers_and_previews_without_user_names(qtbot, opened: HealthReportDialog) -> None:
    dialog = opened
    assert dialog.save_button.isEnabled() and dialog.busy.isHidden()
    shown = dialog.preview.toPlainText()
    assert "gfx1100" in shown and "HIP_NOTE" in shown
    assert "alicebob" not in shown and "/home/<user>/hip" in shown
    dialog.keep_paths.setChecked(True)  # the user agrees: the name stays
    assert "/home/alicebob/hip" in dialog.preview.toPlainText()
    dialog.view_kind.setCurrentIndex(1)
    assert dialog.preview.toPlainText().startswith("## rocmpanel health report")


def test_save_writes_the_file_in_the_chosen_format(
    qtbot, opened: HealthReportDialog, tmp_path: Path
) -> None:
    dialog = opened
    target = tmp_path / "out.html"
    with qtbot.waitSignal(dialog.saved, timeout=10_000) as saved:
        dialog.save_to(target)
    assert saved.args == [str(target)]
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "alicebob" not in page
    assert str(target) in dialog.status.text()


def test_the_save_button_asks_and_a_folder_is_a_message(
    qtbot, opened: HealthReportDialog, tmp_path: Path, monkeypatch
) -> None:
    dialog = opened
    folder = tmp_path / "taken.md"
    folder.mkdir()
    monkeypatch.setattr(dialog, "ask_path", lambda: str(folder))
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.save_button.isEnabled(), timeout=10_000)
    assert "it is a folder" in dialog.status.text()
    monkeypatch.setattr(dialog, "ask_path", lambda: str(tmp_path / "r.md"))
    with qtbot.waitSignal(dialog.saved, timeout=10_000):
        dialog.save_button.click()
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("## rocmpanel")


def test_copy_markdown_fills_the_clipboard(qtbot, opened: HealthReportDialog) -> None:
    dialog = opened
    dialog.copy_button.click()
    copied = QGuiApplication.clipboard().text()
    assert copied.startswith("## rocmpanel health report") and "alicebob" not in copied


def test_demo_context_says_demo(qtbot, ctx: AppContext, window: QWidget) -> None:
    ctx.demo = True
    dialog = export_health_report(window, ctx)
    with qtbot.waitSignal(dialog.gathered, timeout=20_000):
        pass
    assert "DEMO:" in dialog.preview.toPlainText()


def test_a_failed_gathering_is_shown_not_raised(
    qtbot, ctx: AppContext, window: QWidget, monkeypatch
) -> None:
    from rocmpanel.shell import report_dialog

    def broken(_inputs: object) -> None:
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(report_dialog, "_gather", broken)
    dialog = export_health_report(window, ctx)
    qtbot.waitUntil(lambda: "the disk is on fire" in dialog.status.text(), timeout=10_000)
    assert not dialog.save_button.isEnabled()


def test_the_monitor_tabs_history_gives_the_peaks(qtbot, window: QWidget, monkeypatch) -> None:
    """Found among the window's children, never built for the report."""
    import sys
    import types

    from rocmpanel.monitor.history import TelemetryHistory
    from rocmpanel.monitor.sample import GpuIdentity, GpuSample, Sample
    from rocmpanel.shell.report_dialog import monitor_peaks

    class MonitorTab(QWidget):
        history: TelemetryHistory | None = None

    module = types.ModuleType("fake_monitor_tab")
    module.MonitorTab = MonitorTab  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rocmpanel.monitor.views.tab", module)
    assert monitor_peaks(window) is None  # no Monitor tab built
    tab = MonitorTab(window)
    assert monitor_peaks(window) is None  # built, nothing recorded yet
    tab.history = TelemetryHistory(full_capacity=100, coarse_capacity=10)
    ident = GpuIdentity("0000:03:00.0", "card0", "0000:03:00.0", "1002:744c", "RX 7900 XTX")
    import time

    tab.history.add(Sample(time.time() - 5, (GpuSample(ident, False, busy_percent=64.0),), None))
    peaks = monitor_peaks(window)
    assert peaks is not None and peaks.gpus[0].busy == "64 %"


def test_the_preview_takes_out_the_host_and_the_user_as_a_word(
    qtbot, ctx: AppContext, window: QWidget, monkeypatch
) -> None:
    """Not only /home/<name>: the dialog redacts with this machine's user and host (a
    redactor that knows neither still rewrote /home/alicebob, so the test above passed)."""
    monkeypatch.setenv("HOSTNAME", "forge-7")
    monkeypatch.setenv("HIP_WHO", "built by alicebob on forge-7")
    dialog = export_health_report(window, ctx)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=20_000)
    shown = dialog.preview.toPlainText()
    assert "HIP_WHO" in shown and "built by <user> on <host>" in shown
    assert "alicebob" not in shown and "forge-7" not in shown
