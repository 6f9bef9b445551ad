"""The Setup tab's checklist: one row per check (status, title, message, fix button)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QPushButton, QWidget

from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.setup.views.badges import badge_style

if TYPE_CHECKING:  # the checks arrive after the window's first paint; so does their module
    from rocmpanel.setup.checklist import Check

_CHECK_COLOURS = {
    CheckStatus.PASS: ("#1b5e20", "#c8e6c9"),
    CheckStatus.WARN: ("#5d4037", "#ffe0b2"),
    CheckStatus.FAIL: ("#b71c1c", "#ffcdd2"),
    CheckStatus.SKIP: ("#37474f", "#eceff1"),
}
#: The badge's word for each status (the status values are identifiers, never shown as such).
STATUS_WORDS = {
    CheckStatus.PASS: QT_TRANSLATE_NOOP("ChecklistBox", "pass"),
    CheckStatus.WARN: QT_TRANSLATE_NOOP("ChecklistBox", "warn"),
    CheckStatus.FAIL: QT_TRANSLATE_NOOP("ChecklistBox", "fail"),
    CheckStatus.SKIP: QT_TRANSLATE_NOOP("ChecklistBox", "skip"),
}


def clear_grid(grid: QGridLayout) -> None:
    """Remove and delete every widget of ``grid``."""
    while grid.count():
        item = grid.takeAt(0)
        widget = item.widget() if item is not None else None
        if widget is not None:
            widget.deleteLater()


class ChecklistBox(QGroupBox):
    """Shows checks; a failing or warning check with a fix gets a button."""

    fix_clicked = Signal(object)  # the Check whose fix button was pressed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(translate("ChecklistBox", "Checklist"), parent)
        self.grid = QGridLayout(self)
        self.grid.setColumnStretch(2, 1)

    def show_checks(self, checks: Sequence[Check]) -> None:
        clear_grid(self.grid)
        for row, check in enumerate(checks):
            self._add_row(row, check)

    def _add_row(self, row: int, check: Check) -> None:
        badge = QLabel(translate("ChecklistBox", STATUS_WORDS[check.status]))
        badge.setStyleSheet(badge_style(*_CHECK_COLOURS[check.status]))
        badge.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel(f"<b>{check.title}</b>")
        message = QLabel(check.message)
        message.setWordWrap(True)
        message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.grid.addWidget(badge, row, 0, Qt.AlignmentFlag.AlignTop)
        self.grid.addWidget(title, row, 1, Qt.AlignmentFlag.AlignTop)
        self.grid.addWidget(message, row, 2)
        fix = check.fix
        if fix is None or check.status not in (CheckStatus.FAIL, CheckStatus.WARN):
            return
        from rocmpanel.setup.checklist import FixKind

        if fix.kind in (FixKind.ENV_SET, FixKind.ENV_UNSET):
            label = fix.text
        elif fix.kind is FixKind.COMMAND:
            label = (
                translate("ChecklistBox", "Copy command")
                if "\n" not in fix.text
                else translate("ChecklistBox", "Copy commands")
            )
            lines = "<br>".join(
                f"<code>{html.escape(line)}</code>" for line in fix.text.splitlines()
            )
            message.setText(f"{html.escape(check.message)}<br>{lines}")
        else:
            label = translate("ChecklistBox", "Copy advice")
        button = QPushButton(label)
        button.setObjectName(f"fix_{check.id}")
        button.setToolTip(fix.text)
        button.clicked.connect(lambda _=False, c=check: self.fix_clicked.emit(c))
        self.grid.addWidget(button, row, 3, Qt.AlignmentFlag.AlignTop)
