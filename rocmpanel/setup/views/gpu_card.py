"""A card showing one GPU: name, gfx target, VRAM, and its verdict badge (reason and source
on hover)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
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
#: The badge's word for each verdict (the status values are identifiers).
STATUS_WORDS = {
    VerdictStatus.SUPPORTED: QT_TRANSLATE_NOOP("GpuCard", "supported"),
    VerdictStatus.LIMITED: QT_TRANSLATE_NOOP("GpuCard", "limited"),
    VerdictStatus.OVERRIDE: QT_TRANSLATE_NOOP("GpuCard", "override"),
    VerdictStatus.UNSUPPORTED: QT_TRANSLATE_NOOP("GpuCard", "unsupported"),
    VerdictStatus.UNKNOWN: QT_TRANSLATE_NOOP("GpuCard", "unknown"),
}
#: Where a verdict's knowledge comes from, as the source line names it.
KNOWLEDGE_WORDS = {
    "official": QT_TRANSLATE_NOOP("GpuCard", "official"),
    "community": QT_TRANSLATE_NOOP("GpuCard", "community"),
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
        na = translate("GpuCard", "n/a")
        kind = (
            na
            if gpu.integrated is None
            else translate("GpuCard", "integrated")
            if gpu.integrated
            else translate("GpuCard", "discrete")
        )
        details = QLabel(
            translate(
                "GpuCard",
                "GPU {index} · {gfx} · {vram} VRAM · {kind}<br><span style='color: gray'>"
                "PCI {pci_id} at {bdf}<br>seen by {sources}</span>",
            ).format(
                index=index,
                gfx=gpu.gfx or "gfx " + na,
                vram=format_gib(gpu.vram_bytes),
                kind=kind,
                pci_id=gpu.pci_id or na,
                bdf=gpu.bdf or na,
                sources=", ".join(gpu.sources) or na,
            )
        )
        details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text = translate("GpuCard", STATUS_WORDS[verdict.status])
        if verdict.override:
            text += f": HSA_OVERRIDE_GFX_VERSION={verdict.override}"
        self.badge = QLabel(text)
        self.badge.setStyleSheet(badge_style(*BADGE_COLOURS[verdict.status]))
        tooltip = verdict.reason
        if verdict.source:
            # One source a line: each is the data's own text (shown as written).
            knowledge = verdict.knowledge
            knowledge = translate("GpuCard", KNOWLEDGE_WORDS.get(knowledge, knowledge))
            listed = "\n".join(verdict.sources) if verdict.sources else verdict.source
            tooltip += "\n\n" + translate("GpuCard", "Source ({knowledge}):").format(
                knowledge=knowledge
            )
            tooltip += "\n" + listed
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
            prefix = (
                translate("GpuCard", "Danger: {text}")
                if danger
                else translate("GpuCard", "Warning: {text}")
            )
            warning = QLabel(prefix.format(text=advice.text))
            warning.setWordWrap(True)
            warning.setToolTip(
                translate("GpuCard", "Source: {source}").format(source=advice.source)
            )
            warning.setStyleSheet("color: #b00020; font-weight: bold;" if danger else "")
            layout.addWidget(warning)
        layout.addStretch(1)
        self.verdict = verdict
        self.gpu = gpu
