"""The preset editor (form, raw YAML, live checks, save through the panel's store) and the
dialog that persists a preset's variables through the environment editor."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QLabel, QTableWidgetItem

from rocmpanel.base.settings import Settings
from rocmpanel.envvars.store import make_stores
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.presets import Item, Preset, PresetStore, dump_preset, parse_preset
from rocmpanel.jobs.runner import JobManager
from rocmpanel.tuning.items import item_for_setting
from rocmpanel.tuning.views.items_panel import describe_item
from rocmpanel.tuning.views.persist_dialog import DEMO_NOTE, PersistDialog
from rocmpanel.tuning.views.preset_editor import PresetEditor, slug
from rocmpanel.tuning.views.presets_panel import PresetsPanel

MINE = Preset(
    "mine",
    "Mine",
    "Made up for the test.",
    archs=("rdna3",),
    env=(
        Item("env", "MIOPEN_FIND_MODE", "FAST", "Quick find.", "miopen_find"),
        Item("env", "HSA_ENABLE_SDMA", "0", "No SDMA.", "hsa", platforms=("linux",)),
    ),
    torch=(
        Item("torch", "float32_matmul_precision", "high", "TF32.", "pt_matmul"),
        Item("torch", "alloc", {"expandable_segments": True}, "Fewer splits.", "pt_alloc"),
    ),
)


@pytest.fixture
def ctx(qtbot):
    manager = JobManager(grace_s=2.0)
    context = AppContext(Settings.load(), manager, lambda _message: None)
    yield context
    manager.shutdown()
    assert wait_for_background(10_000)


def make_editor(qtbot, preset: Preset | None) -> PresetEditor:
    editor = PresetEditor(preset, platform="linux")
    qtbot.addWidget(editor)
    return editor


def set_cell(editor: PresetEditor, row: int, column: int, text: str) -> None:
    editor.env_table.setItem(row, column, QTableWidgetItem(text))


def test_the_form_shows_the_preset_and_reads_back_equal(qtbot):
    editor = make_editor(qtbot, MINE)
    assert editor.name_edit.text() == "Mine"
    assert [a for a, box in editor.arch_boxes.items() if box.isChecked()] == ["rdna3"]
    assert editor.torch_form.precision_combo.currentText() == "high"
    assert editor.torch_form.expandable_combo.currentText() == "on"
    assert editor.torch_form.tunableop_combo.currentText() == "(not set)"
    assert editor.save_button.isEnabled() and editor.error_label.text() == ""
    assert editor.current is not None
    assert editor.current.items() == MINE.items()  # why, source and platforms kept
    assert (editor.current.id, editor.current.description) == ("mine", "Made up for the test.")


def test_an_invalid_value_disables_save_with_the_catalogues_message(qtbot):
    editor = make_editor(qtbot, MINE)
    set_cell(editor, 0, 1, "9")
    message = (
        "MIOPEN_FIND_MODE must be one of NORMAL, FAST, HYBRID, DYNAMIC_HYBRID, 1, 2, 3, 5; got '9'."
    )
    assert editor.error_label.text() == message
    assert editor.env_table.item(0, 2).text() == message
    assert not editor.save_button.isEnabled()
    set_cell(editor, 0, 1, "NORMAL")  # recovery: fixed, Save comes back
    assert editor.error_label.text() == "" and editor.save_button.isEnabled()
    assert editor.env_table.item(0, 2).text() == "ok"


def test_a_form_error_names_the_field_and_a_raw_error_the_line_too(qtbot):
    editor = make_editor(qtbot, None)
    for box in editor.arch_boxes.values():
        box.setChecked(False)
    assert editor.error_label.text() == (  # the form has no lines to point at
        "archs: must not be empty: list one or more of any, rdna2, "
        "rdna3, rdna4, cdna2, cdna3, cdna4"
    )
    assert not editor.save_button.isEnabled()
    editor.tabs.setCurrentIndex(1)
    assert editor.error_label.text() == (
        "new preset, line 4: archs: must not be empty: list one or more of any, rdna2, "
        "rdna3, rdna4, cdna2, cdna3, cdna4"
    )
    cursor = editor.raw_edit.textCursor()  # where the cursor is, to find line 4
    cursor.setPosition(len("id: new-preset\nname: New preset\nde"))
    editor.raw_edit.setTextCursor(cursor)
    assert editor.cursor_label.text() == "Line 3, column 3"


def test_the_editor_opens_on_name_and_enter_does_not_save(qtbot):
    editor = make_editor(qtbot, None)
    saved: list[Preset] = []
    editor.save_requested.connect(saved.append)
    editor.show()
    qtbot.waitExposed(editor)
    assert editor.focusWidget() is editor.name_edit
    qtbot.keyClicks(editor.name_edit, "Typed")
    assert editor.name_edit.text() == "Typed"  # the name was selected: typing replaces it
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Return)
    assert saved == [] and editor.isVisible()
    assert not any(b.isDefault() or b.autoDefault() for b in editor.buttons.buttons())
    assert [s.key().toString() for s in editor.save_shortcuts] == ["Ctrl+S", "Ctrl+Return"]
    editor.save_shortcuts[0].activated.emit()  # what Ctrl+S does
    assert [p.name for p in saved] == ["Typed"]


def test_tab_leaves_description_and_raw_yaml(qtbot):
    editor = make_editor(qtbot, None)
    assert editor.description_edit.tabChangesFocus()
    assert editor.raw_edit.tabChangesFocus()
    editor.show()
    qtbot.waitExposed(editor)
    editor.description_edit.setFocus()
    qtbot.keyClick(editor.description_edit, Qt.Key.Key_Tab)
    assert editor.description_edit.toPlainText() == ""
    assert editor.focusWidget() is not editor.description_edit


def test_any_and_a_named_arch_untick_each_other(qtbot):
    editor = make_editor(qtbot, None)
    boxes = editor.arch_boxes
    assert [a for a, box in boxes.items() if box.isChecked()] == ["any"]
    boxes["rdna3"].setChecked(True)
    boxes["cdna3"].setChecked(True)
    assert [a for a, box in boxes.items() if box.isChecked()] == ["rdna3", "cdna3"]
    assert editor.error_label.text() == "" and editor.save_button.isEnabled()
    assert editor.current is not None and editor.current.archs == ("rdna3", "cdna3")
    boxes["any"].setChecked(True)
    assert [a for a, box in boxes.items() if box.isChecked()] == ["any"]
    assert editor.current is not None and editor.current.archs == ("any",)


def test_a_ticked_torch_number_starts_at_a_sensible_value(qtbot):
    form = make_editor(qtbot, None).torch_form
    for optional in (form.fraction, form.gc_threshold, form.max_split, form.threads):
        optional.box.setChecked(True)
    assert form.values() == {
        "memory_fraction": 0.9,
        "cpu_threads": os.cpu_count(),
        "alloc": {"garbage_collection_threshold": 0.8, "max_split_size_mb": 512},
    }


def test_torch_labels_have_mnemonics_that_focus_their_setting(qtbot):
    form = make_editor(qtbot, None).torch_form
    labels = {label.text(): label.buddy() for label in form.findChildren(QLabel) if label.buddy()}
    assert labels == {
        "float32 matmul &precision:": form.precision_combo,
        "SDPA &backends:": form.sdpa_limit,
        "Memory frac&tion:": form.fraction.box,
        "cudnn/MIOpen benc&hmark:": form.benchmark_combo,
        "CP&U threads:": form.threads.box,
        "A&llocator:": form.expandable_combo,
        "Tunable&Op:": form.tunableop_combo,
    }


def test_a_variable_the_catalogue_does_not_know_is_a_note_not_an_error(qtbot):
    editor = make_editor(qtbot, MINE)
    assert editor.unknown_label.isHidden()
    editor.add_env_row("MIOPEN_FIND_MOD", "FAST")
    assert editor.save_button.isEnabled() and editor.error_label.text() == ""
    assert not editor.unknown_label.isHidden()
    assert editor.unknown_label.text() == (
        "Not in rocmpanel's catalogue, so not checked (a typo, or a variable rocmpanel does "
        "not know): MIOPEN_FIND_MOD."
    )
    editor.env_table.setCurrentCell(2, 0)
    editor.remove_env_row()
    assert editor.unknown_label.isHidden() and editor.unknown_label.text() == ""


def test_raw_yaml_round_trip_and_a_bad_text_keeps_the_raw_tab(qtbot):
    editor = make_editor(qtbot, MINE)
    editor.tabs.setCurrentIndex(1)
    assert editor.raw_edit.toPlainText() == dump_preset(MINE)
    text = dump_preset(MINE).replace("name: Mine", "name: Mine renamed")
    editor.raw_edit.setPlainText(text)
    assert editor.save_button.isEnabled()
    editor.tabs.setCurrentIndex(0)
    assert editor.name_edit.text() == "Mine renamed"
    assert editor.current is not None and editor.current.id == "mine"  # the raw text's id
    assert editor.current.items() == MINE.items()
    editor.tabs.setCurrentIndex(1)
    editor.raw_edit.setPlainText(text.replace("archs:\n- rdna3", "archs:\n- rdna9"))
    assert not editor.save_button.isEnabled()
    editor.tabs.setCurrentIndex(0)
    assert editor.tabs.currentIndex() == 1
    assert editor.error_label.text() == (
        "new preset, line 5: archs[0]: unknown 'rdna9'; use any, rdna2, rdna3, rdna4, cdna2, "
        "cdna3, cdna4 — fix it here before switching to the form."
    )


def test_new_preset_saved_through_the_panel_creates_the_file(qtbot, ctx, tmp_path: Path):
    store = PresetStore(tmp_path / "presets")
    panel = PresetsPanel(ctx, store)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: not panel.busy(), timeout=10_000)
    panel.new_button.click()
    editor = panel.editor
    assert editor is not None
    editor.name_edit.setText("My tune")
    editor.add_env_row("MIOPEN_FIND_MODE", "FAST")
    editor.torch_form.threads.box.setChecked(True)
    editor.torch_form.threads.spin.setValue(6)
    editor.torch_form.tunableop_combo.setCurrentText("enabled, known shapes only")
    assert editor.current is not None and editor.current.id == slug("My tune") == "my-tune"
    with qtbot.waitSignal(editor.accepted, timeout=10_000):
        editor.save_button.click()
    qtbot.waitUntil(lambda: not panel.busy(), timeout=10_000)
    saved = parse_preset((tmp_path / "presets" / "my-tune.yaml").read_text(), "my-tune.yaml")
    assert [(i.key, i.value) for i in saved.items()] == [
        ("MIOPEN_FIND_MODE", "FAST"),
        ("cpu_threads", 6),
        ("tunableop", {"enabled": True, "tuning": False}),
    ]
    assert panel.selected_id() == "my-tune"
    assert panel.status.text() == f"Saved “My tune” ({tmp_path / 'presets' / 'my-tune.yaml'})."


def test_a_clash_keeps_the_editor_open_with_the_stores_message(qtbot, ctx, tmp_path: Path):
    panel = PresetsPanel(ctx, PresetStore(tmp_path / "presets"))
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: not panel.busy(), timeout=10_000)
    panel.new_button.click()
    editor = panel.editor
    assert editor is not None
    editor.name_edit.setText("Throughput")  # a built-in's name (and id)
    editor.save_button.click()
    qtbot.waitUntil(lambda: not panel.busy(), timeout=10_000)
    assert editor.isVisible() and editor.error_label.text() != ""
    assert editor.error_label.text() == panel.status.text()
    assert editor.save_button.isEnabled()
    assert not (tmp_path / "presets" / "throughput.yaml").exists()


def test_persist_stages_the_variables_for_this_platform_and_says_why_torch_is_not(
    qtbot, ctx, tmp_path: Path
):
    stores = make_stores("linux", home=tmp_path)
    dialog = PersistDialog(ctx, MINE, stores=stores, environ={})
    qtbot.addWidget(dialog)
    assert dialog.editor.staged == {"MIOPEN_FIND_MODE": "FAST", "HSA_ENABLE_SDMA": "0"}
    assert dialog.notes_label.text() == (
        "The preset's torch settings (float32_matmul_precision, alloc) are applied by "
        "rocmpanel's workers when they start torch, so they cannot be set for other programs "
        "this way. For the allocator and TunableOp, the Items page names the variables that "
        "do the same in any program."
    )
    qtbot.waitUntil(lambda: not dialog.editor.busy, timeout=10_000)
    assert dialog.editor.staged == {"MIOPEN_FIND_MODE": "FAST", "HSA_ENABLE_SDMA": "0"}
    assert list(tmp_path.rglob("*.conf")) == []  # nothing written before Apply


def test_persist_in_demo_mode_stages_nothing_and_says_why(qtbot, ctx, tmp_path: Path):
    ctx.demo = True
    dialog = PersistDialog(ctx, MINE, stores=make_stores("linux", home=tmp_path), environ={})
    qtbot.addWidget(dialog)
    assert dialog.editor.staged == {}
    assert dialog.notes_label.text().split("\n")[0] == DEMO_NOTE
    assert dialog.editor.read_only
    qtbot.waitUntil(lambda: not dialog.editor.busy, timeout=10_000)


def test_the_question_mark_shows_what_the_items_say(qtbot):
    editor = make_editor(qtbot, MINE)
    item = item_for_setting("torch", "float32_matmul_precision")
    assert item is not None
    editor.torch_form.help_buttons["float32_matmul_precision"].click()
    assert editor.explained is not None
    assert editor.explained.text() == describe_item(item)
    assert editor.explained.text().startswith(f"{item.title}\n\nVerdict: ")
    editor.explained.close()
    editor.env_table.setCurrentCell(0, 0)  # MIOPEN_FIND_MODE
    assert editor.explain("env", "NOT_A_TUNING_VARIABLE") == (
        "The tuning items say nothing about NOT_A_TUNING_VARIABLE."
    )
    editor.explained.close()


def test_cancel_while_saving_waits_then_the_list_and_a_renamed_active_preset_follow(
    qtbot, ctx, tmp_path: Path, monkeypatch
):
    """Cancel, Escape and the close button are refused while the save runs (the preset may
    already be on disk); when it answers, the list shows the renamed preset, the active
    preset follows it, and the editor closes."""
    folder = tmp_path / "presets"
    store = PresetStore(folder)
    store.save(Preset("mine", "Mine", env=(Item("env", "MIOPEN_FIND_MODE", "FAST"),)))
    ctx.active_preset.set("mine", "Mine")
    ctx.settings.general.active_preset = "mine"
    panel = PresetsPanel(ctx, store)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: not panel.busy(), timeout=10_000)
    gate = threading.Event()
    real_save = PresetStore.save

    def slow_save(self: PresetStore, preset: Preset, **kwargs: object) -> Preset:
        assert gate.wait(10)
        return real_save(self, preset, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(PresetStore, "save", slow_save)
    editor = panel.edit_preset("mine")
    assert editor is not None
    editor.name_edit.setText("Renamed")
    editor.save_button.click()
    cancel = editor.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    assert editor.saving and not cancel.isEnabled() and not editor.save_button.isEnabled()
    assert editor.error_label.text() == "Saving…"
    editor.reject()  # what Cancel and the close button call
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert editor.isVisible() and editor.result() == 0
    gate.set()
    with qtbot.waitSignal(editor.accepted, timeout=10_000):
        pass
    qtbot.waitUntil(lambda: not panel.busy(), timeout=10_000)
    assert [p.id for p in panel.presets if not p.builtin] == ["renamed"]
    assert panel.selected_id() == "renamed"
    assert (ctx.active_preset.ident, ctx.active_preset.name) == ("renamed", "Renamed")
    assert panel.status.text() == f"Saved “Renamed” ({folder / 'renamed.yaml'})."
    qtbot.waitUntil(lambda: not shiboken6.isValid(editor), timeout=10_000)  # closed, deleted


def test_a_save_answered_after_the_editor_is_gone_still_updates_the_list(
    qtbot, ctx, tmp_path: Path, monkeypatch
):
    """Qt deletes the editor (its window closed some other way) while the save runs: the
    answer never touches it, and the list still shows the saved preset."""
    panel = PresetsPanel(ctx, PresetStore(tmp_path / "presets"))
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: not panel.busy(), timeout=10_000)
    gate = threading.Event()
    real_save = PresetStore.save

    def slow_save(self: PresetStore, preset: Preset, **kwargs: object) -> Preset:
        assert gate.wait(10)
        return real_save(self, preset, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(PresetStore, "save", slow_save)
    panel.new_button.click()
    editor = panel.editor
    assert editor is not None
    editor.name_edit.setText("Kept")
    editor.save_button.click()
    shiboken6.delete(editor)
    gate.set()
    qtbot.waitUntil(lambda: not panel.busy() and panel.selected_id() == "kept", timeout=10_000)
    assert panel.status.text() == f"Saved “Kept” ({tmp_path / 'presets' / 'kept.yaml'})."
