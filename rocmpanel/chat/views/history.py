"""The saved conversations: search, pick, new, export (Markdown or JSON), delete.

Every store call (the list, an export, a delete) goes through the tab's
:class:`~rocmpanel.chat.views.store_queue.StoreQueue`, off the GUI thread and in order.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.i18n import translate
from rocmpanel.chat.export import export_json, export_markdown
from rocmpanel.chat.store import ChatStore, Conversation
from rocmpanel.chat.views.store_queue import SavedChat, StoreQueue
from rocmpanel.gui.report import report

SEARCH_DELAY_MS = 200
TITLE_ROLE = Qt.ItemDataRole.UserRole + 1


class ConversationList(QWidget):
    """Emits ``opened(id)`` when a conversation is picked, ``new_requested()`` for New."""

    opened = Signal(int)
    new_requested = Signal()
    deleted = Signal(int)

    def __init__(self, store_queue: StoreQueue, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store_queue = store_queue
        self._items: dict[int, QListWidgetItem] = {}  # by conversation id, as shown
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.new_button = QPushButton(translate("ConversationList", "&New chat"))
        self.new_button.clicked.connect(self.new_requested)
        layout.addWidget(self.new_button)
        # Says when a damaged history file was moved aside and a new one started.
        self.notice_label = QLabel()
        self.notice_label.setWordWrap(True)
        self.notice_label.setStyleSheet("color: #ef6c00")
        self.notice_label.hide()
        layout.addWidget(self.notice_label)
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText(translate("ConversationList", "Search conversations"))
        self.search_edit.setClearButtonEnabled(True)
        layout.addWidget(self.search_edit)
        self.list = QListWidget()
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setUniformItemSizes(True)
        self.list.itemActivated.connect(self._on_item_activated)
        self.list.itemClicked.connect(self._on_item_activated)
        layout.addWidget(self.list, 1)
        row = QHBoxLayout()
        self.export_button = QPushButton(translate("ConversationList", "Export…"))
        self.export_button.setToolTip(
            translate("ConversationList", "Save the selected conversation as Markdown or JSON")
        )
        self.export_button.clicked.connect(self._export)
        self.delete_button = QPushButton(translate("ConversationList", "Delete"))
        self.delete_button.clicked.connect(self._delete)
        row.addWidget(self.export_button)
        row.addWidget(self.delete_button)
        layout.addLayout(row)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.refresh)
        self.search_edit.textChanged.connect(lambda _text: self._search_timer.start())
        self.refresh()

    def refresh(self, select: int | SavedChat | None = None) -> None:
        """Read the list again (after the writes asked before); select ``select`` (a saved
        chat: the id it has by then), else keep the selection the list has by then."""
        search = self.search_edit.text()
        self.store_queue.submit(
            translate("ConversationList", "Reading the chat history"),
            lambda store: (store.conversations(search), store.notice),
            lambda read: self._show(read[0], select, read[1]),
            self._show_error,
        )

    def touch(self, saved: SavedChat) -> None:
        """``saved`` was just written to: once the writes asked before are done (so a new
        conversation has its id), its item moves to the top with the new time. Bounded
        work, no read of the list; only a conversation the list does not show yet (a new
        one) makes it read the list again."""
        self.store_queue.submit(
            translate("ConversationList", "Updating the chat history"),
            lambda _store: None,
            lambda _none: self._touched(saved),
        )

    def _touched(self, saved: SavedChat) -> None:
        item = self._items.get(saved.id) if saved.id is not None else None
        if item is None:
            self.refresh(saved)
            return
        current = self.list.currentItem() is item
        row = self.list.row(item)
        if row > 0:
            self.list.takeItem(row)
            self.list.insertItem(0, item)
        item.setText(self._item_text(str(item.data(TITLE_ROLE)), time.time()))
        if current:
            self.list.setCurrentItem(item)

    @staticmethod
    def _item_text(title: str, updated: float) -> str:
        return f"{title}\n{time.strftime('%Y-%m-%d %H:%M', time.localtime(updated))}"

    def _show(
        self,
        conversations: list[Conversation],
        select: int | SavedChat | None,
        notice: str | None = None,
    ) -> None:
        self.show_notice(notice)
        current = select.id if isinstance(select, SavedChat) else select
        if current is None:
            current = self.selected_id()
        self.list.clear()
        self._items.clear()
        for conversation in conversations:
            item = QListWidgetItem(self._item_text(conversation.title, conversation.updated))
            item.setData(Qt.ItemDataRole.UserRole, conversation.id)
            item.setToolTip(conversation.model or conversation.title)
            self.list.addItem(item)
            self._items[conversation.id] = item
            item.setData(TITLE_ROLE, conversation.title)
            if conversation.id == current:
                self.list.setCurrentItem(item)
        self._update_buttons()

    def show_notice(self, notice: str | None) -> None:
        """Show what was done about a damaged history file (None: nothing was)."""
        if notice:
            self.notice_label.setText(notice)
            self.notice_label.setToolTip(notice)
        self.notice_label.setVisible(bool(notice))

    def _show_error(self, error: BaseException) -> None:
        self.list.clear()
        self._items.clear()
        item = QListWidgetItem()
        self.list.addItem(item)
        report(error, translate("ConversationList", "Reading the chat history"), label=item)
        self._update_buttons()

    def selected_id(self) -> int | None:
        item = self.list.currentItem()
        value = item.data(Qt.ItemDataRole.UserRole) if item else None
        return int(value) if isinstance(value, int) else None

    def _update_buttons(self) -> None:
        has = self.selected_id() is not None
        self.export_button.setEnabled(has)
        self.delete_button.setEnabled(has)

    def _on_item_activated(self, item: QListWidgetItem) -> None:
        value = item.data(Qt.ItemDataRole.UserRole)
        self._update_buttons()
        if isinstance(value, int):
            self.opened.emit(value)

    def export_to(self, conversation_id: int, path: Path) -> None:
        """Write the conversation to ``path`` (JSON for .json, Markdown otherwise), off the
        GUI thread; a failure is shown in a dialog."""
        doing = translate("ConversationList", "Exporting the conversation")
        self.store_queue.submit(
            doing,
            lambda store: export_conversation(store, conversation_id, path),
            on_error=lambda error: report(error, doing, dialog_parent=self),
        )

    def _export(self) -> None:
        conversation_id = self.selected_id()
        if conversation_id is None:
            return
        path, chosen = QFileDialog.getSaveFileName(
            self,
            translate("ConversationList", "Export conversation"),
            str(Path.home() / "conversation.md"),
            "Markdown (*.md);;JSON (*.json)",
        )
        if not path:
            return
        target = Path(path)
        if not target.suffix:
            target = target.with_suffix(".json" if "JSON" in chosen else ".md")
        self.export_to(conversation_id, target)

    def _delete(self) -> None:
        conversation_id = self.selected_id()
        if conversation_id is None:
            return
        answer = QMessageBox.question(
            self,
            translate("ConversationList", "Delete conversation"),
            translate("ConversationList", "Delete this conversation?"),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        doing = translate("ConversationList", "Deleting the conversation")
        self.store_queue.submit(
            doing,
            lambda store: store.delete(conversation_id),
            lambda _none: self._on_deleted(conversation_id),
            lambda error: report(error, doing, dialog_parent=self),
        )

    def _on_deleted(self, conversation_id: int) -> None:
        self.deleted.emit(conversation_id)
        self.refresh()


def export_conversation(store: ChatStore, conversation_id: int, path: Path) -> None:
    """Write a saved conversation to ``path``: JSON for .json, Markdown otherwise (blocking:
    run it off the GUI thread)."""
    conversation = store.get(conversation_id)
    text = export_json(conversation) if path.suffix == ".json" else export_markdown(conversation)
    write_atomic(path, text.encode("utf-8"))
