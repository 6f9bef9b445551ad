"""The preset editor (form, raw YAML, live checks, save through the panel's store) and the
dialog that persists a preset's variables through the environment editor."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QTableWidgetItem

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


def test_a_schema_error_names_the_file_line_and_field(qtbot):
    editor = make_editor(qtbot, None)
    for box in editor.arch_boxes.values():
        box.setChecked(False)
    assert editor.error_label.text() == (
        "new preset, line 4: archs: must not be empty: list one or more of any, rdna2, "
        "rdna3, rdna4, cdna2, cdna3, cdna4"
    )
    assert not editor.save_button.isEnabled()


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
    editor.add_env_row("PYTORCH_TUNABLEOP_ENABLED", "1")
    editor.torch_form.threads.box.setChecked(True)
    editor.torch_form.threads.spin.setValue(6)
    editor.torch_form.tunableop_combo.setCurrentText("enabled, known shapes only")
    assert editor.current is not None and editor.current.id == slug("My tune") == "my-tune"
    with qtbot.waitSignal(editor.accepted, timeout=10_000):
        editor.save_button.click()
    qtbot.waitUntil(lambda: not panel.busy(), timeout=10_000)
    saved = parse_preset((tmp_path / "presets" / "my-tune.yaml").read_text(), "my-tune.yaml")
    assert [(i.key, i.value) for i in saved.items()] == [
        ("PYTORCH_TUNABLEOP_ENABLED", "1"),
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
