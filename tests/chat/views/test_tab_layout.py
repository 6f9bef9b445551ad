"""The Chat tab's model panel in a small window: every control can be reached (it scrolls)."""

from __future__ import annotations

import os

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QWidget,
)

from rocmpanel.base.enums import Precision
from rocmpanel.base.settings import Settings
from rocmpanel.chat.installed import Installed
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager

CONTROLS = (QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit, QPlainTextEdit)


def test_every_model_panel_control_is_reachable_at_1024x700(qtbot, tmp_path) -> None:
    from rocmpanel.chat.views.tab import ChatTab

    ctx = AppContext(Settings.load(), JobManager(), lambda _message: None)
    ctx.install_packages = lambda _profile: None
    tab = ChatTab(ctx)
    qtbot.addWidget(tab)
    tab.resize(1024, 700)
    tab.show()
    qtbot.waitExposed(tab)
    panel, box = tab.model_panel, tab.model_panel.packages_box
    # The tallest state: the check on show is over, and it found an empty Python (the
    # message and the install button take rows of their own).
    qtbot.waitUntil(lambda: box.installed is not None or bool(box.error), timeout=30_000)
    box.installed = Installed("python", "3.12.0", {})
    panel.set_precision(Precision.NF4)
    assert box.label.isVisibleTo(panel) and box.install_button.isVisibleTo(panel)
    scroll = panel.parentWidget().parentWidget()
    assert isinstance(scroll, QScrollArea) and scroll.widget() is panel
    # Taller than the window: the panel scrolls rather than squeezing or cutting controls.
    assert panel.sizeHint().height() > scroll.viewport().height()
    qtbot.waitUntil(lambda: scroll.verticalScrollBar().maximum() > 0)  # laid out again
    # Nothing is cut at the side: the panel is as wide as the visible part.
    assert panel.width() <= scroll.viewport().width()
    controls = [
        w for w in panel.findChildren(QWidget) if isinstance(w, CONTROLS) and w.isVisibleTo(panel)
    ]
    assert len(controls) >= 20
    for control in controls:
        # Scroll the whole control into view (ensureWidgetVisible would show only a text
        # box's cursor), then check it lies entirely within the visible part.
        centre = control.mapTo(panel, control.rect().center())
        scroll.ensureVisible(centre.x(), centre.y(), 0, control.height() // 2 + 1)
        where = QRect(control.mapTo(scroll.viewport(), QPoint(0, 0)), control.size())
        assert scroll.viewport().rect().contains(where), (control, where)
    if os.environ.get("ROCMPANEL_SHOT"):  # a look at it: ROCMPANEL_SHOT=file.png
        scroll.verticalScrollBar().setValue(0)
        tab.grab().save(os.environ["ROCMPANEL_SHOT"])
