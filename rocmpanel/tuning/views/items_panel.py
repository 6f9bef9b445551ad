"""The Tuning tab's items: every tuning snippet the guide hands out, answered, and the
settings ROCm users need; searchable, each with what it really does, the verdict, what to
use instead and the sources. An item with a preset setting can be added to a preset."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.report import report
from rocmpanel.jobs.preset_text import source_text
from rocmpanel.tuning.items import TuningItem, load_items, search
from rocmpanel.tuning.views.preset_details import linked_html

#: What a verdict says. "use" names the preset setting, never the snippet: an item titled
#: "X is not what you think" must not read "Useful" (the snippet is not what is useful).
VERDICTS = {
    "use": QT_TRANSLATE_NOOP("items_panel", "A preset setting does what you want: {setting}"),
    "not_useful": QT_TRANSLATE_NOOP("items_panel", "Not useful on ROCm"),
    "caution": QT_TRANSLATE_NOOP("items_panel", "Use with care"),
}


def verdict_text(item: TuningItem) -> str:
    known = VERDICTS.get(item.verdict)
    text = translate("items_panel", known) if known is not None else item.verdict
    setting = (
        f"{item.setting[0]} {item.setting[1]}"
        if item.setting
        else translate("items_panel", "see below")
    )
    return text.format(setting=setting)


def sources_text(item: TuningItem) -> list[str]:
    """Each source in full (a catalogue key such as "pt_tune" becomes its text)."""
    return [source_text(source) for source in item.sources]


def _sections(item: TuningItem) -> list[tuple[str, str]]:
    return [
        (translate("items_panel", "The guide says"), item.guide_says.strip()),
        (translate("items_panel", "What it really does"), item.what_it_does.strip()),
        (translate("items_panel", "What to use instead"), item.instead.strip()),
    ]


def describe_item(item: TuningItem) -> str:
    """An item as plain text (the preset editor's "?")."""
    parts = [
        item.title,
        translate("items_panel", "Verdict: {verdict}").format(verdict=verdict_text(item)),
    ]
    if item.snippet.strip():
        parts.append(
            translate("items_panel", "Snippet: {snippet}").format(snippet=item.snippet.strip())
        )
    parts += [f"{label}: {text}" for label, text in _sections(item) if text]
    if item.sources:
        parts.append(
            translate("items_panel", "Sources: {sources}").format(
                sources="; ".join(sources_text(item))
            )
        )
    return "\n\n".join(parts)


def item_html(item: TuningItem) -> str:
    """An item as the details pane shows it."""
    esc = html.escape

    def field(label: str, text: str) -> str:
        return f"<p><b>{esc(label)}:</b> {esc(text)}</p>"

    out = [f"<h3>{esc(item.title)}</h3>"]
    if item.snippet.strip():
        out.append(f"<pre>{esc(item.snippet.strip())}</pre>")
    out.append(field(translate("items_panel", "Verdict"), verdict_text(item)))
    out += [field(label, text) for label, text in _sections(item) if text]
    if item.setting is not None:
        kind, key = item.setting
        out.append(field(translate("items_panel", "Preset setting"), f"{kind} {key}"))
    where = ", ".join(item.archs) if item.archs else translate("items_panel", "no AMD GPU")
    out.append(field(translate("items_panel", "Has an effect on"), where))
    if item.torch.strip():
        out.append(field(translate("items_panel", "Torch"), item.torch.strip()))
    if item.sources:
        listed = "".join(f"<li>{linked_html(source)}</li>" for source in sources_text(item))
        sources = esc(translate("items_panel", "Sources"))
        out.append(f"<p><b>{sources}:</b></p><ul>{listed}</ul>")
    return "".join(out)


class ItemsPanel(QWidget):
    """Search box, the matching items, and the chosen one's details. ``add_requested``
    carries (kind, key) of the setting to add to a preset."""

    add_requested = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.items: Sequence[TuningItem] = ()
        self.search_edit = QLineEdit(self)
        self.search_edit.setPlaceholderText(
            translate(
                "ItemsPanel",
                "Search the guide's snippets and the ROCm settings (e.g. flash, 碎片, tf32)",
            )
        )
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(self._on_search_edit_text_changed)
        search_label = QLabel(translate("ItemsPanel", "&Search:"), self)
        search_label.setBuddy(self.search_edit)
        self.list = QListWidget(self)
        self.list.setAccessibleName(translate("ItemsPanel", "Tuning items"))
        self.list.currentItemChanged.connect(self._on_list_current_changed)
        self.details = QTextBrowser(self)
        self.details.setOpenExternalLinks(True)
        self.count_label = QLabel(self)
        self.add_button = QPushButton(translate("ItemsPanel", "A&dd to preset…"), self)
        self.add_button.setEnabled(False)
        self.add_button.clicked.connect(lambda _checked=False: self.add_selected())
        top = QHBoxLayout()
        top.addWidget(search_label)
        top.addWidget(self.search_edit, 1)
        top.addWidget(self.count_label)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.list)
        split.addWidget(self.details)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addLayout(bottom)
        try:
            self.items = load_items()
        except PanelError as exc:  # a broken resource: say so, keep the tab
            self.details.setPlainText(
                report(exc, translate("ItemsPanel", "Reading the tuning items"))
            )
        self.filter("")

    def filter(self, text: str) -> list[TuningItem]:
        """Show the items matching ``text`` (every word must match; "" = all)."""
        found = search(self.items, text)
        self.list.clear()
        for item in found:
            title = (
                translate("ItemsPanel", "{title} — not useful on ROCm").format(title=item.title)
                if item.verdict == "not_useful"
                else item.title
            )
            row = QListWidgetItem(title, self.list)
            row.setData(Qt.ItemDataRole.UserRole, item)
        self.count_label.setText(
            translate("ItemsPanel", "{shown} of {total}").format(
                shown=len(found), total=len(self.items)
            )
        )
        if found:
            self.list.setCurrentRow(0)
        else:
            self.details.setPlainText(
                translate("ItemsPanel", "No item matches “{text}”.").format(text=text)
                if text
                else translate("ItemsPanel", "No tuning items are available.")
            )
            self.add_button.setEnabled(False)
        return found

    def _item_at(self, row: int) -> TuningItem:
        item: TuningItem = self.list.item(row).data(Qt.ItemDataRole.UserRole)
        return item

    def shown_ids(self) -> list[str]:
        return [self._item_at(row).id for row in range(self.list.count())]

    def selected(self) -> TuningItem | None:
        row = self.list.currentRow()
        return self._item_at(row) if row >= 0 else None

    def select(self, ident: str) -> bool:
        for row in range(self.list.count()):
            if self._item_at(row).id == ident:
                self.list.setCurrentRow(row)
                return True
        return False

    @Slot(str)
    def _on_search_edit_text_changed(self, text: str) -> None:
        self.filter(text)

    @Slot()
    def _on_list_current_changed(self) -> None:
        item = self.selected()
        if item is None:
            return
        self.details.setHtml(item_html(item))
        self.add_button.setEnabled(item.setting is not None)
        self.add_button.setToolTip(
            ""
            if item.setting is not None
            else translate("ItemsPanel", "No preset setting does this.")
        )

    def add_selected(self) -> None:
        item = self.selected()
        if item is not None and item.setting is not None:
            self.add_requested.emit(*item.setting)
