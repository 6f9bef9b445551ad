"""What the Serve panel shows while the server runs: the URL, the key, the figures, the last
requests.

The URL is the ``/v1`` base URL OpenAI clients take (``base_url``; the official client's own
default is ``https://api.openai.com/v1``, openai/_data_residency.py). The key is masked
(``••••`` and its last four characters) until Show is pressed, so a screenshot or a screen
share does not leak it; Copy puts the whole key on the clipboard either way. The figures
come from :class:`~rocmpanel.chat.serve_protocol.ServeStats`; a request whose client went
away (status 499, nginx's count) is listed as "client left".
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.api_key import ApiKey
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.chat.serve_protocol import CLIENT_GONE, Served, ServeStats

MASK = "••••"
COLUMNS = (
    QT_TRANSLATE_NOOP("ServeStatus", "Time"),
    QT_TRANSLATE_NOOP("ServeStatus", "Endpoint"),
    QT_TRANSLATE_NOOP("ServeStatus", "Status"),
    QT_TRANSLATE_NOOP("ServeStatus", "Tokens"),
    QT_TRANSLATE_NOOP("ServeStatus", "Latency"),
)
TABLE_ROWS_SHOWN = 6  # rows the table is tall enough for before it scrolls
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def mask_key(key: str) -> str:
    """``••••`` and the key's last four characters (all of it hidden when it is that short)."""
    return MASK + (key[-4:] if len(key) > 8 else "")


def base_url(url: str) -> str:
    """The base URL OpenAI clients take: the server's URL with ``/v1``."""
    return url.rstrip("/") + "/v1"


def endpoint_text(served: Served) -> str:
    """The path without its ``/v1/`` ("completions", "models"), and chat completions as
    "chat" (the column is narrow; the row's tooltip has the whole path)."""
    path = served.path
    if path == "/v1/chat/completions":
        return "chat"
    return path[len("/v1/") :] if path.startswith("/v1/") else path


def status_text(served: Served) -> str:
    if served.status == CLIENT_GONE:
        return translate("ServeStatus", "client left")
    return str(served.status)


def latency_text(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds:.2f} s"


def time_text(at: float) -> str:
    """The local wall-clock time of a finished request (HH:MM:SS)."""
    return time.strftime("%H:%M:%S", time.localtime(at))


def figures_text(stats: ServeStats, now: float) -> str:
    """Requests per minute, tokens/s of the recent requests, and the queue, in one line."""
    speed = stats.tokens_per_s()
    speed_text = "–" if speed is None else f"{speed:.1f}"
    queue = stats.queue
    running = (
        translate("ServeStatus", "1 running")
        if queue.running
        else translate("ServeStatus", "none running")
    )
    return translate(
        "ServeStatus",
        "Requests/min: {rate} · Tokens/s: {speed} · Queue: {waiting} waiting, {running}",
    ).format(
        rate=stats.requests_per_minute(now),
        speed=speed_text,
        waiting=queue.waiting,
        running=running,
    )


def row_tooltip(served: Served) -> str:
    """Everything about one request that the row has no room for."""
    client = served.client or translate("ServeStatus", "unknown")
    parts = [
        translate("ServeStatus", "{method} {path} from {client}").format(
            method=served.method, path=served.path, client=client
        )
    ]
    parts.append(
        translate("ServeStatus", "{prompt} prompt tokens, {generated} generated").format(
            prompt=served.prompt_tokens, generated=served.completion_tokens
        )
    )
    if served.stream:
        parts.append(translate("ServeStatus", "streamed"))
    if served.ttft_s is not None:
        parts.append(
            translate("ServeStatus", "first token after {seconds} s").format(
                seconds=f"{served.ttft_s:.3f}"
            )
        )
    if served.tokens_per_s is not None:
        parts.append(
            translate("ServeStatus", "{rate} tokens/s").format(rate=f"{served.tokens_per_s:.1f}")
        )
    if served.finish_reason:
        parts.append(
            translate("ServeStatus", "finished: {reason}").format(reason=served.finish_reason)
        )
    if served.error:
        parts.append(translate("ServeStatus", "error: {error}").format(error=served.error))
    return "\n".join(parts)


class ServeStatus(QWidget):
    """The serving server's URL and key (with Copy, Show, New key), figures and last requests.

    Emits ``new_key_requested()`` when New key is pressed (the panel asks first)."""

    new_key_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.url = ""
        self.key = ""
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        column.addLayout(form)

        url_row = QHBoxLayout()
        self.url_edit = QLineEdit()
        self.url_edit.setReadOnly(True)
        self.url_edit.setAccessibleName(translate("ServeStatus", "Server base URL"))
        self.url_edit.setToolTip(
            translate("ServeStatus", "The base URL for OpenAI clients (base_url).")
        )
        url_row.addWidget(self.url_edit, 1)
        self.copy_url_button = QPushButton(translate("ServeStatus", "Copy"))
        self.copy_url_button.setAccessibleName(translate("ServeStatus", "Copy the URL"))
        self.copy_url_button.clicked.connect(self.copy_url)
        url_row.addWidget(self.copy_url_button)
        form.addRow(translate("ServeStatus", "URL:"), url_row)

        key_row = QHBoxLayout()
        self.key_edit = QLineEdit()
        self.key_edit.setReadOnly(True)
        self.key_edit.setAccessibleName(translate("ServeStatus", "API key"))
        self.key_edit.setToolTip(
            translate("ServeStatus", "Clients send it as 'Authorization: Bearer <key>'.")
        )
        key_row.addWidget(self.key_edit, 1)
        self.show_key_button = QPushButton(translate("ServeStatus", "Show"))
        self.show_key_button.setCheckable(True)
        self.show_key_button.setAccessibleName(translate("ServeStatus", "Show the API key"))
        self.show_key_button.toggled.connect(self._show_key)
        key_row.addWidget(self.show_key_button)
        self.copy_key_button = QPushButton(translate("ServeStatus", "Copy"))
        self.copy_key_button.setAccessibleName(translate("ServeStatus", "Copy the API key"))
        self.copy_key_button.clicked.connect(self.copy_key)
        key_row.addWidget(self.copy_key_button)
        form.addRow(translate("ServeStatus", "Key:"), key_row)

        self.key_note = QLabel()
        self.key_note.setWordWrap(True)
        self.key_note.hide()
        column.addWidget(self.key_note)
        key_buttons = QHBoxLayout()
        self.new_key_button = QPushButton(translate("ServeStatus", "New key…"))
        self.new_key_button.setToolTip(
            translate(
                "ServeStatus",
                "Make a new API key; the old one stops working (a running server restarts).",
            )
        )
        self.new_key_button.clicked.connect(self.new_key_requested)
        key_buttons.addWidget(self.new_key_button)
        key_buttons.addStretch(1)
        column.addLayout(key_buttons)

        self.figures_label = QLabel()
        self.figures_label.setWordWrap(True)
        column.addWidget(self.figures_label)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([translate("ServeStatus", c) for c in COLUMNS])
        self.table.setAccessibleName(translate("ServeStatus", "Last requests"))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table, as in a form
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        rows = self.table.verticalHeader().defaultSectionSize() * TABLE_ROWS_SHOWN
        self.table.setFixedHeight(rows + header.sizeHint().height() + 2 * self.table.frameWidth())
        column.addWidget(self.table)

    # -- URL and key -------------------------------------------------------------------
    def set_url(self, url: str) -> None:
        self.url = base_url(url)
        self.url_edit.setText(self.url)
        self.url_edit.setCursorPosition(0)

    def set_key(self, key: ApiKey) -> None:
        """Show ``key`` (masked unless Show is down), where it is stored, and what was
        noted about its file (fixed permissions, a file kept aside, a backup)."""
        self.key = key.value
        self._show_key(self.show_key_button.isChecked())
        self.key_edit.setToolTip(
            translate(
                "ServeStatus",
                "Stored in {path}. Clients send it as 'Authorization: Bearer <key>'.",
            ).format(path=key.path)
        )
        self.key_note.setText(key.note)
        self.key_note.setVisible(bool(key.note))

    def _show_key(self, shown: bool) -> None:
        self.key_edit.setText(self.key if shown else mask_key(self.key))
        self.key_edit.setCursorPosition(0)
        self.show_key_button.setText(
            translate("ServeStatus", "Hide") if shown else translate("ServeStatus", "Show")
        )

    def copy_url(self) -> None:
        QGuiApplication.clipboard().setText(self.url)

    def copy_key(self) -> None:
        QGuiApplication.clipboard().setText(self.key)

    # -- figures -----------------------------------------------------------------------
    def show_stats(self, stats: ServeStats, now: float) -> None:
        """The figures at ``now`` and the table of the last requests, newest first."""
        self.figures_label.setText(figures_text(stats, now))
        recent = list(stats.recent)
        self.table.setRowCount(len(recent))
        for row, served in enumerate(recent):
            tip = row_tooltip(served)
            cells = (
                time_text(served.at),
                endpoint_text(served),
                status_text(served),
                str(served.completion_tokens),
                latency_text(served.latency_s),
            )
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                if col >= 2:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, col, item)

    def cells(self) -> list[list[str]]:
        """The table's text, row by row (what the user reads; tests compare it)."""
        rows: list[list[str]] = []
        for r in range(self.table.rowCount()):
            items = (self.table.item(r, c) for c in range(self.table.columnCount()))
            rows.append([item.text() if item is not None else "" for item in items])
        return rows
