"""The active tuning preset in the main window: the status bar's button (from the settings
at start, before the Tuning tab is opened), its click, a preset gone missing, and a job
launched under the preset the window holds."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.jobs.presets import HEADER_VAR, Item, Preset, PresetStore
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell.main_window import MainWindow
from rocmpanel.tuning.views.tab import TuningTab

ENV_PRESET = Preset(
    "find-fast",
    "Find fast",
    env=(Item("env", "MIOPEN_FIND_MODE", "FAST", "Quick find.", "miopen_find"),),
    torch=(Item("torch", "cpu_threads", 3, "Three threads.", "pt_threads"),),
)
REPORT_ENV = (
    "import json, os\n"
    "print(json.dumps({'event': 'result', 'data': {"
    "'find': os.environ.get('MIOPEN_FIND_MODE'), "
    f"'header': os.environ.get('{HEADER_VAR}')}}}}))\n"
)


class AlphaTab(QLabel):
    title = "Alpha"

    def __init__(self, ctx, parent=None) -> None:
        super().__init__("alpha", parent)

    def shutdown(self) -> None:
        pass


def saved_settings(active: str) -> Settings:
    settings = Settings.load()
    settings.general.active_preset = active
    settings.save()
    return Settings.load()


def make_window(qtbot, settings: Settings, tabs=(AlphaTab,)) -> MainWindow:
    no_gpu = Inventory(SystemInfo("linux"))  # a fixed machine: this one is not detected
    win = MainWindow(settings, tabs=tabs, inventory=InventoryHolder(detector=lambda: no_gpu))
    win.save_on_close = False
    qtbot.addWidget(win)
    return win


def test_no_preset_is_shown_as_none(qtbot) -> None:
    win = make_window(qtbot, Settings.load())
    assert win.status_preset.text() == "Preset: none"
    assert win.status_preset.toolTip() == "The tuning preset jobs run under: click to choose one"


def test_the_saved_preset_is_shown_at_start_then_by_its_name(qtbot) -> None:
    win = make_window(qtbot, saved_settings("rdna3-consumer"))
    assert win.status_preset.text() == "Preset: rdna3-consumer"  # before the store is read
    win.resolve_active_preset()
    qtbot.waitUntil(lambda: win.status_preset.text() == "Preset: RDNA3 consumer", timeout=10_000)
    assert win.ctx.active_preset.ident == "rdna3-consumer"


def test_a_saved_preset_that_is_gone_becomes_none_with_a_message(qtbot) -> None:
    win = make_window(qtbot, saved_settings("gone"))
    win.resolve_active_preset()
    qtbot.waitUntil(lambda: win.status_preset.text() == "Preset: none", timeout=10_000)
    assert win.statusBar().currentMessage() == (
        "The tuning preset “gone” chosen for jobs no longer exists: jobs run without a "
        "preset. Choose one in the Tuning tab."
    )
    assert win.ctx.active_preset.ident == ""


def test_the_button_opens_the_tuning_tab_and_follows_use_for_jobs(qtbot) -> None:
    win = make_window(qtbot, Settings.load(), tabs=(AlphaTab, TuningTab))
    win.show()
    qtbot.mouseClick(win.status_preset, Qt.MouseButton.LeftButton)
    assert win.tab_titles()[win.tabs.currentIndex()] == "Tuning"
    tab = win.tab("Tuning")
    assert isinstance(tab, TuningTab)
    qtbot.waitUntil(lambda: not tab.presets.busy(), timeout=10_000)
    tab.presets.select("throughput")
    tab.presets.use_button.click()
    assert win.status_preset.text() == "Preset: Throughput"
    # The choice is saved in the background: the file follows shortly.
    qtbot.waitUntil(lambda: Settings.load().general.active_preset == "throughput", timeout=10_000)
    tab.presets.stop_button.click()
    assert win.status_preset.text() == "Preset: none"
    assert wait_for_background(10_000)
    assert Settings.load().general.active_preset == ""


def test_the_button_says_so_when_there_is_no_tuning_tab(qtbot) -> None:
    win = make_window(qtbot, Settings.load())
    win.status_preset.click()
    assert win.statusBar().currentMessage() == (
        "Choosing a tuning preset needs the Tuning tab, which this build lacks."
    )


def test_a_job_runs_under_the_preset_the_window_holds(qtbot, tmp_path: Path) -> None:
    PresetStore().save(ENV_PRESET)
    worker = tmp_path / "report_env.py"
    worker.write_text(REPORT_ENV)
    win = make_window(qtbot, Settings.load())
    win.ctx.active_preset.set("find-fast", "Find fast")  # in memory: the settings say none
    job = win.jobs.start(JobSpec("report", worker))
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    assert job.outcome is not None and job.outcome.result is not None
    assert job.outcome.result["find"] == "FAST"
    header = json.loads(job.outcome.result["header"])
    assert (header["id"], header["name"], header["torch"]) == (
        "find-fast",
        "Find fast",
        {"cpu_threads": 3},
    )
    win.ctx.active_preset.clear()
    job = win.jobs.start(JobSpec("report", worker))
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    assert job.outcome is not None and job.outcome.result == {"find": None, "header": None}


def test_a_saved_preset_whose_file_is_damaged_says_why_not_gone(qtbot) -> None:
    from rocmpanel.base import paths

    folder = paths.config_dir() / "presets"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text("id: mine\nname: Mine\narchs: [rdna9]\n")
    win = make_window(qtbot, saved_settings("mine"))
    win.resolve_active_preset()
    qtbot.waitUntil(lambda: win.status_preset.text() == "Preset: none", timeout=10_000)
    message = win.statusBar().currentMessage()
    assert message.startswith("The tuning preset “mine” chosen for jobs cannot be used: ")
    assert "mine.yaml, line 3: archs" in message and "no longer exists" not in message
    assert message.endswith(": jobs run without a preset. Choose one in the Tuning tab.")


def test_use_for_jobs_in_the_tuning_tab_reaches_the_next_job(qtbot, tmp_path: Path) -> None:
    """End to end: the user picks a preset in the Tuning tab, presses "Use for jobs", and
    the next job the window starts runs with its variable and its header."""
    PresetStore().save(ENV_PRESET)
    worker = tmp_path / "report_env.py"
    worker.write_text(REPORT_ENV)
    win = make_window(qtbot, Settings.load(), tabs=(AlphaTab, TuningTab))
    win.show()
    qtbot.mouseClick(win.status_preset, Qt.MouseButton.LeftButton)
    tab = win.tab("Tuning")
    assert isinstance(tab, TuningTab)
    qtbot.waitUntil(lambda: not tab.presets.busy(), timeout=10_000)
    tab.presets.select("find-fast")
    tab.presets.use_button.click()
    assert win.status_preset.text() == "Preset: Find fast"
    job = win.jobs.start(JobSpec("report", worker))
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    assert job.outcome is not None and job.outcome.result is not None
    assert job.outcome.result["find"] == "FAST"
    assert json.loads(job.outcome.result["header"])["id"] == "find-fast"
    assert wait_for_background(10_000)
