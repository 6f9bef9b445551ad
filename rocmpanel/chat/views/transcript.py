"""The conversation as the user reads it, and the box they type into with its buttons.

Each message is a small frame: who said it, the text (fenced code blocks in a monospace
box that keeps its line breaks), a Copy button and, for replies, the figures. Streaming
appends to the last message; re-rendering is coalesced on a short timer so a fast model
costs a few repaints per second, not one per token.

Every step on the GUI thread stays bounded however long the conversation or the reply:
a message's text is shown as blocks (paragraphs and code blocks), and a render redraws
only the blocks whose text changed (while streaming, the last one); each block remembers
its height for a width, so adding a message lays out that message, not every message
before it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.chat.store import Message

FENCE = re.compile(r"```([^\n`]*)\n?(.*?)(?:```|\Z)", re.DOTALL)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
RENDER_INTERVAL_MS = 40
BLOCK_CHARS = 1500  # a longer paragraph or code block is shown in pieces of about this
HEIGHTS_KEPT = 8  # widths whose height a text block remembers
ROLE_NAMES = {
    "user": QT_TRANSLATE_NOOP("MessageWidget", "You"),
    "assistant": QT_TRANSLATE_NOOP("MessageWidget", "Assistant"),
    "system": QT_TRANSLATE_NOOP("MessageWidget", "System"),
}
ROLE_COLOURS = {"user": "#1f5fa8", "assistant": "#2d7a3a", "system": "#7a5a2d"}
# One style sheet for the whole transcript (parsed once), not one per message.
TRANSCRIPT_STYLE = (
    "#chatMessage { background-color:#ffffff; border:1px solid #d8dde3; border-radius:6px; }"
    '#chatMessage[role="user"] { background-color:#f7faff; }'
    "QLabel#chatFigures { color:#666666; font-size:small; }"
)
CODE_STYLE = (
    "background-color:#f3f3f3; color:#202020; font-family:monospace; "
    "white-space:pre-wrap; margin:4px 0px; padding:6px;"
)


def _text_html(text: str) -> str:
    escaped = html.escape(text)
    escaped = INLINE_CODE.sub(
        lambda m: (
            f'<code style="font-family:monospace; background-color:#eeeeee;">{m.group(1)}</code>'
        ),
        escaped,
    )
    return escaped.replace("\n", "<br>")


def render_message_html(text: str) -> str:
    """Plain text with fenced code blocks (``` … ```, possibly unfinished) as HTML."""
    parts: list[str] = []
    position = 0
    for match in FENCE.finditer(text):
        if match.start() > position:
            parts.append(_text_html(text[position : match.start()]))
        language = html.escape(match.group(1).strip())
        code = html.escape(match.group(2).rstrip("\n"))
        label = f'<div style="color:#777777; font-size:small;">{language}</div>' if language else ""
        parts.append(f'{label}<pre style="{CODE_STYLE}">{code}</pre>')
        position = match.end()
    if position < len(text):
        parts.append(_text_html(text[position:]))
    return "".join(parts) or "&nbsp;"


def _chunks(text: str) -> list[str]:
    """``text`` cut at the first line end after each BLOCK_CHARS characters (so that text
    appended later never moves a cut made before)."""
    chunks: list[str] = []
    start = 0
    while len(text) - start > BLOCK_CHARS:
        cut = text.find("\n", start + BLOCK_CHARS)
        if cut < 0:
            break
        chunks.append(text[start:cut])
        start = cut + 1
    chunks.append(text[start:])
    return chunks


def split_blocks(text: str) -> list[str]:
    """``text`` as the blocks a message shows, each one rendered on its own: fenced code
    blocks (possibly unfinished) and the paragraphs between them (split at blank lines),
    long ones cut at a line end after BLOCK_CHARS. Appending text changes only the last
    block or adds blocks after it; never an empty list."""
    blocks: list[str] = []

    def paragraphs(part: str) -> None:
        for paragraph in PARAGRAPH_BREAK.split(part):
            if paragraph.strip():
                blocks.extend(_chunks(paragraph.strip("\n")))

    position = 0
    for match in FENCE.finditer(text):
        paragraphs(text[position : match.start()])
        language = match.group(1)
        for index, code in enumerate(_chunks(match.group(2))):
            blocks.append(f"```{language if index == 0 else ''}\n{code}```")
        position = match.end()
    paragraphs(text[position:])
    return blocks or [""]


class TextBlock(QLabel):
    """One block of a message as rich text, word-wrapped and selectable.

    QLabel lays its whole text out again on every ``heightForWidth``, and a layout pass of
    the transcript asks that of every message; the height for a width is kept here until
    the text (or the font) changes. ``layouts`` counts the real layouts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._heights: dict[int, int] = {}
        self.layouts = 0
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def show_html(self, markup: str) -> None:
        self._heights.clear()
        self.setText(markup)

    def heightForWidth(self, width: int) -> int:
        height = self._heights.get(width)
        if height is None:
            if len(self._heights) >= HEIGHTS_KEPT:
                self._heights.clear()
            height = self._heights[width] = super().heightForWidth(width)
            self.layouts += 1
        return height

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._heights.clear()
        super().changeEvent(event)


class MessageWidget(QFrame):
    """One message: role, rendered text (as blocks, see the module), Copy, figures."""

    def __init__(self, role: str, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.role = role
        self._text = text
        self._shown: list[str] = []  # the text of each block as last rendered
        self.blocks: list[TextBlock] = []
        self.setObjectName("chatMessage")
        self.setProperty("role", role)  # styled by the transcript's TRANSCRIPT_STYLE
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(2)
        header = QHBoxLayout()
        name = translate("MessageWidget", ROLE_NAMES[role]) if role in ROLE_NAMES else role
        colour = ROLE_COLOURS.get(role, "#333333")
        self.role_label = QLabel(f'<b style="color:{colour}">{html.escape(name)}</b>')
        header.addWidget(self.role_label)
        header.addStretch(1)
        self.copy_button = QPushButton(translate("MessageWidget", "Copy"))
        self.copy_button.setFlat(True)
        self.copy_button.setToolTip(translate("MessageWidget", "Copy this message's text"))
        self.copy_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.copy_button.clicked.connect(self.copy)
        header.addWidget(self.copy_button)
        layout.addLayout(header)
        self._body = QVBoxLayout()
        self._body.setContentsMargins(0, 0, 0, 0)
        self._body.setSpacing(6)
        layout.addLayout(self._body)
        self.figures_label = QLabel()
        self.figures_label.setObjectName("chatFigures")
        self.figures_label.hide()
        layout.addWidget(self.figures_label)
        self.refresh_body()

    @property
    def text(self) -> str:
        return self._text

    def set_text(self, text: str) -> None:
        self._text = text

    def append(self, text: str) -> None:
        self._text += text

    def refresh_body(self) -> None:
        """Show the current text (streaming appends first, then refreshes at most every
        RENDER_INTERVAL_MS): only the blocks whose text changed are rendered again."""
        blocks = split_blocks(self._text.rstrip())
        for index, block in enumerate(blocks):
            if index < len(self._shown) and self._shown[index] == block:
                continue
            if index == len(self.blocks):
                label = TextBlock()
                self._body.addWidget(label)
                self.blocks.append(label)
            self.blocks[index].show_html(render_message_html(block))
        while len(self.blocks) > len(blocks):
            label = self.blocks.pop()
            self._body.removeWidget(label)
            label.deleteLater()
        self._shown = blocks

    def set_figures(self, summary: str) -> None:
        self.figures_label.setText(summary)
        self.figures_label.setVisible(bool(summary))

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self._text)


class ChatView(QScrollArea):
    """The list of messages, newest at the bottom, following the bottom while streaming."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._inner = QWidget()
        self._inner.setObjectName("chatInner")
        self._inner.setStyleSheet(TRANSCRIPT_STYLE)
        self._layout = QVBoxLayout(self._inner)
        self._layout.setContentsMargins(8, 8, 8, 8)
        self._layout.setSpacing(8)
        self.placeholder = QLabel(
            translate(
                "ChatView",
                "Load a model on the right, then type below. Enter sends, Shift+Enter adds a line.",
            )
        )
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet("color:#777777;")
        self._layout.addWidget(self.placeholder)
        self._layout.addStretch(1)
        self.setWidget(self._inner)
        self.widgets: list[MessageWidget] = []
        # Separators ("Model changed to X"), each with the number of messages before it.
        self.markers: list[tuple[int, QLabel]] = []
        self._dirty: MessageWidget | None = None
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self._render_dirty)
        self.verticalScrollBar().rangeChanged.connect(self._on_range_changed)
        self._follow = True

    def clear(self) -> None:
        for widget in self.widgets:
            self._layout.removeWidget(widget)
            widget.deleteLater()
        self.widgets.clear()
        for _position, marker in self.markers:
            self._layout.removeWidget(marker)
            marker.deleteLater()
        self.markers.clear()
        self._dirty = None
        self.placeholder.show()

    def add_marker(self, text: str) -> QLabel:
        """A centred separator line after the messages so far (not a message: it is not
        counted by :meth:`truncate`'s ``keep``, and goes when a message before it does)."""
        marker = QLabel(f"— {text} —")
        marker.setObjectName("marker")
        marker.setAlignment(Qt.AlignmentFlag.AlignCenter)
        marker.setStyleSheet("color:#666666; font-style:italic;")
        self._layout.insertWidget(self._layout.count() - 1, marker)
        self.markers.append((len(self.widgets), marker))
        self._follow = True
        return marker

    def add_message(self, role: str, text: str = "") -> MessageWidget:
        widget = MessageWidget(role, text)
        self._layout.insertWidget(self._layout.count() - 1, widget)
        self.widgets.append(widget)
        self.placeholder.hide()
        self._follow = True
        return widget

    def show_messages(self, messages: Iterable[Message]) -> None:
        """Add saved messages, each reply with its figures."""
        for message in messages:
            widget = self.add_message(message.role, message.content)
            if message.figures is not None:
                widget.set_figures(message.figures.shown_summary())

    def remove_last(self) -> None:
        if self.widgets:
            widget = self.widgets.pop()
            if self._dirty is widget:
                self._dirty = None
            self._layout.removeWidget(widget)
            widget.deleteLater()
        self.placeholder.setVisible(not self.widgets)

    def truncate(self, keep: int) -> None:
        """Keep the first ``keep`` messages (and the markers between them)."""
        while len(self.widgets) > max(0, keep):
            self.remove_last()
        while self.markers and self.markers[-1][0] > len(self.widgets):
            _position, marker = self.markers.pop()
            self._layout.removeWidget(marker)
            marker.deleteLater()

    def last(self) -> MessageWidget | None:
        return self.widgets[-1] if self.widgets else None

    def append_to_last(self, text: str) -> None:
        widget = self.last()
        if widget is None:
            return
        bar = self.verticalScrollBar()
        self._follow = bar.value() >= bar.maximum() - 4
        widget.append(text)
        self._dirty = widget
        if not self._render_timer.isActive():
            self._render_timer.start()

    def flush(self) -> None:
        """Render pending text now (at the end of a reply)."""
        self._render_timer.stop()
        self._render_dirty()

    def finish_last(self, text: str, figures: str) -> MessageWidget | None:
        """End the streamed last message: its final text (rendering only the blocks that
        differ from what was streamed) and its figures."""
        self._render_timer.stop()
        self._dirty = None
        widget = self.last()
        if widget is not None:
            widget.set_text(text)
            widget.refresh_body()
            widget.set_figures(figures)
        return widget

    def _render_dirty(self) -> None:
        if self._dirty is not None:
            self._dirty.refresh_body()
            self._dirty = None

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)


class ChatInput(QPlainTextEdit):
    """Enter sends (``submitted``), Shift+Enter inserts a newline."""

    submitted = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText(
            translate("ChatInput", "Message (Enter sends, Shift+Enter for a new line)")
        )
        self.setTabChangesFocus(True)
        metrics = self.fontMetrics()
        self.setFixedHeight(metrics.lineSpacing() * 4 + 14)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            text = self.toPlainText()
            if text.strip():
                self.submitted.emit(text)
            event.accept()
            return
        super().keyPressEvent(event)


class ChatComposer(QWidget):
    """The message box with its buttons beside it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.input = ChatInput()
        row.addWidget(self.input, 1)
        buttons = QVBoxLayout()
        self.send_button = QPushButton(translate("ChatComposer", "&Send"))
        self.stop_button = QPushButton(translate("ChatComposer", "S&top"))
        self.regenerate_button = QPushButton(translate("ChatComposer", "&Regenerate"))
        self.edit_button = QPushButton(translate("ChatComposer", "&Edit last"))
        self.edit_button.setToolTip(
            translate("ChatComposer", "Put your last message back in the box to change and resend")
        )
        for button in (self.send_button, self.stop_button, self.regenerate_button):
            buttons.addWidget(button)
        buttons.addWidget(self.edit_button)
        row.addLayout(buttons)

    def update_buttons(
        self, can_send: bool, can_stop: bool, can_regenerate: bool, can_edit: bool
    ) -> None:
        """Enable what the chat session allows now."""
        self.send_button.setEnabled(can_send)
        self.stop_button.setEnabled(can_stop)
        # Regenerate also retries a message whose reply never finished (error, crash).
        self.regenerate_button.setEnabled(can_regenerate)
        self.edit_button.setEnabled(can_edit)
