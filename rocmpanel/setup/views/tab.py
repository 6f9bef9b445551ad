"""The Setup tab: GPUs with compatibility verdicts, the stack checklist with fixes, the
workload Python's torch build, pasted-output analysis and a Markdown report.

The machine comes from the app's one inventory (``ctx.inventory``, detected off the GUI
thread): the tab shows "Detecting GPUs…" until it arrives, and its Refresh asks the
inventory to detect again. Nothing starts before the tab's first paint: detection and the
probe begin right after it, and the logic behind the verdicts is imported when first used.
Pasted output is analysed in the background (a long paste takes a while to parse); the
probe runs as a job in the workload Python. Fixes that set or unset a variable are emitted
as ``env_change_requested`` for the environment editor; fixes that need privileges are
shown and copied, never run. A diagnosis of pasted output is another machine's: it is
labelled so, and its fixes are commands to copy for that machine, never changes staged
here; the same holds in demo mode (``ctx.demo``), whose GPUs are recordings. Every error
reaches the user through :func:`rocmpanel.gui.report.report`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, ClassVar

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication, QKeySequence, QPaintEvent, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.machine.gpu_model import HostFacts, SystemInfo
from rocmpanel.setup.views.checklist_box import ChecklistBox, clear_grid
from rocmpanel.setup.views.probe_box import ProbeBox

if TYPE_CHECKING:
    # The logic behind the views (verdicts, checks, parsers) is imported when first used,
    # after the window's first paint: the tab shows "Detecting GPUs…" until then.
    from rocmpanel.envvars.views.editor import EnvEditor
    from rocmpanel.machine.inventory import Inventory
    from rocmpanel.setup.captured import Captured
    from rocmpanel.setup.checklist import Check
    from rocmpanel.setup.probe_report import ProbeReport
    from rocmpanel.setup.report import DoctorReport

log = logging.getLogger(__name__)

# Marked for translation here, translated where shown (``translate("SetupTab", ...)``).
_DETECTING = QT_TRANSLATE_NOOP("SetupTab", "Detecting GPUs…")
_ANALYSING = QT_TRANSLATE_NOOP("SetupTab", "Analysing pasted output…")
PASTED_HEADING = QT_TRANSLATE_NOOP("SetupTab", "Pasted output — another machine")
DEMO_HEADING = QT_TRANSLATE_NOOP("SetupTab", "Demo GPUs — recorded, not this machine")
DEMO_NOTE = QT_TRANSLATE_NOOP(
    "SetupTab",
    "Demo mode: these GPUs are recordings of real machines bundled with rocmpanel. Fixes "
    "are shown as commands to copy; nothing on this machine is changed.",
)
NO_GPU_DEMO = QT_TRANSLATE_NOOP(
    "SetupTab",
    "No AMD GPU was found. The checklist below still applies; a demo shows the panel "
    "on recorded GPUs.",
)


def _analyse_texts(texts: list[str], rocm_version: str | None, os_name: str | None) -> Captured:
    """Parse pasted outputs (on a pool thread, which also pays for importing the parsers)."""
    from rocmpanel.setup import captured

    return captured.analyse_texts(texts, rocm_version, os_name)


class SetupTab(QWidget):
    """GPUs, verdicts, checklist, probe; other pages (the env editor) via :meth:`add_page`."""

    title: ClassVar[str] = "Setup"
    env_change_requested = Signal(str, object)  # name, value (None = unset)
    report_changed = Signal(object)  # DoctorReport, whenever the shown report changes

    #: Whether Refresh (and the first paint) also probes the workload Python (a child
    #: process importing torch).
    probe_on_refresh = True

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.report: DoctorReport | None = None
        self._system: SystemInfo | None = None
        self._host = HostFacts()
        self._probe: ProbeReport | None = None
        self._captured: tuple[str, ...] = ()
        self._sources: tuple[str, ...] = ()  # where the pasted output came from
        self._pending_sources: tuple[str, ...] = ()  # ... of the analysis running
        self._analysis = 0  # the latest analysis asked for; older results are dropped
        self._busy: str | None = None  # what the tab is waiting for (_DETECTING, _ANALYSING)
        self._painted = False
        self._closing = False
        self._build()
        self._add_env_editor()
        refresh_key = QShortcut(QKeySequence(QKeySequence.StandardKey.Refresh), self)
        refresh_key.activated.connect(self.refresh)
        inventory = ctx.inventory
        inventory.changed.connect(self._on_inventory_changed)
        inventory.failed.connect(self._on_inventory_failed)
        if inventory.current is not None:
            self._on_inventory_changed(inventory.current)
        else:
            self._set_busy(_DETECTING)

    def paintEvent(self, event: QPaintEvent) -> None:
        """After the tab's first paint, detect the machine (unless that ran) and probe the
        workload Python: starting either before would hold up the window's first frame."""
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            # Queued, so the frame being painted is finished before anything starts.
            QTimer.singleShot(0, self, self._after_first_paint)

    @Slot()
    def _after_first_paint(self) -> None:
        if self._closing:  # closed right after its first paint (the smoke test)
            return
        self.ctx.inventory.ensure()
        if self.probe_on_refresh:
            self.probe_box.start()

    # ---- layout -------------------------------------------------------------------------

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.pages = QTabWidget()
        outer.addWidget(self.pages)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        overview = QWidget()
        scroll.setWidget(overview)
        self.pages.addTab(scroll, translate("SetupTab", "Overview"))
        layout = QVBoxLayout(overview)

        bar = QHBoxLayout()
        self.heading = QLabel("<b>{}</b>".format(translate("SetupTab", "This machine")))
        bar.addWidget(self.heading)
        bar.addStretch(1)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(160)
        self.busy.setFormat("")
        self.busy_label = QLabel("")
        bar.addWidget(self.busy_label)
        bar.addWidget(self.busy)
        self.back_button = QPushButton(translate("SetupTab", "&Back to this machine"))
        self.back_button.clicked.connect(self._on_back_clicked)
        self.refresh_button = QPushButton(translate("SetupTab", "&Refresh"))
        self.refresh_button.setToolTip(translate("SetupTab", "Detect again (F5)"))
        self.refresh_button.clicked.connect(self.refresh)
        self.paste_button = QPushButton(translate("SetupTab", "&Analyse pasted output…"))
        self.paste_button.clicked.connect(self._on_paste_clicked)
        self.copy_button = QPushButton(translate("SetupTab", "&Copy report"))
        self.copy_button.setToolTip(
            translate("SetupTab", "Copy a Markdown report for a forum post")
        )
        self.copy_button.clicked.connect(self.copy_report)
        for button in (self.back_button, self.refresh_button, self.paste_button, self.copy_button):
            bar.addWidget(button)
        layout.addLayout(bar)

        self.system_label = QLabel("")
        self.system_label.setWordWrap(True)
        self.system_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.system_label)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #b71c1c;")
        layout.addWidget(self.error_label)

        self.gpu_box = QGroupBox(translate("SetupTab", "GPUs"))
        self.gpu_grid = QGridLayout(self.gpu_box)
        self.gpu_grid.setColumnStretch(3, 1)
        layout.addWidget(self.gpu_box)

        self.check_box = ChecklistBox()
        self.check_box.fix_clicked.connect(self._apply_fix)
        self.check_grid = self.check_box.grid
        layout.addWidget(self.check_box)

        self.probe_box = ProbeBox(self.ctx)
        self.probe_box.probed.connect(self._on_probe_box_probed)
        layout.addWidget(self.probe_box)

        self.notes_label = QLabel("")
        self.notes_label.setWordWrap(True)
        layout.addWidget(self.notes_label)
        layout.addStretch(1)
        self._set_busy(None)

    def add_page(self, widget: QWidget, title: str) -> None:
        """Add a page (e.g. the environment-variable editor) after Overview."""
        self.pages.addTab(widget, title)

    def _add_env_editor(self) -> None:
        """The Environment page; the checklist's env fixes are staged there for review.

        The editor itself is built when the page is first opened (or a fix is sent to it):
        it reads the catalogue and every store, which start-up need not wait for.
        """
        self._env_page = QWidget()
        self._env_layout = QVBoxLayout(self._env_page)
        self._env_layout.setContentsMargins(0, 0, 0, 0)
        self._env_editor: EnvEditor | None = None
        self.add_page(self._env_page, translate("SetupTab", "Environment"))
        self.pages.currentChanged.connect(self._on_pages_current_changed)
        self.env_change_requested.connect(self._on_env_change_requested)

    @property
    def env_editor(self) -> EnvEditor:
        """The EnvEditor of the Environment page (built on first use)."""
        if self._env_editor is None:
            from rocmpanel.envvars.views.editor import EnvEditor

            self._env_editor = EnvEditor(self.ctx)
            self._env_editor.applied.connect(self.refresh)
            self._env_layout.addWidget(self._env_editor)
        return self._env_editor

    @Slot(int)
    def _on_pages_current_changed(self, _index: int) -> None:
        if self.pages.currentWidget() is self._env_page:
            self.env_editor  # noqa: B018 (builds it)

    @Slot(str, object)
    def _on_env_change_requested(self, name: str, value: str | None) -> None:
        self.env_editor.propose(name, value)
        self.pages.setCurrentWidget(self._env_page)

    # ---- the machine -------------------------------------------------------------------

    @Slot()
    def refresh(self) -> None:
        """Back to this machine: detect it again (the app's inventory, off the GUI thread)
        and probe the workload Python."""
        self._captured = ()
        self._analysis += 1  # a pending analysis of pasted output no longer matters
        self.error_label.setText("")
        self._set_busy(_DETECTING)
        self.ctx.inventory.refresh()
        if self.probe_on_refresh:
            self.probe_box.start()

    @Slot(object)
    def _on_inventory_changed(self, inventory: Inventory) -> None:
        self._system, self._host = inventory.system, inventory.host
        if self._captured or self._busy == _ANALYSING:
            return  # pasted output is shown (or coming); Back shows this machine
        self._set_busy(None)
        self._rebuild()

    @Slot(object)
    def _on_inventory_failed(self, error: BaseException) -> None:
        if self._busy == _DETECTING:
            self._set_busy(None)
        report(error, translate("SetupTab", "Detecting GPUs"), label=self.error_label)

    def _set_busy(self, text: str | None) -> None:
        self._busy = text
        self.busy.setVisible(text is not None)
        self.busy_label.setText(translate("SetupTab", text) if text else "")
        self.refresh_button.setEnabled(text != _DETECTING)
        self.back_button.setVisible(bool(self._captured))

    # ---- probe --------------------------------------------------------------------------

    @Slot(object)
    def _on_probe_box_probed(self, probe: ProbeReport) -> None:
        self._probe = probe
        if self._captured:
            self._show_probe()  # the pasted output's own probe, if it had one, stays shown
        else:
            self._rebuild()

    def _show_probe(self) -> None:
        probe = self.report.probe if self.report else self._probe
        if probe is not None:
            self.probe_box.show_probe(probe, pasted=bool(self._captured))

    # ---- pasted output ------------------------------------------------------------------

    def analyse_texts(
        self,
        texts: list[str],
        rocm_version: str | None = None,
        os_name: str | None = None,
        sources: tuple[str, ...] = (),
    ) -> None:
        """Show the system that pasted outputs describe (``sources``: where they came from,
        such as "pasted text" and file names). Parsing runs in the background;
        ``report_changed`` follows, or the message in the tab's error line when the text
        is not recognised."""
        self._analyse(texts, rocm_version, os_name, warn=False, sources=sources)

    def _analyse(
        self,
        texts: list[str],
        rocm_version: str | None,
        os_name: str | None,
        *,
        warn: bool,
        sources: tuple[str, ...] = (),
    ) -> None:
        self._analysis += 1
        self._pending_sources = sources
        ticket = self._analysis
        self.error_label.setText("")
        self._set_busy(_ANALYSING)
        run_in_background(
            lambda: _analyse_texts(texts, rocm_version, os_name),
            lambda captured, error: self._on_analysed(ticket, warn, captured, error),
            owner=self,
            what="analysing pasted output",
        )

    def _on_analysed(
        self, ticket: int, warn: bool, captured: Captured | None, error: BaseException | None
    ) -> None:
        if ticket != self._analysis:
            return  # Refresh, Back or a newer paste came first
        if captured is None:
            self._set_busy(self._machine_state())
            message = report(
                error
                or PanelError(translate("SetupTab", "The pasted output could not be analysed.")),
                translate("SetupTab", "Analysing pasted output"),
                label=self.error_label,
            )
            shown = self.report.system if self.report else None
            if not self._captured and shown is not self._system:
                self._rebuild()  # the inventory changed during the analysis
            if warn:
                QMessageBox.warning(self, translate("SetupTab", "Analyse pasted output"), message)
            return
        from rocmpanel.setup.report import build_report

        self._set_busy(None)
        self._captured = tuple(k.value for k in captured.kinds)
        self._sources = self._pending_sources
        self.report = build_report(
            captured.system, captured.host, captured.probe, self._captured, other_machine=True
        )
        self._render()

    @Slot()
    def _on_paste_clicked(self) -> None:
        from rocmpanel.setup.views.paste_dialog import PasteDialog

        dialog = PasteDialog(self)
        try:
            if not dialog.exec():
                return
            texts = dialog.texts()
            rocm_version, os_name = dialog.rocm_version_value(), dialog.os_value()
            sources = dialog.sources()
        finally:
            dialog.deleteLater()  # a child of the tab: it would live as long as the tab
        if not texts:
            QMessageBox.information(
                self,
                translate("SetupTab", "Analyse pasted output"),
                translate("SetupTab", "Nothing was pasted."),
            )
            return
        self._analyse(texts, rocm_version, os_name, warn=True, sources=sources)

    @Slot()
    def _on_back_clicked(self) -> None:
        self._captured = ()
        self._analysis += 1
        self._set_busy(self._machine_state())
        self._rebuild()

    def _machine_state(self) -> str | None:
        """What this machine's view waits for: a detection the inventory is running."""
        return _DETECTING if self.ctx.inventory.busy else None

    # ---- rendering ----------------------------------------------------------------------

    def _rebuild(self) -> None:
        if self._system is None:
            return
        from rocmpanel.setup.report import build_report

        self.report = build_report(
            self._system, self._host, self._probe, other_machine=self.ctx.demo
        )
        self._render()

    def _render(self) -> None:
        shown = self.report
        if shown is None:
            return
        from rocmpanel.setup.views.gpu_card import GpuCard

        self._set_busy(self._busy)  # the Back button follows what is shown
        system = shown.system
        self.heading.setText(self._heading_text())
        self.heading.setToolTip(
            translate(
                "SetupTab", "Fixes are commands to copy for that machine; nothing here is changed."
            )
            if self._captured or self.ctx.demo
            else ""
        )
        data_line = shown.data_line()
        os_text = f"{system.os} ({system.os_version})" if system.os_version else system.os
        self.system_label.setText(
            translate("SetupTab", "OS: {os} · ROCm: {rocm} · Driver: {driver}").format(
                os=os_text,
                rocm=system.rocm_version or translate("SetupTab", "not found"),
                driver=system.driver or translate("SetupTab", "n/a"),
            )
            + (f"\n{data_line}" if data_line else "")
        )
        clear_grid(self.gpu_grid)
        if not system.gpus:
            offer_demo = self.ctx.show_demo is not None and not self._captured and not self.ctx.demo
            text = (
                translate("SetupTab", NO_GPU_DEMO)
                if offer_demo
                else translate(
                    "SetupTab", "No AMD GPU was found. The checklist below still applies."
                )
            )
            none = QLabel(text)
            none.setWordWrap(True)
            self.gpu_grid.addWidget(none, 0, 0, 1, 4)
            if offer_demo:
                demo = QPushButton(translate("SetupTab", "Show a &demo"))
                demo.setObjectName("show_demo")
                demo.setToolTip(
                    translate("SetupTab", "Open the panel on recorded GPUs of real machines")
                )
                demo.clicked.connect(self._on_show_demo_clicked)
                left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
                self.gpu_grid.addWidget(demo, 1, 0, left)
        for i, (gpu, verdict) in enumerate(shown.gpu_rows()):
            self.gpu_grid.addWidget(GpuCard(gpu, verdict, i), i // 3, i % 3)
        self.check_box.show_checks(shown.checks)
        if shown.probe is not None:
            self._show_probe()
        elif self._captured:
            self.probe_box.show_text(
                translate("SetupTab", "The pasted output says nothing about PyTorch.")
            )
        problems = shown.data.problems if shown.data else ()
        lines = [
            translate("SetupTab", "Note: {note}").format(note=n) for n in (*system.notes, *problems)
        ]
        if self.ctx.demo and not self._captured:
            lines.insert(0, translate("SetupTab", DEMO_NOTE))
        self.notes_label.setText("\n".join(lines))
        self.report_changed.emit(shown)

    def _heading_text(self) -> str:
        """Whose GPUs are shown: this machine's, pasted output's (and where it came from),
        or the demo's recordings."""
        if self._captured:
            where = (
                ", ".join(self._sources) if self._sources else translate("SetupTab", "pasted text")
            )
            return translate("SetupTab", "<b>{heading}</b> ({kinds}; from {where})").format(
                heading=translate("SetupTab", PASTED_HEADING),
                kinds=", ".join(self._captured),
                where=where,
            )
        if self.ctx.demo:
            return "<b>{}</b>".format(translate("SetupTab", DEMO_HEADING))
        return "<b>{}</b>".format(translate("SetupTab", "This machine"))

    @Slot()
    def _on_show_demo_clicked(self) -> None:
        if self.ctx.show_demo is not None:
            self.ctx.show_demo()

    @Slot(object)
    def _apply_fix(self, check: Check) -> None:
        from rocmpanel.setup.checklist import FixKind

        fix = check.fix
        if fix is None:
            return
        local = not self._captured and not self.ctx.demo  # never stage another machine's fix
        if local and fix.kind in (FixKind.ENV_SET, FixKind.ENV_UNSET) and fix.name:
            value = fix.value if fix.kind is FixKind.ENV_SET else None
            self.env_change_requested.emit(fix.name, value)
            self.ctx.notify(
                translate("SetupTab", "{fix}: sent to the environment editor.").format(fix=fix.text)
            )
            return
        QGuiApplication.clipboard().setText(fix.text)
        self.ctx.notify(translate("SetupTab", "Copied: {text}").format(text=fix.text))

    @Slot()
    def copy_report(self) -> None:
        if self.report is None:
            self.ctx.notify(translate("SetupTab", "No report yet: detection is still running."))
            return
        QGuiApplication.clipboard().setText(self.report.to_markdown())
        self.ctx.notify(translate("SetupTab", "Report copied as Markdown."))

    def shutdown(self) -> None:
        """Cancel a running probe; detection belongs to the app's inventory."""
        self._closing = True
        self.probe_box.shutdown()
