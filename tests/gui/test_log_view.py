"""A job flooding its log costs the GUI thread a bounded amount: the log view shows the
newest lines with a note, a job's Copy log still has every kept line, and a jobs-strip chip
shows progress at a bounded rate."""

from __future__ import annotations

import collections
import time

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from rocmpanel.gui.log_view import (
    SKIPPED_NOTE,
    VIEW_BURST_LINES,
    VIEW_INTERVAL_MS,
    VIEW_LINES_PER_S,
    JobLogDialog,
    LogText,
)
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.protocol import LogLine, Progress
from rocmpanel.jobs.runner import LOG_LINES_KEPT
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.shell.jobs_strip import CHIP_UPDATE_MS, JobChip


class FakeJob(QObject):
    """What the log dialog and a chip read of a job."""

    progress_changed = Signal(object)
    log_added = Signal(object)
    finished = Signal(object)
    cancel_label_changed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.cancel_label = "Cancel"
        self.name = "fake"
        self.spec = JobSpec("fake", "fake.py")
        self.argv = ("python", "fake.py")
        self.pid = 4242
        self.outcome: JobOutcome | None = None
        self.log: collections.deque[LogLine] = collections.deque(maxlen=LOG_LINES_KEPT)

    @property
    def running(self) -> bool:
        return self.outcome is None

    def add(self, lines: list[LogLine]) -> None:
        self.log.extend(lines)
        self.log_added.emit(lines)

    def finish(self) -> None:
        self.outcome = JobOutcome(JobState.SUCCEEDED, 0, "Done.")
        self.finished.emit(self.outcome)


def test_a_burst_after_a_quiet_spell_is_shown_whole(qtbot: QtBot) -> None:
    text = LogText()
    qtbot.addWidget(text)
    burst = [f"line {n}" for n in range(VIEW_BURST_LINES)]
    text.append_lines(burst)
    assert text.toPlainText().splitlines() == burst  # at once, nothing left out
    assert text.skipped == 0


def test_a_flood_shows_the_newest_lines_with_a_note(qtbot: QtBot) -> None:
    text = LogText()
    qtbot.addWidget(text)
    text.append_lines(["first"])
    assert text.toPlainText() == "first"
    total = 10_000
    for start in range(0, total, 100):  # a flood: 100 batches in no time at all
        text.append_lines(f"line {n}" for n in range(start, start + 100))
    assert text.toPlainText() == "first"  # the next batch waits for the interval
    qtbot.waitUntil(lambda: f"line {total - 1}" in text.toPlainText(), timeout=2000)
    shown = text.toPlainText().splitlines()
    kept = VIEW_BURST_LINES  # the burst budget, refilled over the interval
    assert shown[0] == "first"
    assert shown[1] == SKIPPED_NOTE.format(count=total - kept)
    assert shown[2:] == [f"line {n}" for n in range(total - kept, total)]  # newest, in order
    assert text.skipped == total - kept


def test_a_steady_flood_is_shown_at_a_bounded_rate(qtbot: QtBot) -> None:
    text = LogText()
    qtbot.addWidget(text)
    appended = 0
    started = time.monotonic()
    while time.monotonic() - started < 1.0:  # 200 lines every 10 ms: 20,000 a second
        text.append_lines([f"line {appended + n}" for n in range(200)])
        appended += 200
        qtbot.wait(10)
    seconds = time.monotonic() - started
    qtbot.wait(2 * VIEW_INTERVAL_MS)
    shown = [line for line in text.toPlainText().splitlines() if line.startswith("line ")]
    assert shown[-1] == f"line {appended - 1}"  # the newest line always reaches the view
    numbers = [int(line.split()[1]) for line in shown]
    assert numbers == sorted(numbers)
    assert len(shown) <= VIEW_BURST_LINES + VIEW_LINES_PER_S * (seconds + 0.3)
    assert len(shown) + text.skipped == appended  # each line shown or counted


def test_job_log_dialog_shows_a_flood_bounded_and_copies_the_whole_kept_log(
    qtbot: QtBot,
) -> None:
    job = FakeJob()
    job.add([LogLine("before the dialog"), LogLine("on stderr", stream="stderr")])
    dialog = JobLogDialog(job)  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    assert dialog.text.toPlainText() == "before the dialog\n[stderr] on stderr"
    for start in range(0, 4000, 500):
        job.add([LogLine(f"line {n}") for n in range(start, start + 500)])
    job.finish()
    qtbot.waitUntil(lambda: "line 3999" in dialog.text.toPlainText(), timeout=2000)
    assert dialog.text.skipped > 0
    assert "Copy log copies the job's last 5,000 lines]" in dialog.text.toPlainText()
    dialog._on_copy_clicked()
    copied = QGuiApplication.clipboard().text().splitlines()
    assert copied[:3] == ["before the dialog", "[stderr] on stderr", "line 0"]
    assert copied[2:-1] == [f"line {n}" for n in range(4000)]  # nothing the job kept is lost
    assert copied[-1].startswith("Succeeded")


def test_a_chip_shows_progress_at_a_bounded_rate_and_its_end_at_once(qtbot: QtBot) -> None:
    job = FakeJob()
    chip = JobChip(job)  # type: ignore[arg-type]
    qtbot.addWidget(chip)
    changes: list[str] = []
    original = chip.step.setText
    chip.step.setText = lambda text: (changes.append(text), original(text))[1]  # type: ignore[method-assign]
    for n in range(200):
        job.progress_changed.emit(Progress(n / 200, f"step {n}"))
    assert changes == ["step 0"]  # the first at once, the rest coalesced
    qtbot.waitUntil(lambda: chip.step.text() == "step 199", timeout=2 * CHIP_UPDATE_MS + 1000)
    assert changes == ["step 0", "step 199"]
    assert chip.bar.value() == round(199 / 200 * 1000)
    job.progress_changed.emit(Progress(0.5, "late"))
    job.finish()
    assert "done" in chip.step.text()
    qtbot.wait(2 * CHIP_UPDATE_MS)
    assert "done" in chip.step.text()  # a coalesced progress never overwrites the end
