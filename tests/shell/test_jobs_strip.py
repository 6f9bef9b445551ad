"""The jobs strip keeps its height whether or not chips show (nothing above it moves), and a
chip's cancel button says what the job calls cancelling (a loaded chat model: "Unload")."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from rocmpanel.base.settings import Settings
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.runner import Job, JobManager
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell.jobs_strip import CHIP_AREA_HEIGHT, JobChip, JobsStrip
from rocmpanel.shell.main_window import MainWindow


class QuietTab(QLabel):
    title = "Quiet"

    def __init__(self, ctx, parent=None):  # type: ignore[no-untyped-def]
        super().__init__("quiet", parent)

    def shutdown(self) -> None:
        pass


def unstarted(name: str) -> Job:
    """A job as the strip sees it; no process is started."""
    return Job(JobSpec(name, "probe"))


def finish(job: Job) -> None:
    job.outcome = JobOutcome(JobState.SUCCEEDED, 0, "Done.")
    job.finished.emit(job.outcome)


@pytest.fixture
def window(qtbot: QtBot) -> MainWindow:
    inventory = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux")))
    win = MainWindow(Settings.load(), tabs=(QuietTab,), inventory=inventory)
    qtbot.addWidget(win)
    win.resize(900, 600)
    win.show()
    qtbot.waitExposed(win)
    return win


def test_the_strip_keeps_its_height_and_the_tabs_their_place(
    qtbot: QtBot, window: MainWindow
) -> None:
    strip = window.jobs_strip

    def measure() -> tuple[int, tuple[int, int, int, int]]:
        window.centralWidget().layout().activate()  # settle the layout now, no waiting
        tabs = window.tabs.geometry()
        return strip.height(), (tabs.x(), tabs.y(), tabs.width(), tabs.height())

    empty = measure()
    assert empty[0] >= CHIP_AREA_HEIGHT
    assert strip.empty.isVisible() and not strip.chip_area.isVisible()
    jobs = [unstarted(f"job {n}") for n in range(3)]
    window.jobs.job_added.emit(jobs[0])
    assert len(strip.chips) == 1 and strip.chip_area.isVisible()
    assert measure() == empty
    for job in jobs[1:]:
        window.jobs.job_added.emit(job)
    assert len(strip.chips) == 3
    assert measure() == empty
    for chip in list(strip.chips):
        finish(chip.job)
        assert chip.cancel_button.text() == "×"
        qtbot.mouseClick(chip.cancel_button, Qt.MouseButton.LeftButton)  # removes the chip
    assert strip.chips == [] and strip.empty.isVisible()
    assert measure() == empty


def test_every_chip_fits_the_strip(qtbot: QtBot) -> None:
    strip = JobsStrip(JobManager())
    qtbot.addWidget(strip)
    strip.manager.job_added.emit(unstarted("a job with a name"))
    chip = strip.chips[0]
    assert chip.sizeHint().height() <= strip.chip_area.height()
    assert strip.height() == strip.chip_area.height()


def test_the_cancel_button_follows_the_jobs_cancel_label(qtbot: QtBot) -> None:
    job = unstarted("chat")
    chip = JobChip(job)
    qtbot.addWidget(chip)
    assert chip.cancel_button.text() == "Cancel"
    assert chip.cancel_button.toolTip() == "Cancel chat"
    job.set_cancel_label("Unload")  # the model has loaded
    assert chip.cancel_button.text() == "Unload"
    assert chip.cancel_button.toolTip() == "Unload chat"
    job.set_cancel_label("Cancel")  # loading another one
    assert (chip.cancel_button.text(), chip.cancel_button.toolTip()) == ("Cancel", "Cancel chat")


def test_a_chip_made_for_an_unloadable_job_says_unload_and_unloading(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = unstarted("chat")
    job.set_cancel_label("Unload")
    chip = JobChip(job)  # made after the label changed: it reads the label
    qtbot.addWidget(chip)
    assert chip.cancel_button.text() == "Unload"
    cancelled: list[bool] = []
    monkeypatch.setattr(job, "cancel", lambda: cancelled.append(True))
    qtbot.mouseClick(chip.cancel_button, Qt.MouseButton.LeftButton)
    assert cancelled == [True]
    assert chip.step.text() == "Unloading…"
    assert not chip.cancel_button.isEnabled()


def test_a_finished_chip_keeps_its_remove_button_whatever_the_label_says(qtbot: QtBot) -> None:
    job = unstarted("chat")
    chip = JobChip(job)
    qtbot.addWidget(chip)
    finish(job)
    job.set_cancel_label("Unload")  # late: the job has ended
    assert chip.cancel_button.text() == "×"
    assert chip.cancel_button.toolTip() == "Remove from the strip"


def test_only_the_newest_finished_chips_show_the_rest_are_counted(qtbot: QtBot) -> None:
    manager = JobManager()
    strip = JobsStrip(manager)
    qtbot.addWidget(strip)
    strip.show()
    jobs = [unstarted(f"run {n}") for n in range(1, 7)]
    for job in jobs:
        manager.job_added.emit(job)
    for job in jobs[:5]:  # an A/B benchmark's runs end one after another
        finish(job)
    shown = [chip.job.name for chip in strip.chips if chip.isVisibleTo(strip)]
    assert shown == ["run 3", "run 4", "run 5", "run 6"]  # 3 finished + the running one
    assert strip.more_label.isVisibleTo(strip)
    assert strip.more_label.text() == "… and 2 more done"
    assert strip.more_label.toolTip() == "run 1\nrun 2"
    for chip in list(strip.chips[2:4]):  # two shown finished chips removed: the older return
        qtbot.mouseClick(chip.cancel_button, Qt.MouseButton.LeftButton)
    shown = [chip.job.name for chip in strip.chips if chip.isVisibleTo(strip)]
    assert shown == ["run 1", "run 2", "run 5", "run 6"]
    assert not strip.more_label.isVisibleTo(strip) and strip.more_label.text() == ""
