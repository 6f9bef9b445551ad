"""The cells of the environment editor's table: values, staged changes, verdicts."""

from __future__ import annotations

import os

from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QTableWidgetItem

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.envvars.catalogue import Status, Verdict

STATUS_COLORS = {
    Status.VALID: "#1b7f3b",
    Status.WARNING: "#8a5a00",
    Status.INVALID: "#b00020",
    Status.UNKNOWN: "#666666",
}
#: The Status column's word for each verdict (the enum values are identifiers).
STATUS_WORDS = {
    Status.VALID: QT_TRANSLATE_NOOP("table_items", "valid"),
    Status.WARNING: QT_TRANSLATE_NOOP("table_items", "warning"),
    Status.INVALID: QT_TRANSLATE_NOOP("table_items", "invalid"),
    Status.UNKNOWN: QT_TRANSLATE_NOOP("table_items", "unknown"),
}
PENDING_BACKGROUND = "#fff4c2"


def short(value: str | None, limit: int = 60) -> str:
    if value is None:
        return ""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def value_item(value: str | None, empty: str) -> QTableWidgetItem:
    """A stored value (long PATH-like values get one entry a line in the tooltip)."""
    item = QTableWidgetItem(short(value) if value is not None else empty)
    if value is not None and len(value) > 60:
        item.setToolTip(value.replace(os.pathsep, "\n"))
    elif value is not None:
        item.setToolTip(value)
    if value is None:
        item.setForeground(QBrush(QColor("#888888")))
    return item


def staged_item(current: str | None, new: str | None) -> QTableWidgetItem:
    """A staged change, shown as "old → new" on a highlighted background."""
    unset = translate("table_items", "(unset)")
    old_text = short(current, 28) if current is not None else unset
    new_text = short(new, 28) if new is not None else unset
    item = QTableWidgetItem(f"{old_text} → {new_text}")
    staged = new if new is not None else translate("table_items", "unset")
    item.setToolTip(translate("table_items", "Staged: {value}").format(value=staged))
    item.setBackground(QBrush(QColor(PENDING_BACKGROUND)))
    item.setForeground(QBrush(QColor("#000000")))
    font = QFont(item.font())
    font.setBold(True)
    item.setFont(font)
    return item


def status_item(verdict: Verdict | None) -> QTableWidgetItem:
    """The catalogue's verdict on the value that matters (staged, else stored)."""
    if verdict is None:
        return QTableWidgetItem("")
    text = translate("table_items", STATUS_WORDS[verdict.status])
    if verdict.message:
        text += f": {short(verdict.message, 90)}"
    item = QTableWidgetItem(text)
    item.setForeground(QBrush(QColor(STATUS_COLORS[verdict.status])))
    item.setToolTip(verdict.message)
    return item
