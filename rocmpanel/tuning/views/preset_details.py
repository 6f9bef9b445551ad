"""One preset as the presets panel shows it: its description and archs, and each item with
its value, what it does, its source and its effect on THIS machine. An item that does
nothing here is greyed and says why ("no effect here: ..."), never applied silently."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.envvars.checks import current_platform
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.presets import Effect, Preset, Target, item_effects
from rocmpanel.tuning.views.preset_editor import format_value

GREY = QColor("#8a8a8a")
NOTHING_SET = "This preset sets nothing: jobs run as they would without one."


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


def effect_row(effect: Effect) -> QTreeWidgetItem:
    """The tree row of one item; greyed when it does nothing on the target."""
    item = effect.item
    here = "applies" if effect.applies else f"no effect here: {effect.note}"
    if effect.applies and effect.note:
        here = f"applies ({effect.note})"
    what = item.why or "(no description)"
    if item.source:
        what += f"\nSource: {item.source}"
    label = item.key if item.kind == "env" else f"torch: {item.key}"
    row = QTreeWidgetItem([label, format_value(item.value), here, what])
    row.setToolTip(2, here)
    row.setToolTip(3, what)
    if not effect.applies:
        for column in range(4):
            row.setForeground(column, QBrush(GREY))
    row.setData(
        3,
        Qt.ItemDataRole.UserRole,
        f"{label} = {format_value(item.value)}: {what}\nOn this machine: {here}",
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
        self.items_tree.setHeaderLabels(["Setting", "Value", "On this machine", "What it does"])
        self.items_tree.setRootIsDecorated(False)
        header = self.items_tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(2, 220)
        header.setStretchLastSection(True)
        self.items_tree.currentItemChanged.connect(self._on_items_tree_current_changed)
        self.item_detail = QLabel(self)
        self.item_detail.setWordWrap(True)
        self.item_detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
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
        if preset is None:
            self.title_label.setText("No preset selected." if any_listed else "")
            self.description_label.clear()
            self.archs_label.clear()
            return
        kind = "built in" if preset.builtin else f"your preset ({preset.path})"
        self.title_label.setText(f"{preset.name} — {kind}")
        self.description_label.setText(preset.description)
        self.archs_label.setText("Suits: " + ", ".join(preset.archs))
        try:
            effects = item_effects(preset, target)
        except Exception:
            effects = [Effect(item, True, "not checked") for item in preset.items()]
            self._fill(effects)
            raise
        self._fill(effects)

    def _fill(self, effects: list[Effect]) -> None:
        for effect in effects:
            self.items_tree.addTopLevelItem(effect_row(effect))
        first = self.items_tree.topLevelItem(0)
        if first is not None:
            self.items_tree.setCurrentItem(first)
        else:
            self.item_detail.setText(NOTHING_SET)

    @Slot()
    def _on_items_tree_current_changed(self) -> None:
        row = self.items_tree.currentItem()
        self.item_detail.setText(row.data(3, Qt.ItemDataRole.UserRole) if row else "")
