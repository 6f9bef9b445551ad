"""The main window shell: tabs, state restore, jobs strip, logs, dialogs, crash handler."""

from __future__ import annotations

import itertools
import json
import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QSpinBox, QWidget

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.base.units import GIB
from rocmpanel.gui import report as report_module
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.gui.report import report
from rocmpanel.jobs.process import JobState
from rocmpanel.jobs.protocol import Progress
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell.about import DETECTING, NO_AMD_GPU, AboutDialog
from rocmpanel.shell.crash_dialog import install_excepthook, uninstall_excepthook
from rocmpanel.shell.main_window import MainWindow
from rocmpanel.shell.settings_dialog import SettingsDialog

SCRIPTS = Path(__file__).resolve().parents[1] / "workers" / "scripts"


class AlphaTab(QLabel):
    title = "Alpha"

    def __init__(self, ctx, parent=None):
        super().__init__("alpha", parent)
        self.shut = False

    def shutdown(self):
        self.shut = True


class BetaTab(QLabel):
    title = "Beta"

    def __init__(self, ctx, parent=None):
        super().__init__("beta", parent)

    def shutdown(self):
        pass


class BrokenTab(QWidget):
    title = "Broken"

    def __init__(self, ctx, parent=None):
        raise RuntimeError("no such hardware")


class NoShutdownTab(QLabel):
    """Breaks the Tab protocol: it has no shutdown()."""

    title = "Careless"

    def __init__(self, ctx, parent=None):
        super().__init__("careless", parent)


RX7900XTX = GpuInfo(
    "Radeon RX 7900 XTX", gfx="gfx1100", vram_bytes=24 * GIB, bdf="0000:03:00.0", integrated=False
)


def machine(*gpus: GpuInfo) -> Inventory:
    return Inventory(SystemInfo("linux", rocm_version="6.4.1", gpus=gpus))


@pytest.fixture
def window(qtbot):
    # A fixed machine: the shell's tests do not detect this one.
    inventory = InventoryHolder(detector=lambda: machine(RX7900XTX))
    win = MainWindow(Settings.load(), tabs=(AlphaTab, BrokenTab, BetaTab), inventory=inventory)
    qtbot.addWidget(win)
    win.show()
    return win


def spec(name: str, *args: str) -> JobSpec:
    return JobSpec(name, SCRIPTS / f"{name}.py", args=args)


def test_tabs_built_lazily_broken_tab_removed_and_reported(window, caplog) -> None:
    assert window.tab_titles() == ["Alpha", "Broken", "Beta"]
    assert window.tabs.widget(0).widget is not None  # the current tab is built at once
    assert window.tabs.widget(2).widget is None  # the others after the first paint
    with caplog.at_level(logging.ERROR, logger="rocmpanel.report"):
        window.build_all_tabs()
    assert window.tab_titles() == ["Alpha", "Beta"]
    assert window.tab_failures == ["The BrokenTab tab could not load: no such hardware"]
    # Through the one error path: the message in the status bar, the traceback in the log.
    assert window.statusBar().currentMessage() == "Loading the Broken tab failed: no such hardware"
    [record] = [r for r in caplog.records if r.name == "rocmpanel.report"]
    assert record.exc_info is not None and "no such hardware" in caplog.text


def test_a_tab_failing_with_a_panel_error_says_which_tab_is_gone(qtbot) -> None:
    class DamagedTab(QWidget):
        title = "Chat"

        def __init__(self, ctx, parent=None) -> None:
            raise PanelError("The chat history at /x/chat.sqlite3 could not be read.", "bad")

        def shutdown(self) -> None: ...

    win = MainWindow(Settings.load(), tabs=(AlphaTab, DamagedTab))
    qtbot.addWidget(win)
    win.build_all_tabs()
    assert win.statusBar().currentMessage() == (
        "The Chat tab could not load: The chat history at /x/chat.sqlite3 could not be read."
    )


def test_other_tabs_are_built_after_the_first_paint(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.tab_titles() == ["Alpha", "Beta"], timeout=5000)
    assert isinstance(window.tab("Beta"), BetaTab)


def test_every_listed_tab_keeps_the_tab_protocol() -> None:
    from rocmpanel.shell.tabs import TABS

    assert [entry.title for entry in TABS] == [
        "Setup",
        "Monitor",
        "PyTorch",
        "Tuning",
        "Chat",
        "Multi-GPU",
    ]
    for entry in TABS:
        cls = entry.load()
        assert isinstance(cls, type) and issubclass(cls, QWidget), entry
        assert cls.title == entry.title
        assert callable(getattr(cls, "shutdown", None)), f"{entry.cls} has no shutdown()"


def test_a_tab_without_shutdown_is_refused_when_built(qtbot) -> None:
    win = MainWindow(Settings.load(), tabs=(AlphaTab, NoShutdownTab))
    qtbot.addWidget(win)
    win.build_all_tabs()
    assert win.tab_titles() == ["Alpha"]
    assert win.tab_failures == [
        "The NoShutdownTab tab could not load: NoShutdownTab is not a QWidget with title "
        "and shutdown"
    ]


def test_reports_go_to_the_status_bar_from_creation_to_close(qtbot) -> None:
    report_module._pending.clear()
    report_module.set_sink(None)
    report(PanelError("Reported before the window existed"))
    win = MainWindow(Settings.load(), tabs=(AlphaTab,))
    qtbot.addWidget(win)
    assert win.statusBar().currentMessage() == "Reported before the window existed"
    report(PanelError("Could not read the journal", "EACCES"))
    assert win.statusBar().currentMessage() == "Could not read the journal"
    other = MainWindow(Settings.load(), tabs=(BetaTab,))
    qtbot.addWidget(other)
    win.close()  # the newer window keeps its sink
    report(PanelError("For the other window"))
    assert other.statusBar().currentMessage() == "For the other window"
    other.close()
    report(PanelError("No window now"))
    assert report_module._pending == ["No window now"]
    report_module._pending.clear()


def test_the_inventory_is_detected_right_after_the_first_paint(qtbot) -> None:
    calls: list[int] = []
    paints: list[int] = []
    holder = InventoryHolder(detector=lambda: machine(RX7900XTX))
    real_ensure = holder.ensure

    def ensure() -> None:
        calls.append(len(paints))
        real_ensure()

    holder.ensure = ensure  # type: ignore[method-assign]
    win = MainWindow(Settings.load(), tabs=(AlphaTab,), inventory=holder)
    qtbot.addWidget(win)

    class PaintCounter(QObject):
        def eventFilter(self, obj, event) -> bool:
            if obj is win and event.type() == QEvent.Type.Paint:
                paints.append(1)
            return False

    counter = PaintCounter()
    win.installEventFilter(counter)
    qtbot.wait(50)
    assert calls == []  # not while the window is being built
    with qtbot.waitSignal(holder.changed, timeout=5000):
        win.show()
    assert calls and calls[0] >= 1  # after the first paint
    assert holder.current is not None and holder.current.gpus == (RX7900XTX,)
    win.removeEventFilter(counter)


def test_closing_waits_for_background_calls(qtbot, window) -> None:
    release = threading.Event()
    delivered: list[object] = []
    call = run_in_background(
        lambda: release.wait(5) and "done", lambda r, e: delivered.append(r), owner=window
    )
    timer = threading.Timer(0.2, release.set)  # not a Qt timer: close blocks the loop
    timer.start()
    window.close()
    assert call.done.is_set()  # close returned only after the call ended
    timer.join()


def test_geometry_and_last_tab_restored(qtbot, window) -> None:
    window.resize(700, 500)
    window.tabs.setCurrentIndex(1)
    alpha = window.tab("Alpha")
    window.close()
    assert alpha.shut
    again = MainWindow(Settings.load(), tabs=(AlphaTab, BetaTab))
    qtbot.addWidget(again)
    assert again.tabs.currentIndex() == 1
    assert (again.width(), again.height()) == (700, 500)


def test_job_chip_progress_done_and_log(qtbot, window) -> None:
    job = window.jobs.start(spec("ok"))
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    chip = window.jobs_strip.chips[-1]
    assert chip.job is job and "done" in chip.step.text()
    qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)
    dialog = window.jobs_strip.dialogs[-1]
    text = dialog.text.toPlainText()
    assert "hello" in text and "[stderr] a line on stderr" in text
    assert dialog.status.text().startswith("Succeeded")


def test_cancel_button_reaps_hung_job(qtbot, window) -> None:
    job = window.jobs.start(spec("hang"))
    chip = window.jobs_strip.chips[-1]
    with qtbot.waitSignal(job.progress_changed, timeout=30_000):
        pass
    started = time.monotonic()
    with qtbot.waitSignal(job.finished, timeout=6_000):
        qtbot.mouseClick(chip.cancel_button, Qt.MouseButton.LeftButton)
    assert time.monotonic() - started < 5
    assert job.state is JobState.CANCELLED
    assert "cancelled" in chip.step.text()


def test_crashed_job_reported_in_status_bar(qtbot, window) -> None:
    job = window.jobs.start(spec("crash"))
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    assert job.state is JobState.CRASHED
    assert "exit code 139" in window.statusBar().currentMessage()
    assert "crashed" in window.jobs_strip.chips[-1].step.text()


def test_flooding_worker_does_not_stall_gui(qtbot, window) -> None:
    lines = 200_000
    job = window.jobs.start(spec("flood", str(lines)))
    batches: list[int] = []
    job.log_added.connect(lambda batch: batches.append(len(batch)))
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(10)
    with qtbot.waitSignal(job.finished, timeout=120_000):
        pass
    timer.stop()
    assert job.state is JobState.SUCCEEDED
    delivered = sum(batches)
    assert delivered >= lines  # every log line reached the GUI ...
    assert len(batches) < delivered / 50  # ... in batches, not one slot call per line
    assert len(job.log) == 5000
    assert [line for line in job.log if line.stream == "worker"][-1].message.startswith(
        "line 199999"
    )
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert gaps and max(gaps) < 1.0  # the event loop kept turning throughout


@pytest.fixture
def reporter():
    hook = install_excepthook()
    yield hook
    uninstall_excepthook()


def test_excepthook_shows_crash_dialog_from_a_thread(qtbot, window, reporter) -> None:
    reporter.set_parent_window(window)

    def fail() -> None:
        raise ValueError("boom in a thread")

    thread = threading.Thread(target=fail)
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: bool(reporter.dialogs), timeout=5_000)
    dialog = reporter.dialogs[-1]
    assert "ValueError: boom in a thread" in dialog.text.toPlainText()
    qtbot.mouseClick(dialog.copy_button, Qt.MouseButton.LeftButton)
    assert "boom in a thread" in QGuiApplication.clipboard().text()
    dialog.close()


def test_about_box_probes_workload_python(qtbot, window) -> None:
    about = AboutDialog(window.ctx, window)
    qtbot.addWidget(about)
    about.probe.start_probe()
    with qtbot.waitSignal(about.probe.job.finished, timeout=120_000):
        pass
    assert about.probe.output.toPlainText().startswith("Python ")


def test_about_box_reports_missing_interpreter(qtbot, window, tmp_path, caplog) -> None:
    window.settings.general.workload_python = str(tmp_path / "missing")
    about = AboutDialog(window.ctx, window)
    qtbot.addWidget(about)
    about.probe.start_probe()
    assert "does not exist" in about.probe.output.toPlainText()
    assert "Pick another interpreter" in caplog.text  # the detail went to the log


def test_about_box_shows_the_shared_inventory(qtbot, window) -> None:
    holder = window.ctx.inventory
    qtbot.waitUntil(lambda: holder.current is not None, timeout=5000)
    about = AboutDialog(window.ctx, window)
    qtbot.addWidget(about)
    text = about.gpus.text.text()
    assert "Radeon RX 7900 XTX · gfx1100 · 24.0 GiB VRAM · 0000:03:00.0" in text
    assert "ROCm 6.4.1" in text
    holder.set_current(machine())  # a refresh reaches the open dialog
    assert about.gpus.text.text() == NO_AMD_GPU


def test_about_box_waits_for_a_detection_and_shows_its_failure(qtbot) -> None:
    release = threading.Event()

    def detector() -> Inventory:
        release.wait(5)
        raise PanelError("rocminfo timed out", "after 30 s")

    holder = InventoryHolder(detector=detector)
    win = MainWindow(Settings.load(), tabs=(AlphaTab,), inventory=holder)
    qtbot.addWidget(win)
    about = AboutDialog(win.ctx, win)  # before the first paint: the dialog starts it
    qtbot.addWidget(about)
    assert holder.busy and about.gpus.text.text() == DETECTING
    with qtbot.waitSignal(holder.failed, timeout=5000):
        release.set()
    assert about.gpus.text.text() == "rocminfo timed out"


def test_settings_dialog_validates_and_saves(qtbot, window) -> None:
    dialog = SettingsDialog(window.settings, window)
    qtbot.addWidget(dialog)
    assert dialog.editor("window_geometry") is None  # kept by the program, not shown
    spin = dialog.editor("telemetry_interval_ms")
    assert isinstance(spin, QSpinBox) and spin.maximum() == 5000  # range from the declaration
    spin.setValue(1000)
    dialog.accept()
    assert Settings.load().monitor.interval_ms == 1000


def test_settings_dialog_reports_a_value_that_does_not_fit(
    qtbot, window, monkeypatch, caplog
) -> None:
    dialog = SettingsDialog(window.settings, window)
    qtbot.addWidget(dialog)

    def refuse(self, item, value) -> None:
        raise ValueError(f"{item.option.key} must be at most 5000")

    monkeypatch.setattr(Settings, "assign", refuse)
    with caplog.at_level(logging.ERROR, logger="rocmpanel.report"):
        dialog.accept()
    assert dialog.error.text().startswith("Saving settings failed: ")
    assert "must be at most 5000" in dialog.error.text()
    assert "must be at most 5000" in caplog.text  # logged by report(), not only shown
    assert dialog.result() != dialog.DialogCode.Accepted


def test_settings_dialog_reports_a_failed_save(qtbot, window, monkeypatch, caplog) -> None:
    dialog = SettingsDialog(window.settings, window)
    qtbot.addWidget(dialog)

    def fail(self, **_kw: object) -> None:
        raise PanelError("The settings could not be saved.", "EACCES on settings.toml")

    monkeypatch.setattr(Settings, "save", fail)
    with caplog.at_level(logging.WARNING, logger="rocmpanel.report"):
        dialog.accept()
    assert dialog.error.text() == "The settings could not be saved."
    assert "EACCES on settings.toml" in caplog.text  # the detail is logged, not shown


# What the first frame must not wait for: detection, the logic behind the Setup tab's
# verdicts, the job environment, dialogs not open yet, plotting, the icon, log rotation,
# the closed log dock.
NOT_BEFORE_FIRST_PAINT = (
    "rocmpanel.machine.detect",
    "rocmpanel.machine.pci_ids",
    "rocmpanel.jobs.job_env",
    "rocmpanel.setup.captured",
    "rocmpanel.setup.checklist",
    "rocmpanel.setup.report",
    "rocmpanel.shell.about",
    "rocmpanel.shell.settings_dialog",
    "rocmpanel.gui.icons",
    "rocmpanel.gui.log_view",  # the log dock, closed, is built after the first frame
    "rocmpanel.setup.cli",
    "rocmpanel.monitor.cli",
    "logging.handlers",
    "yaml",
    "numpy",
    "pyqtgraph",
)

# ``rocmpanel --smoke-test``, with a watcher that notes sys.modules at the first paint.
_FIRST_PAINT_MODULES = """
import json, sys
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
seen = []
class Watch(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and not seen:
            seen.append(sorted(sys.modules))
        return False
watch = Watch()
app.installEventFilter(watch)
from rocmpanel.shell.cli import main
main(["--smoke-test"])
print(json.dumps(seen[0] if seen else None))
"""


def test_the_first_paint_waits_for_no_detection_probe_or_plotting() -> None:
    """The real start-up, in a fresh process: what is imported when the first frame paints."""
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_PAINT_MODULES], capture_output=True, text=True, timeout=60
    )
    *smoke, last = out.stdout.strip().splitlines()
    modules = json.loads(last)
    assert modules is not None, out.stderr
    assert json.loads(smoke[-1])["tabs"][0] == "Setup"  # a first run opens on Setup ...
    assert "rocmpanel.setup.views.tab" in modules  # ... which the first frame shows
    assert [m for m in NOT_BEFORE_FIRST_PAINT if m in modules] == []


def test_first_painted_follows_the_first_paint_once(qtbot) -> None:
    win = MainWindow(Settings.load(), tabs=(AlphaTab,))
    qtbot.addWidget(win)
    emitted: list[int] = []
    win.first_painted.connect(lambda: emitted.append(1))
    qtbot.wait(20)
    assert emitted == []  # not before it is shown and painted
    with qtbot.waitSignal(win.first_painted, timeout=5000):
        win.show()
    win.update()
    qtbot.wait(50)
    assert emitted == [1]


def test_log_dock_receives_records(qtbot, window) -> None:
    import logging

    logging.getLogger("rocmpanel.test").warning("visible in the log dock")
    qtbot.waitUntil(
        lambda: "visible in the log dock" in window.log_view.toPlainText(), timeout=3000
    )


def test_shutdown_detaches_jobs_so_late_events_are_dropped(qtbot, window) -> None:
    job = window.jobs.start(spec("hang"))
    window.jobs.shutdown(timeout=5)
    assert not job.running or job.wait(0) is not None
    late = Progress(0.5, "late")
    job._enqueue(late)  # what a straggling reader thread would do
    assert late not in job._pending
