"""The paste dialog reads added files off the GUI thread and reports unreadable ones."""

from __future__ import annotations

import gc
import logging
import threading
from pathlib import Path

import pytest

from rocmpanel.gui.background import wait_for_background
from rocmpanel.setup.views import paste_dialog
from rocmpanel.setup.views.paste_dialog import PasteDialog


@pytest.fixture(autouse=True)
def _collect_here(qtbot):
    """A dialog and its pending read hold each other: collect them on this thread."""
    yield
    assert wait_for_background(10000)
    qtbot.wait(20)
    gc.collect()


def test_added_files_are_read_in_the_background(qtbot, tmp_path: Path, monkeypatch) -> None:
    threads: list[str] = []
    real = paste_dialog.read_tool_output

    def spy(path: Path) -> str:
        threads.append(threading.current_thread().name)
        return real(path)

    monkeypatch.setattr(paste_dialog, "read_tool_output", spy)
    saved = tmp_path / "rocminfo.txt"
    saved.write_text("ROCk module is loaded\n")
    dialog = PasteDialog()
    qtbot.addWidget(dialog)
    dialog.text.setPlainText("lspci output")
    dialog.add_file(saved)
    assert not dialog.analyse_button.isEnabled()  # Analyse waits for the file
    qtbot.waitUntil(lambda: dialog.analyse_button.isEnabled(), timeout=5000)
    assert dialog.texts() == ["lspci output", "ROCk module is loaded\n"]
    assert "rocminfo.txt" in dialog.files_label.text()
    assert threads and threads[0] != threading.main_thread().name


def test_an_unreadable_file_is_reported(qtbot, tmp_path: Path, caplog) -> None:
    dialog = PasteDialog()
    qtbot.addWidget(dialog)
    with caplog.at_level(logging.WARNING, logger="rocmpanel.report"):
        dialog.add_file(tmp_path / "missing.txt")
        qtbot.waitUntil(lambda: dialog.analyse_button.isEnabled(), timeout=5000)
    assert dialog.files_label.text().startswith("Could not read")
    assert "FileNotFoundError" in caplog.text  # the detail goes to the log
    assert dialog.texts() == []
