"""The "Analyse pasted output" dialog: paste (or open) tool output from another machine.

The diagnosis it leads to is labelled as that machine's, with where the texts came from
(:meth:`PasteDialog.sources`).

Opened files are read in the background (a saved log can be large, or sit on a slow
share); Analyse waits until every file asked for has arrived.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.report import report
from rocmpanel.setup.captured import KNOWN_KINDS_TEXT


def read_tool_output(path: Path) -> str:
    """A saved tool output's text; PanelError when it cannot be read."""
    from rocmpanel.setup.capture_input import read_capture

    try:
        return read_capture(str(path))  # bounded, and never blocks on a FIFO or a device
    except OSError as exc:
        raise PanelError(
            translate("PasteDialog", "Could not read {path}: {reason}.").format(
                path=path, reason=exc.strerror or exc
            ),
            repr(exc),
        ) from exc


class PasteDialog(QDialog):
    """Collects the pasted text and the optional ROCm version / OS overrides."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(translate("PasteDialog", "Analyse pasted output"))
        self.resize(760, 520)
        layout = QVBoxLayout(self)
        hint = QLabel(
            translate(
                "PasteDialog",
                "Paste the output of {tools}. Several outputs of one machine "
                "can be pasted one after another with “Add file…”.",
            ).format(tools=translate("captured", KNOWN_KINDS_TEXT))
        )
        hint.setWordWrap(True)
        layout.addWidget(hint)
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText(translate("PasteDialog", "Paste here…"))
        layout.addWidget(self.text, 1)
        self.extra: list[str] = []
        self.extra_names: list[str] = []  # the files' names, in the order of ``extra``
        self._reading = 0  # files being read in the background
        self.files_label = QLabel("")
        layout.addWidget(self.files_label)
        open_button = QPushButton(translate("PasteDialog", "&Add file…"))
        open_button.clicked.connect(self._on_open_clicked)
        form = QFormLayout()
        self.rocm_version = QLineEdit()
        self.rocm_version.setPlaceholderText(
            translate("PasteDialog", "as the text says (e.g. 6.2.2)")
        )
        self.os_choice = QComboBox()
        self.os_choice.addItems([translate("PasteDialog", "as the text says"), "linux", "windows"])
        form.addRow(translate("PasteDialog", "&ROCm version:"), self.rocm_version)
        form.addRow(translate("PasteDialog", "&OS:"), self.os_choice)
        layout.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.analyse_button = buttons.addButton(
            translate("PasteDialog", "&Analyse"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.analyse_button.setDefault(True)
        buttons.addButton(open_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _on_open_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, translate("PasteDialog", "Open tool output"))
        if path:
            self.add_file(Path(path))

    def add_file(self, path: Path) -> None:
        """Read ``path`` in the background and add its text to what is analysed."""
        self._reading += 1
        self.analyse_button.setEnabled(False)
        self.files_label.setText(translate("PasteDialog", "Reading {name}…").format(name=path.name))
        run_in_background(
            lambda: read_tool_output(path),
            lambda text, error: self._on_file_read(path, text, error),
            owner=self,
            what=f"reading {path}",
        )

    def _on_file_read(self, path: Path, text: str | None, error: BaseException | None) -> None:
        self._reading -= 1
        self.analyse_button.setEnabled(self._reading == 0)
        if text is None:
            report(
                error
                or PanelError(translate("PasteDialog", "Could not read {path}.").format(path=path)),
                translate("PasteDialog", "Reading a file"),
                label=self.files_label,
            )
            return
        self.extra.append(text)
        self.extra_names.append(path.name)
        self.files_label.setText(
            translate("PasteDialog", "{count} file(s) added; last: {name}").format(
                count=len(self.extra), name=path.name
            )
        )

    def texts(self) -> list[str]:
        pasted = self.text.toPlainText()
        return ([pasted] if pasted.strip() else []) + self.extra

    def sources(self) -> tuple[str, ...]:
        """Where the texts came from: "pasted text" and the files' names, as
        :meth:`texts` orders them (the Setup tab says so above the diagnosis)."""
        pasted = (
            (translate("PasteDialog", "pasted text"),) if self.text.toPlainText().strip() else ()
        )
        return (*pasted, *self.extra_names)

    def rocm_version_value(self) -> str | None:
        return self.rocm_version.text().strip() or None

    def os_value(self) -> str | None:
        return None if self.os_choice.currentIndex() == 0 else self.os_choice.currentText()
