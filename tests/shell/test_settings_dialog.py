"""The Settings dialog: fields grouped on pages and labelled in words with units, Browse for
interpreters, and an interpreter that does not exist or cannot run refused next to its field
as it is edited (never before) and again on OK."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QLineEdit, QSpinBox, QWidget
from pytestqt.qtbot import QtBot

from rocmpanel.base.settings import GROUPS, PYTHON, Settings, declared
from rocmpanel.shell import settings_dialog
from rocmpanel.shell.settings_dialog import (
    CHAT_NOTE,
    SettingsDialog,
    python_problem,
    with_mnemonic,
)

PAGES = {
    "General": ["language", "theme", "job_cancel_grace_s", "env_backups_keep"],
    "Workload": ["workload_python", "torch_base_python"],
    "Monitor": [
        "telemetry_interval_ms",
        "alerts_enabled",
        "alert_temp_margin_c",
        "alert_vram_percent",
        "alert_vram_hold_s",
        "alert_power_hold_s",
        "alert_cooldown_s",
        "alert_desktop_notify",
    ],
    "Chat": [],
    "Network": [
        "torch_index_mirror",
        "torch_amd_repo_mirror",
        "pypi_index_url",
        "torch_use_pip_config",
    ],
}


def make_dialog(qtbot: QtBot, settings: Settings | None = None) -> SettingsDialog:
    dialog = SettingsDialog(settings if settings is not None else Settings.load())
    qtbot.addWidget(dialog)
    return dialog


def program(path: Path, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path


def saved() -> dict[str, object]:
    path = Settings.load().path
    return yaml.safe_load(path.read_text()) if path.exists() else {}


def test_every_field_is_on_the_page_of_its_group(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot)
    assert [dialog.pages.tabText(i) for i in range(dialog.pages.count())] == [
        "&General",
        "&Workload",
        "&Monitor",
        "C&hat",
        "&Network",
    ]
    for index, group in enumerate(GROUPS):
        page = dialog.pages.widget(index)
        keys = [item.option.key for item, e in dialog.editors if page.isAncestorOf(e)]
        assert keys == PAGES[group], group
    assert sum(len(keys) for keys in PAGES.values()) == len(dialog.editors) == 18
    chat = dialog.pages.widget(GROUPS.index("Chat"))
    assert [label.text() for label in chat.findChildren(QLabel)] == [CHAT_NOTE]


def test_every_shown_option_names_a_known_group_and_kind() -> None:
    for item in declared():
        if item.option.visible:
            assert item.option.group in GROUPS, item.option.key
            assert item.option.kind in ("", PYTHON), item.option.key


def test_labels_in_words_units_after_numbers_placeholders_for_empty_fields(
    qtbot: QtBot,
) -> None:
    dialog = make_dialog(qtbot)
    margin = dialog.editor("alert_temp_margin_c")
    assert isinstance(margin, QDoubleSpinBox) and margin.suffix() == " °C"
    labels = {lab.buddy(): lab.text() for lab in dialog.findChildren(QLabel) if lab.buddy()}
    assert labels[margin] == "A&lert when this close to the critical temperature:"
    interval = dialog.editor("telemetry_interval_ms")
    assert isinstance(interval, QSpinBox) and interval.suffix() == " ms"
    assert labels[interval] == "&Read the GPUs every:"
    suffixes = {
        "job_cancel_grace_s": " s",
        "alert_vram_percent": " %",
        "alert_vram_hold_s": " s",
        "alert_power_hold_s": " s",
        "alert_cooldown_s": " s",
    }
    for key, suffix in suffixes.items():
        spin = dialog.editor(key)
        assert isinstance(spin, QDoubleSpinBox) and spin.suffix() == suffix, key
    placeholders = {
        "workload_python": "the panel's own Python",
        "torch_base_python": "the panel's own Python",
        "torch_index_mirror": "https://download.pytorch.org/whl",
        "torch_amd_repo_mirror": "https://repo.radeon.com",
        "pypi_index_url": "https://pypi.org/simple",
    }
    for key, text in placeholders.items():
        line = dialog.editor(key)
        assert isinstance(line, QLineEdit) and line.placeholderText() == text, key
    assert sorted(dialog.python_fields) == ["torch_base_python", "workload_python"]


def test_every_label_has_its_own_mnemonic_and_a_buddy(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot)
    for index in range(dialog.pages.count()):
        page = dialog.pages.widget(index)
        title = dialog.pages.tabText(index)
        letters = {"o", "c"} | {
            dialog.pages.tabText(i)[dialog.pages.tabText(i).index("&") + 1].lower()
            for i in range(dialog.pages.count())
        }
        for label in page.findChildren(QLabel):
            if label.text() == CHAT_NOTE or label.objectName() in ("fieldError", "fieldNote"):
                continue
            text = label.text()
            assert "&" in text and label.buddy() is not None, (title, text)
            letter = text[text.index("&") + 1].lower()
            assert letter not in letters, (title, text)
            letters.add(letter)


def test_with_mnemonic_skips_taken_letters_and_gives_up_plainly() -> None:
    taken = {"a"}
    assert with_mnemonic("Alert", taken) == "A&lert" and taken == {"a", "l"}
    assert with_mnemonic("… for at least", taken) == "… &for at least"
    assert with_mnemonic("aL", {"a", "l"}) == "aL"


def test_tab_order_follows_the_layout(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot)
    dialog.show()
    dialog.pages.setCurrentIndex(GROUPS.index("Workload"))
    page = dialog.pages.currentWidget()
    work, base = dialog.python_fields["workload_python"], dialog.python_fields["torch_base_python"]
    expected = [work.line, work.browse_button, base.line, base.browse_button]
    order: list[QWidget] = []
    widget = work.line
    for _ in range(50):
        if (
            page.isAncestorOf(widget)
            and widget.focusPolicy() & Qt.FocusPolicy.TabFocus
            and widget not in order
        ):
            order.append(widget)
        widget = widget.nextInFocusChain()
    assert order == expected


def test_a_stored_interpreter_is_not_refused_before_it_is_edited_but_on_ok(
    qtbot: QtBot, tmp_path: Path
) -> None:
    settings = Settings.load()
    gone = str(tmp_path / "gone" / "bin" / "python")
    settings.general.workload_python = gone  # e.g. an environment deleted since
    dialog = make_dialog(qtbot, settings)
    field = dialog.python_fields["workload_python"]
    assert field.error.isHidden() and field.error.text() == ""
    assert dialog.ok_button.isEnabled()
    dialog.accept()
    assert dialog.result() != dialog.DialogCode.Accepted
    assert field.error.text() == (
        f"{gone} does not exist. Choose a Python with Browse, or leave the field empty for "
        "the panel's own Python."
    )
    assert dialog.pages.currentIndex() == GROUPS.index("Workload")
    assert not dialog.ok_button.isEnabled()
    assert saved() == {}  # nothing written
    field.line.clear()  # back to the panel's own Python: accepted
    assert field.error.text() == "" and dialog.ok_button.isEnabled()
    dialog.accept()
    assert dialog.result() == dialog.DialogCode.Accepted
    assert settings.general.workload_python == "" and saved() == {}  # the default: not written


def test_an_interpreter_is_checked_as_it_is_edited(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = make_dialog(qtbot)
    field = dialog.python_fields["workload_python"]
    dialog.choose_path("workload_python", str(tmp_path))
    assert field.error.text() == (
        f"{tmp_path} is a folder. Choose the Python program inside it (bin/python, or "
        "python.exe on Windows)."
    )
    assert not field.error.isHidden() and not dialog.ok_button.isEnabled()
    if sys.platform != "win32":  # Windows has no execute bit
        plain = program(tmp_path / "notes.txt", 0o644)
        dialog.choose_path("workload_python", str(plain))
        assert field.error.text() == (
            f"{plain} is not a program this user can run. Choose a Python executable."
        )
        assert not dialog.ok_button.isEnabled()
    python = program(tmp_path / "venv" / "bin" / "python")
    dialog.choose_path("workload_python", str(python))
    assert field.error.text() == "" and field.error.isHidden()
    assert dialog.ok_button.isEnabled()
    dialog.accept()
    assert Settings.load().general.workload_python == str(python)


def test_a_refused_field_keeps_ok_disabled_while_another_is_fine(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = make_dialog(qtbot)
    dialog.choose_path("workload_python", str(tmp_path / "nope"))
    dialog.choose_path("torch_base_python", str(program(tmp_path / "python3")))
    assert dialog.python_fields["torch_base_python"].error.text() == ""
    assert not dialog.ok_button.isEnabled()  # the first one is still refused


def test_a_command_is_looked_up_on_path_and_a_relative_path_refused(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "python-for-rocmpanel-tests"
    program(tmp_path / "bin" / name)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert python_problem(name) == ""
    assert python_problem("no-such-python") == (
        "There is no program called no-such-python on PATH. Give the full path of a Python, "
        "or leave the field empty for the panel's own Python."
    )
    relative = os.path.join("venv", "bin", "python")
    assert python_problem(relative) == (
        f"{relative} is not a full path, so it would depend on the folder the panel starts "
        "in. Give the full path, or choose the file with Browse."
    )
    assert python_problem("") == ""


def test_browse_puts_the_chosen_file_in_the_field(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = program(tmp_path / "env" / "bin" / "python")
    asked: list[str] = []

    def choose(parent: QWidget, caption: str, start: str) -> tuple[str, str]:
        asked.append(start)
        return str(python), ""

    monkeypatch.setattr(settings_dialog.QFileDialog, "getOpenFileName", choose)
    dialog = make_dialog(qtbot)
    field = dialog.python_fields["torch_base_python"]
    qtbot.mouseClick(field.browse_button, Qt.MouseButton.LeftButton)
    assert asked == [str(Path.home())]  # an empty field starts in the home folder
    assert field.line.text() == str(python) and field.error.text() == ""
    qtbot.mouseClick(field.browse_button, Qt.MouseButton.LeftButton)
    assert asked[-1] == str(python.parent)  # then next to the current one


def test_browse_cancelled_leaves_the_field_alone(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings_dialog.QFileDialog, "getOpenFileName", lambda *a: ("", ""))
    dialog = make_dialog(qtbot)
    field = dialog.python_fields["workload_python"]
    qtbot.mouseClick(field.browse_button, Qt.MouseButton.LeftButton)
    assert field.line.text() == "" and field.error.text() == ""


def test_a_file_the_user_cannot_run_is_refused_on_any_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = program(tmp_path / "python")
    monkeypatch.setattr(settings_dialog.os, "access", lambda path, mode: False)
    assert python_problem(str(python)) == (
        f"{python} is not a program this user can run. Choose a Python executable."
    )


def test_a_choice_among_fixed_values_is_a_list_and_saved_as_its_value(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QComboBox

    from rocmpanel.base.enums import Language, Theme

    dialog = make_dialog(qtbot)
    language, theme = dialog.editor("language"), dialog.editor("theme")
    assert isinstance(language, QComboBox) and isinstance(theme, QComboBox)
    assert [language.itemText(i) for i in range(language.count())] == [
        "System",
        "English",
        "简体中文 (zh_CN)",
    ]
    assert [theme.itemText(i) for i in range(theme.count())] == ["System", "Light", "Dark"]
    assert language.currentData() == "system" and theme.currentData() == "system"
    language.setCurrentIndex(language.findData(Language.CHINESE_SIMPLIFIED.value))
    theme.setCurrentIndex(theme.findData(Theme.DARK.value))
    dialog.accept()
    assert saved()["language"] == "zh_CN" and saved()["theme"] == "dark"
    assert Settings.load().general.language is Language.CHINESE_SIMPLIFIED
    again = make_dialog(qtbot)
    assert again.editor("language").currentText() == "简体中文 (zh_CN)"  # type: ignore[union-attr]


def test_changing_the_language_says_it_needs_a_new_start(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QComboBox

    from rocmpanel.base.enums import Language

    dialog = make_dialog(qtbot)
    dialog.show()
    language = dialog.editor("language")
    assert isinstance(language, QComboBox)
    assert not dialog.language_note.isVisible()
    language.setCurrentIndex(language.findData(Language.ENGLISH.value))
    assert dialog.language_note.isVisible()
    assert "starts again" in dialog.language_note.text()
    language.setCurrentIndex(language.findData(Language.SYSTEM.value))  # back as it was
    assert not dialog.language_note.isVisible()


def test_a_translated_label_gets_its_mnemonic_in_brackets() -> None:
    taken = {"l"}
    assert with_mnemonic("语言", taken, "Language") == "语言(&A)" and "a" in taken
    assert with_mnemonic("语言", {"l", "a", "n", "g", "u", "e"}, "Language") == "语言"
