"""One preset as the presets panel shows it: its description and archs, and each item with
its value, what it does, its source and its effect on THIS machine. An item that does
nothing here is greyed and says why ("no effect here: ..."), never applied silently."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QRect, QSize, Qt, Slot
from PySide6.QtGui import QBrush, QColor, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.envvars.checks import current_platform
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.preset_text import (
    NOT_CHECKED,
    archs_text,
    effect_text,
    source_text,
    value_text,
)
from rocmpanel.jobs.presets import Effect, Item, Preset, Target, item_effects

GREY = QColor("#8a8a8a")
#: An effect that could not be checked here: not greyed (it may apply), but marked.
UNCHECKED = QColor("#8a5a00")
NO_DESCRIPTION = QT_TRANSLATE_NOOP("PresetDetails", "No description.")
#: An address ends at a space, a bracket or quote, or a character outside ASCII (a
#: translated sentence may follow it with no space: "…{source}。").
URL_RE = re.compile(r"https?://[^\s<>\"')\]\x80-\U0010ffff]+")
NOTHING_SET = QT_TRANSLATE_NOOP(
    "PresetDetails", "This preset sets nothing: jobs run as they would without one."
)


def machine_target(ctx: AppContext) -> Target:
    """What the effects depend on: the first discrete GPU, this platform, and the workload
    torch when a probe has run (None where unknown)."""
    inventory = ctx.inventory.current
    gpus = inventory.discrete_first() if inventory is not None else ()
    gfx = gpus[0].gfx if gpus else None
    data = ctx.probe_result.data or {}
    torch_version = data.get("torch_version") or None
    hip = data.get("torch_hip") or None
    hip_version = ".".join(str(hip).split(".")[:2]) if hip else None
    return Target(current_platform(), gfx or None, torch_version, hip_version)


def what_text(item: Item) -> str:
    """What the item does and where that is written (the source in full)."""
    what = item.why or translate("PresetDetails", NO_DESCRIPTION)
    if not item.source:
        return what
    return translate("preset_details", "{what}\nSource: {source}").format(
        what=what, source=source_text(item.source)
    )


def linked_html(text: str) -> str:
    """``text`` as rich text, its URLs clickable and every line kept."""
    parts: list[str] = []
    last = 0
    for match in URL_RE.finditer(text):
        parts.append(html.escape(text[last : match.start()]))
        url = html.escape(match.group(0))
        parts.append(f'<a href="{url}">{url}</a>')
        last = match.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts).replace("\n", "<br>")


def effect_row(effect: Effect) -> QTreeWidgetItem:
    """The tree row of one item, cells wrapped in full; greyed when it does nothing on the
    target, italic and marked when its effect could not be checked here."""
    item = effect.item
    here = effect_text(effect)
    what = what_text(item)
    label = (
        item.key
        if item.kind == "env"
        else translate("preset_details", "torch: {key}").format(key=item.key)
    )
    value = value_text(item)
    row = QTreeWidgetItem([label, value, here, what])
    for column, text in enumerate((label, value, here, what)):
        row.setToolTip(column, text)
        row.setTextAlignment(column, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    if not effect.applies:
        for column in range(4):
            row.setForeground(column, QBrush(GREY))
    elif not effect.checked or effect.note.startswith(NOT_CHECKED):  # as effect_text marks it
        font = row.font(2)
        font.setItalic(True)
        row.setFont(2, font)
        row.setForeground(2, QBrush(UNCHECKED))
    detail = translate("preset_details", "{setting} = {value}: {what}\nOn this machine: {here}")
    row.setData(
        3,
        Qt.ItemDataRole.UserRole,
        detail.format(setting=label, value=value, what=what, here=here),
    )
    return row


class PresetDetails(QWidget):
    """Title, description, archs, the items tree, and the chosen item in full below it
    (the tree's cells are cut to one line)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title_label = QLabel(self)
        self.title_label.setStyleSheet("font-weight: bold;")
        self.description_label = QLabel(self)
        self.description_label.setWordWrap(True)
        self.archs_label = QLabel(self)
        self.items_tree = QTreeWidget(self)
        self.items_tree.setHeaderLabels(
            [
                translate("PresetDetails", "Setting"),
                translate("PresetDetails", "Value"),
                translate("PresetDetails", "On this machine"),
                translate("PresetDetails", "What it does"),
            ]
        )
        self.items_tree.setRootIsDecorated(False)
        # Cells wrap in full (no "…"): rows grow to their text, recomputed on a resize.
        self.items_tree.setWordWrap(True)
        self.items_tree.setUniformRowHeights(False)
        self.items_tree.setTextElideMode(Qt.TextElideMode.ElideNone)
        header = self.items_tree.header()
        # A name is one word that cannot wrap (TORCH_BLAS_PREFER_HIPBLASLT): its column
        # fits it; the others wrap.
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        for column, width in ((1, 150), (2, 220)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, width)
        header.setStretchLastSection(True)
        header.sectionResized.connect(lambda *_args: self.fit_rows())
        self.items_tree.currentItemChanged.connect(self._on_items_tree_current_changed)
        self.detail_text = ""  # the chosen item in full, as plain text
        self.item_detail = QLabel(self)
        self.item_detail.setWordWrap(True)
        self.item_detail.setTextFormat(Qt.TextFormat.RichText)
        self.item_detail.setOpenExternalLinks(True)
        self.item_detail.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title_label)
        layout.addWidget(self.description_label)
        layout.addWidget(self.archs_label)
        layout.addWidget(self.items_tree, 1)
        layout.addWidget(self.item_detail)

    def show_preset(self, preset: Preset | None, target: Target, any_listed: bool = True) -> None:
        """Show ``preset`` (None: nothing chosen) with its effects on ``target``; raises
        what item_effects raises, after showing the items unchecked."""
        self.items_tree.clear()
        self.item_detail.clear()
        self.detail_text = ""
        if preset is None:
            self.title_label.setText(
                translate("PresetDetails", "No preset selected.") if any_listed else ""
            )
            self.description_label.clear()
            self.archs_label.clear()
            return
        title = (
            translate("PresetDetails", "{name} — built in").format(name=preset.name)
            if preset.builtin
            else translate("PresetDetails", "{name} — your preset ({path})").format(
                name=preset.name, path=preset.path
            )
        )
        self.title_label.setText(title)
        self.description_label.setText(
            preset.description or translate("PresetDetails", NO_DESCRIPTION)
        )
        self.archs_label.setText(
            translate("PresetDetails", "Suits: {archs}").format(archs=archs_text(preset.archs))
        )
        try:
            effects = item_effects(preset, target)
        except Exception:
            effects = [
                Effect(
                    item,
                    True,
                    translate("PresetDetails", "the effects could not be checked"),
                    checked=False,
                )
                for item in preset.items()
            ]
            self._fill(effects)
            raise
        self._fill(effects)

    def fit_rows(self) -> None:
        """Give each row the height of its longest wrapped cell at the columns' widths
        (QTreeView would keep the height it measured first, cutting text off)."""
        tree = self.items_tree
        header = tree.header()
        metrics = QFontMetrics(tree.font())
        margin = 2 * (tree.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 2)
        last = tree.columnCount() - 1
        widths = [header.sectionSize(column) for column in range(last + 1)]
        # The stretched last column takes what the others leave (its resize may be pending).
        if header.stretchLastSection():
            left = tree.viewport().width() - sum(widths[:last])
            widths[last] = max(header.minimumSectionSize(), left)
        for index in range(tree.topLevelItemCount()):
            row = tree.topLevelItem(index)
            if row is None:
                continue
            height = max(
                metrics.boundingRect(
                    QRect(0, 0, max(20, width - margin), 100_000),
                    Qt.TextFlag.TextWordWrap,
                    row.text(column),
                ).height()
                for column, width in enumerate(widths)
            )
            for column, width in enumerate(widths):  # a size with a width, or it is unused
                row.setSizeHint(column, QSize(width, height + 6))
        tree.doItemsLayout()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_rows()

    def _fill(self, effects: list[Effect]) -> None:
        for effect in effects:
            self.items_tree.addTopLevelItem(effect_row(effect))
        # The value column is as wide as its longest word (garbage_collection_threshold),
        # so every value wraps between words, never inside one.
        metrics = QFontMetrics(self.items_tree.font())
        words = [w for e in effects for w in value_text(e.item).split()] or [""]
        widest = max(metrics.horizontalAdvance(word) for word in words) + 16
        self.items_tree.header().resizeSection(1, min(max(widest, 150), 320))
        self.fit_rows()
        first = self.items_tree.topLevelItem(0)
        if first is not None:
            self.items_tree.setCurrentItem(first)
        else:
            self.detail_text = translate("PresetDetails", NOTHING_SET)
            self.item_detail.setText(self.detail_text)

    @Slot()
    def _on_items_tree_current_changed(self) -> None:
        row = self.items_tree.currentItem()
        self.detail_text = row.data(3, Qt.ItemDataRole.UserRole) if row else ""
        self.item_detail.setText(linked_html(self.detail_text))
