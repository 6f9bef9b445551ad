"""The Multi-GPU tab: the GPUs jobs run on, how the GPUs are connected, a collective
(all-reduce) test over them, and launch scripts for a user's training on one or many
machines.

Pages: Topology · All-reduce test · Launch scripts. Above them a line says which GPUs jobs
run on (the status bar's GPU button chooses them) and, with one GPU or none, what still
works here.
"""

from __future__ import annotations

import html
from typing import ClassVar

from PySide6.QtCore import Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.gpu_picker import refresh_choice
from rocmpanel.multigpu.views.collective_panel import CollectivePanel
from rocmpanel.multigpu.views.launch_panel import LaunchPanel
from rocmpanel.multigpu.views.topology_panel import TopologyPanel

NO_GPU = QT_TRANSLATE_NOOP(
    "MultiGpuTab",
    "No AMD GPU is visible to ROCm here. The all-reduce test runs on the CPU (gloo, two "
    "processes) and launch scripts can be written for other machines.",
)
ONE_GPU = QT_TRANSLATE_NOOP(
    "MultiGpuTab",
    "One GPU is chosen for jobs. The topology shows how it is attached; the all-reduce "
    "test needs two (choose them with the GPU button in the status bar).",
)


class MultiGpuTab(QWidget):
    """Topology · All-reduce test · Launch scripts."""

    title: ClassVar[str] = "Multi-GPU"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.where = QLabel()
        self.where.setObjectName("multiGpuWhere")
        self.where.setWordWrap(True)
        self.pages = QTabWidget(self)
        self.topology = TopologyPanel(ctx, self)
        self.collective = CollectivePanel(ctx, self)
        self.launch = LaunchPanel(ctx, self)
        self.pages.addTab(self.topology, translate("MultiGpuTab", "&Topology"))
        self.pages.addTab(self.collective, translate("MultiGpuTab", "&All-reduce test"))
        self.pages.addTab(self.launch, translate("MultiGpuTab", "&Launch scripts"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.where)
        layout.addWidget(self.pages)
        ctx.gpu_choice.changed.connect(self.on_gpus_changed)
        self.refresh_where()

    @Slot()
    def refresh_where(self) -> None:
        """Say which GPUs jobs run on (as last read; none yet: a reading starts)."""
        choice = self.ctx.gpu_choice.choice
        if choice is None:
            self.where.setText(translate("MultiGpuTab", "Reading which GPUs jobs run on…"))
            refresh_choice(self.ctx)
            return
        text = translate("MultiGpuTab", "Jobs run on: <b>{gpus}</b>.").format(
            gpus=html.escape(choice.label)
        )
        if not choice.available:
            text += " " + translate("MultiGpuTab", NO_GPU)
        elif choice.count == 1:
            text += " " + translate("MultiGpuTab", ONE_GPU)
        notes = html.escape(" ".join(choice.notes))
        self.where.setText(text + (f" {notes}" if notes else ""))
        self.where.setToolTip(
            translate("MultiGpuTab", "Choose the GPUs with the GPU button in the status bar.")
        )

    @Slot()
    def on_gpus_changed(self) -> None:
        """The choice was read again, or the user chose other GPUs."""
        self.refresh_where()
        self.collective.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        refresh_choice(self.ctx)  # in the background: on_gpus_changed follows
        self.collective.refresh()
        super().showEvent(event)

    def shutdown(self) -> None:
        for page in (self.topology, self.collective, self.launch):
            stop = getattr(page, "shutdown", None)
            if callable(stop):
                stop()
