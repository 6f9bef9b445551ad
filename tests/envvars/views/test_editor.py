"""The environment editor: staging, preview, apply, undo and conflicts, offscreen.

Reading and writing the stores runs off the GUI thread: tests wait for ``loaded`` and
``write_finished``.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox, QMessageBox

from rocmpanel.base.errors import PanelError
from rocmpanel.envvars.store import make_stores
from rocmpanel.envvars.views.dialogs import DiffDialog, ValueDialog
from rocmpanel.envvars.views.editor import EnvEditor

PROFILE = b"# mine\nexport EDITOR=vi\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / ".profile").write_bytes(PROFILE)
    envd = tmp_path / ".config" / "environment.d"
    envd.mkdir(parents=True)
    (envd / "60-rocmpanel.conf").write_text("MIOPEN_FIND_MODE=FAST\n")
    return tmp_path


@pytest.fixture
def editor(qtbot, home: Path) -> EnvEditor:
    widget = EnvEditor(stores=make_stores("linux", home=home), environ={"HIP_VISIBLE_DEVICES": "0"})
    qtbot.addWidget(widget)
    widget.resize(1100, 700)
    with qtbot.waitSignal(widget.loaded, timeout=5000):
        pass
    return widget


def _write(qtbot, editor: EnvEditor, start) -> bool:
    """Start an apply or undo and wait for it; its outcome."""
    with qtbot.waitSignal(editor.write_finished, timeout=5000) as blocker:
        assert start()
    return bool(blocker.args[0])


def _row(editor: EnvEditor, name: str) -> int:
    for row in range(editor.table.rowCount()):
        if editor.table.item(row, 0).text() == name:
            return row
    raise AssertionError(f"{name} has no row")


def _column(editor: EnvEditor, label: str) -> int:
    for column in range(editor.table.columnCount()):
        if editor.table.horizontalHeaderItem(column).text() == label:
            return column
    raise AssertionError(label)


def test_table_shows_process_and_store_values(editor: EnvEditor) -> None:
    row = _row(editor, "MIOPEN_FIND_MODE")
    assert editor.table.item(row, _column(editor, "environment.d")).text() == "FAST"
    assert editor.table.item(row, _column(editor, "Status")).text().startswith("valid")
    hip = _row(editor, "HIP_VISIBLE_DEVICES")
    assert editor.table.item(hip, _column(editor, "This process")).text() == "0"
    assert "HIP programs" in editor.table.item(hip, 0).toolTip()
    assert not editor.apply_button.isEnabled()


def test_propose_stages_selects_apply_and_undo(qtbot, editor: EnvEditor, home: Path) -> None:
    editor.propose("HSA_OVERRIDE_GFX_VERSION", "10.3.0")
    assert editor.selected_name() == "HSA_OVERRIDE_GFX_VERSION"
    row = _row(editor, "HSA_OVERRIDE_GFX_VERSION")
    assert "→ 10.3.0" in editor.table.item(row, _column(editor, "~/.profile")).text()
    assert "+export HSA_OVERRIDE_GFX_VERSION='10.3.0'" in editor.preview_text()
    assert (home / ".profile").read_bytes() == PROFILE  # staged only
    with qtbot.waitSignal(editor.applied, timeout=5000):
        assert editor.apply()
    assert b"HSA_OVERRIDE_GFX_VERSION='10.3.0'" in (home / ".profile").read_bytes()
    assert editor.table.item(row, _column(editor, "environment.d")).text() == "10.3.0"
    assert not editor.staged
    assert editor.status.text().startswith("Wrote ")
    with qtbot.waitSignal(editor.applied, timeout=5000):
        assert editor.undo()
    assert (home / ".profile").read_bytes() == PROFILE
    assert editor.status.text().startswith("Undid ")


def test_invalid_proposal_cannot_be_applied(editor: EnvEditor, home: Path) -> None:
    editor.propose("HSA_OVERRIDE_GFX_VERSION", "11.0")
    assert not editor.apply_button.isEnabled()
    assert "MAJOR.MINOR.STEP" in editor.status.text()
    assert editor.apply() is False  # refused before anything started
    assert (home / ".profile").read_bytes() == PROFILE


def test_unset_proposal_and_store_choice(qtbot, editor: EnvEditor, home: Path) -> None:
    editor.target_boxes["profile"].setChecked(False)
    editor.propose("MIOPEN_FIND_MODE", None)
    assert (
        "FAST → (unset)"
        in editor.table.item(
            _row(editor, "MIOPEN_FIND_MODE"), _column(editor, "environment.d")
        ).text()
    )
    assert _write(qtbot, editor, editor.apply)
    assert "MIOPEN_FIND_MODE" not in (home / ".config/environment.d/60-rocmpanel.conf").read_text()
    assert (home / ".profile").read_bytes() == PROFILE


def test_conflict_offers_reload(qtbot, editor: EnvEditor, home: Path) -> None:
    editor.propose("HSA_ENABLE_SDMA", "0")
    (home / ".profile").write_bytes(PROFILE + b"# edited elsewhere\n")
    assert _write(qtbot, editor, editor.apply) is False
    assert "changed since rocmpanel read it" in editor.status.text()
    box = editor.findChild(QMessageBox)
    assert box is not None and "+# edited elsewhere" in box.detailedText()
    reload_button = next(b for b in box.buttons() if b.text() == "Reload")
    with qtbot.waitSignal(editor.loaded, timeout=5000):
        reload_button.click()
    assert editor.snapshots["profile"].raw.endswith(b"elsewhere\n")
    assert _write(qtbot, editor, editor.apply)
    assert (home / ".profile").read_bytes().startswith(PROFILE + b"# edited elsewhere\n")


def test_a_slow_broadcast_does_not_block_the_gui_thread(
    qtbot, editor: EnvEditor, home: Path
) -> None:
    """Windows broadcasts WM_SETTINGCHANGE after a write, waiting on every window: the
    editor stays responsive, its buttons disabled and a busy bar shown until it ends."""
    release = threading.Event()
    broadcast_thread: list[int] = []

    def slow_broadcast() -> None:
        broadcast_thread.append(threading.get_ident())
        release.wait(10)

    editor.stores["profile"].after_change = slow_broadcast  # type: ignore[method-assign]
    editor.propose("HSA_ENABLE_SDMA", "0")
    try:
        started = time.monotonic()
        assert editor.apply()
        assert time.monotonic() - started < 1.0  # returned at once, not after the broadcast
        assert editor.busy and not editor.apply_button.isEnabled()
        assert not editor.undo_button.isEnabled() and not editor.add_button.isEnabled()
        assert not editor.status.progress.isHidden()
        assert editor.apply() is False and editor.undo() is False  # one write at a time
        qtbot.waitUntil(lambda: bool(broadcast_thread), timeout=5000)
        assert broadcast_thread[0] != threading.get_ident()
        editor.propose("AMD_LOG_LEVEL", "3")  # staged while the write runs: kept afterwards
        with qtbot.waitSignal(editor.write_finished, timeout=5000) as blocker:
            release.set()
    finally:
        release.set()
    assert blocker.args == [True]
    assert not editor.busy and editor.status.progress.isHidden()
    assert editor.staged == {"AMD_LOG_LEVEL": "3"}
    assert b"HSA_ENABLE_SDMA='0'" in (home / ".profile").read_bytes()


def test_a_store_that_cannot_be_read_is_reported(qtbot, home: Path, caplog) -> None:
    stores = make_stores("linux", home=home)

    def unreadable():
        raise PanelError("Could not read ~/.profile: Permission denied.", "EACCES detail")

    stores["profile"].read = unreadable  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="rocmpanel.report"):
        widget = EnvEditor(stores=stores, environ={})
        qtbot.addWidget(widget)
        with qtbot.waitSignal(widget.loaded, timeout=5000):
            pass
    assert "Permission denied" in widget.status.text()
    assert "EACCES detail" in caplog.text  # the detail reaches the log
    assert widget.snapshots["profile"].problem


def test_a_change_staged_while_reading_keeps_its_message(qtbot, home: Path) -> None:
    """The Setup tab's Fix buttons stage a change right after building the editor."""
    widget = EnvEditor(stores=make_stores("linux", home=home), environ={})
    qtbot.addWidget(widget)
    widget.propose("HSA_OVERRIDE_GFX_VERSION", "10.3.0")
    with qtbot.waitSignal(widget.loaded, timeout=5000):
        pass
    assert widget.status.text().startswith("Staged: HSA_OVERRIDE_GFX_VERSION=10.3.0")
    assert widget.apply_button.isEnabled()


def test_preview_dialog_opens(qtbot, editor: EnvEditor) -> None:
    editor.propose("AMD_LOG_LEVEL", "3")
    editor.show_preview()
    dialog = editor.findChild(DiffDialog)
    assert dialog is not None and "+AMD_LOG_LEVEL=3" in dialog.view.toPlainText()
    dialog.reject()


def test_edit_uses_the_dialog(editor: EnvEditor, monkeypatch) -> None:
    editor.select("MIOPEN_FIND_MODE")

    def accept(dialog: ValueDialog) -> bool:
        assert dialog.choice is not None and dialog.value() == "FAST"
        dialog.set_value("NORMAL")
        return True

    monkeypatch.setattr(editor, "_run_dialog", accept)
    editor.edit_selected()
    assert editor.staged == {"MIOPEN_FIND_MODE": "NORMAL"}


def test_value_dialog_edits_path_as_a_list(qtbot) -> None:
    from rocmpanel.envvars.catalogue import load_catalogue

    dialog = ValueDialog(load_catalogue(), "linux", "PATH", "/opt/a:$PATH")
    qtbot.addWidget(dialog)
    assert dialog.list_editor is not None
    assert dialog.list_editor.entries() == ["/opt/a", "$PATH"]
    dialog.list_editor.list.setCurrentRow(1)
    dialog.list_editor.move_entry(-1)
    dialog.list_editor.add_entry()
    dialog.list_editor.list.currentItem().setText("/opt/rocm/bin")
    assert dialog.value() == "$PATH:/opt/a:/opt/rocm/bin"
    dialog.list_editor.list.setCurrentRow(1)
    dialog.list_editor.remove_entry()
    assert dialog.value() == "$PATH:/opt/rocm/bin"


def test_value_dialog_blocks_invalid_values(qtbot) -> None:
    from rocmpanel.envvars.catalogue import load_catalogue

    dialog = ValueDialog(load_catalogue(), "linux")
    qtbot.addWidget(dialog)
    dialog.name_box.setCurrentText("HSA_OVERRIDE_GFX_VERSION")
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    dialog.set_value("11.0")
    assert not ok.isEnabled() and "2 parts" in dialog.verdict.text()
    dialog.set_value("11.0.0")
    assert ok.isEnabled() and "gfx1100" in dialog.verdict.text()


def test_value_dialog_says_how_a_dollar_is_stored(qtbot) -> None:
    from rocmpanel.envvars.catalogue import load_catalogue
    from rocmpanel.envvars.views.dialogs import VALUE_LITERAL, VALUE_REFERENCES, VALUE_WINDOWS

    dialog = ValueDialog(load_catalogue(), "linux", "HSA_ENABLE_SDMA", "0")
    qtbot.addWidget(dialog)
    assert dialog.policy.text() == VALUE_LITERAL
    path = ValueDialog(load_catalogue(), "linux", "ROCM_PATH", "/opt/rocm")
    qtbot.addWidget(path)
    assert path.policy.text() == VALUE_REFERENCES
    ok = path.buttons.button(QDialogButtonBox.StandardButton.Ok)
    path.set_value("${HOME:1}/rocm")
    assert not ok.isEnabled() and "is not a plain variable reference" in path.verdict.text()
    path.set_value("${HOME}/rocm")
    assert ok.isEnabled()
    windows = ValueDialog(load_catalogue(), "windows", "PATH", "C:\\x")
    qtbot.addWidget(windows)
    assert windows.policy.text() == VALUE_WINDOWS


def test_an_interrupted_apply_is_rolled_back_on_load(qtbot, home: Path) -> None:
    from rocmpanel.envvars import journal
    from rocmpanel.envvars.plan import EnvChange

    stores = make_stores("linux", home=home)
    plans = [
        stores[key].plan(stores[key].read(), [EnvChange("A_VAR", "1")])
        for key in ("environment.d", "profile")
    ]
    records = [stores[plan.store].backup(plan, set()) for plan in plans]
    journal.save([{"id": "x", "state": "pending", "summary": "A_VAR=1", "records": records}])
    stores["environment.d"].write(plans[0])  # killed before ~/.profile was written
    widget = EnvEditor(stores=stores, environ={})
    qtbot.addWidget(widget)
    with qtbot.waitSignal(widget.loaded, timeout=5000):
        pass
    envd = home / ".config/environment.d/60-rocmpanel.conf"
    assert widget.status.text() == (
        f"An interrupted change (A_VAR=1) was rolled back: {envd} restored."
    )
    assert envd.read_text() == "MIOPEN_FIND_MODE=FAST\n"
    assert journal.load() == []
