"""File → Settings: a form built from the declared settings, nothing listed twice."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Declared, Settings, declared
from rocmpanel.gui.report import report


def _editor_for(item: Declared, value: Any) -> QWidget:
    opt = item.option
    if item.type is bool:
        box = QCheckBox()
        box.setChecked(bool(value))
        return box
    if item.type is int:
        spin = QSpinBox()
        spin.setRange(int(opt.minimum or 0), int(opt.maximum or 2_000_000_000))
        spin.setValue(int(value))
        return spin
    if item.type is float:
        dspin = QDoubleSpinBox()
        dspin.setDecimals(2)
        dspin.setRange(float(opt.minimum or 0.0), float(opt.maximum or 1e9))
        dspin.setValue(float(value))
        return dspin
    line = QLineEdit(str(value))
    line.setClearButtonEnabled(True)
    return line


def _value_of(editor: QWidget) -> Any:
    if isinstance(editor, QCheckBox):
        return editor.isChecked()
    if isinstance(editor, QSpinBox | QDoubleSpinBox):
        return editor.value()
    assert isinstance(editor, QLineEdit)
    return editor.text().strip()


class SettingsDialog(QDialog):
    """Edits every visible setting; checks them all, then saves atomically on OK."""

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.notice_box: QMessageBox | None = None
        self.setWindowTitle("Settings")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.editors: list[tuple[Declared, QWidget]] = []
        for item in declared():
            if not item.option.visible:
                continue
            editor = _editor_for(item, settings.value(item))
            editor.setToolTip(item.option.help)
            self.editors.append((item, editor))
            form.addRow(item.option.label + ":", editor)
        layout.addLayout(form)
        self.error = QLabel()
        self.error.setStyleSheet("color: #c0392b")
        self.error.setWordWrap(True)
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def editor(self, key: str) -> QWidget | None:
        """The editor of the setting stored as ``key``; None when it is not shown."""
        return next((e for item, e in self.editors if item.option.key == key), None)

    def accept(self) -> None:
        trial = Settings(self.settings.path)
        try:
            for item, editor in self.editors:  # every value is checked before any is kept
                trial.assign(item, _value_of(editor))
            for item, _ in self.editors:
                self.settings.assign(item, trial.value(item))
            notices = self.settings.save()
        except (ValueError, PanelError) as exc:  # a value that does not fit, or saving failed
            report(exc, "Saving settings", label=self.error)  # shown here, detail in the log
            return
        if notices:  # a damaged file was kept aside before it was replaced: say where
            self.notice_box = QMessageBox(
                QMessageBox.Icon.Information,
                "Settings saved",
                "\n\n".join(notices),
                QMessageBox.StandardButton.Ok,
                self.parentWidget(),
            )
            self.notice_box.setModal(False)
            self.notice_box.show()
        super().accept()
