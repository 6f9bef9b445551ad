"""The environment editor's rough edges (issue 13): Undo only when there is something to
undo, help text with linked sources and no commit ids, an edit dialog that opens without
an error, and a read-only editor in demo mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.base.settings import Settings
from rocmpanel.envvars.catalogue import load_catalogue
from rocmpanel.envvars.store import make_stores
from rocmpanel.envvars.views.dialogs import ValueDialog
from rocmpanel.envvars.views.editor import DEMO_READ_ONLY, EnvEditor
from rocmpanel.envvars.views.sources import shown_source, source_html, source_link
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager

from .test_editor import _write


def test_undo_is_disabled_until_an_apply_and_after_undoing_it(qtbot, editor: EnvEditor) -> None:
    assert editor.undoable is None
    assert not editor.undo_button.isEnabled()
    assert editor.undo_button.toolTip() == "Nothing to undo yet."
    editor.propose("HIP_VISIBLE_DEVICES", "1")
    assert not editor.undo_button.isEnabled()  # staged is not applied
    assert _write(qtbot, editor, editor.apply)
    assert editor.undo_button.isEnabled()
    assert editor.undo_button.toolTip() == "Undo HIP_VISIBLE_DEVICES=1"
    assert _write(qtbot, editor, editor.undo)
    assert editor.undoable is None and not editor.undo_button.isEnabled()


def test_a_journal_from_an_earlier_run_enables_undo(qtbot, home: Path) -> None:
    first = EnvEditor(stores=make_stores("linux", home=home), environ={})
    qtbot.addWidget(first)
    with qtbot.waitSignal(first.loaded, timeout=5000):
        pass
    first.propose("HIP_VISIBLE_DEVICES", "0")
    assert _write(qtbot, first, first.apply)
    second = EnvEditor(stores=make_stores("linux", home=home), environ={})
    qtbot.addWidget(second)
    assert not second.undo_button.isEnabled()  # not read yet
    with qtbot.waitSignal(second.loaded, timeout=5000):
        pass
    assert second.undo_button.isEnabled()


def test_help_text_links_sources_without_commit_ids(editor: EnvEditor) -> None:
    editor.select("HSA_NO_SCRATCH_RECLAIM")
    text = editor.details.text()
    assert "Source (" not in text  # the plain-text line of `env get` is not repeated
    assert "commit" not in text and "058954eb" not in text
    assert (
        'Sources: <a href="https://rocm.docs.amd.com/projects/ROCR-Runtime/en/docs-10.1.0/'
        'api-reference/environment_variables.html">ROCm/rocm-systems '
        "projects/rocr-runtime/runtime/docs/data/env_variables.rst</a>"
    ) in text
    assert (
        ' · <a href="https://github.com/ROCm/rocm-systems">ROCm/rocm-systems '
        "projects/rocr-runtime/runtime/hsa-runtime/core/util/flag.h</a> (HSA_NO_SCRATCH_RECLAIM"
    ) in text
    assert editor.details.openExternalLinks()
    # The data keeps the commit: `rocmpanel env get` and the catalogue still cite it.
    assert any(
        "commit 058954eb" in s for s in editor.catalogue.source_texts("HSA_NO_SCRATCH_RECLAIM")
    )


@pytest.mark.parametrize(
    ("text", "shown", "link"),
    [
        (
            "ROCm/TheRock issue 1719: no effect on Windows",
            "ROCm/TheRock issue 1719: no effect on Windows",
            "https://github.com/ROCm/TheRock/issues/1719",
        ),
        (
            "pytorch/pytorch pulls 122106, 153610",
            "pytorch/pytorch pulls 122106, 153610",
            "https://github.com/pytorch/pytorch/pull/122106",
        ),
        (
            "torch 2.10.0 (git 449b1768), 2.11.0 (70d99e99) read X",
            "torch 2.10.0, 2.11.0 read X",
            None,
        ),
        (
            "ollama/ollama docs/gpu.md @074d639b, 'Overrides'",
            "ollama/ollama docs/gpu.md, 'Overrides'",
            "https://github.com/ollama/ollama",
        ),
        (
            "rocm.docs.amd.com/projects/HIPCC/en/docs-6.4.0/env.html",
            "rocm.docs.amd.com/projects/HIPCC/en/docs-6.4.0/env.html",
            "https://rocm.docs.amd.com/projects/HIPCC/en/docs-6.4.0/env.html",
        ),
        ("POSIX sh / ld.so: PATH lists", "POSIX sh / ld.so: PATH lists", None),
    ],
)
def test_sources_are_shown_and_linked(text: str, shown: str, link: str | None) -> None:
    assert shown_source(text) == shown
    assert source_link(shown) == link


def test_a_source_without_an_address_is_plain_text() -> None:
    assert source_html("POSIX sh: a <list>") == "POSIX sh: a &lt;list&gt;"


def test_the_value_dialog_opens_without_an_error(qtbot) -> None:
    dialog = ValueDialog(load_catalogue(), "linux")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert dialog.verdict.text() == "" and not ok.isEnabled()  # nothing typed: no error
    dialog.name_box.setCurrentText("HSA_OVERRIDE_GFX_VERSION")
    dialog.line.setText("11.0")
    assert not ok.isEnabled() and "MAJOR.MINOR.STEP" in dialog.verdict.text()
    dialog.line.setText("11.0.0")
    assert ok.isEnabled() and dialog.verdict.text() != ""
    # Editing a stored value: no verdict either until something changes.
    edit = ValueDialog(load_catalogue(), "linux", "HSA_OVERRIDE_GFX_VERSION", "bad")
    qtbot.addWidget(edit)
    assert edit.verdict.text() == ""
    assert not edit.buttons.button(edit.buttons.StandardButton.Ok).isEnabled()


def test_demo_mode_is_read_only(qtbot, home: Path) -> None:
    jobs = JobManager()
    ctx = AppContext(settings=Settings.load(), jobs=jobs, demo=True)
    widget = EnvEditor(ctx, stores=make_stores("linux", home=home), environ={})
    qtbot.addWidget(widget)
    with qtbot.waitSignal(widget.loaded, timeout=5000):
        pass
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    assert widget.demo_label.text() == DEMO_READ_ONLY
    widget.propose("HIP_VISIBLE_DEVICES", "0")
    assert widget.staged == {}
    assert widget.status.text() == DEMO_READ_ONLY
    assert widget.apply() is False and widget.undo() is False
    for button in (widget.add_button, widget.edit_button, widget.remove_button):
        assert not button.isEnabled()
    assert not widget.apply_button.isEnabled() and not widget.undo_button.isEnabled()
    dialogs: list[object] = []  # a double-click on a row opens no edit dialog either
    widget._run_dialog = dialogs.append  # type: ignore[method-assign]
    assert widget.table.rowCount() > 0
    widget.table.selectRow(0)
    assert widget.selected_name() is not None
    widget.table.itemDoubleClicked.emit(widget.table.item(0, 0))
    assert dialogs == []
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before
    jobs.shutdown()
