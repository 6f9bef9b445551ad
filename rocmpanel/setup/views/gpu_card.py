"""A card showing one GPU: name, gfx target, VRAM, and its verdict badge (reason and source
on hover)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from rocmpanel.base.units import format_gib
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.setup.compat import Verdict, VerdictStatus
from rocmpanel.setup.views.badges import badge_style

BADGE_COLOURS = {
    VerdictStatus.SUPPORTED: ("#1b5e20", "#c8e6c9"),
    VerdictStatus.LIMITED: ("#5d4037", "#ffe0b2"),
    VerdictStatus.OVERRIDE: ("#4a148c", "#e1bee7"),
    VerdictStatus.UNSUPPORTED: ("#b71c1c", "#ffcdd2"),
    VerdictStatus.UNKNOWN: ("#37474f", "#eceff1"),
}


class GpuCard(QFrame):
    """One GPU and its verdict."""

    def __init__(
        self, gpu: GpuInfo, verdict: Verdict, index: int, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("GpuCard")
        self.setMinimumWidth(300)
        self.setMaximumWidth(460)
        layout = QVBoxLayout(self)
        name = QLabel(f"<b>{gpu.name}</b>")
        name.setWordWrap(True)
        name.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        kind = "n/a" if gpu.integrated is None else "integrated" if gpu.integrated else "discrete"
        details = QLabel(
            f"GPU {index} · {gpu.gfx or 'gfx n/a'} · {format_gib(gpu.vram_bytes)} VRAM · {kind}"
            f"<br><span style='color: gray'>PCI {gpu.pci_id or 'n/a'} at {gpu.bdf or 'n/a'}"
            f"<br>seen by {', '.join(gpu.sources) or 'n/a'}</span>"
        )
        details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text = verdict.status.value
        if verdict.override:
            text += f": HSA_OVERRIDE_GFX_VERSION={verdict.override}"
        self.badge = QLabel(text)
        self.badge.setStyleSheet(badge_style(*BADGE_COLOURS[verdict.status]))
        tooltip = verdict.reason
        if verdict.source:
            tooltip += f"\n\nSource ({verdict.knowledge}): {verdict.source}"
        self.badge.setToolTip(tooltip)
        self.setToolTip(tooltip)
        reason = QLabel(verdict.reason)
        reason.setWordWrap(True)
        layout.addWidget(name)
        layout.addWidget(details)
        layout.addWidget(self.badge, alignment=Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(reason)
        for advice in verdict.advice:
            danger = advice.severity == "danger"
            warning = QLabel(("Danger: " if danger else "Warning: ") + advice.text)
            warning.setWordWrap(True)
            warning.setToolTip(f"Source: {advice.source}")
            warning.setStyleSheet("color: #b00020; font-weight: bold;" if danger else "")
            layout.addWidget(warning)
        layout.addStretch(1)
        self.verdict = verdict
        self.gpu = gpu
