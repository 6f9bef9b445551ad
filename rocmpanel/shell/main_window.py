"""The main window: tabs, jobs strip, log dock, status bar, menus; geometry restored."""

from __future__ import annotations

import collections
import logging
import subprocess
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QPaintEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.frozen import panel_command
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.settings import Settings
from rocmpanel.gui import report as reports
from rocmpanel.gui.active_preset import ActivePresetHolder
from rocmpanel.gui.background import run_in_background, wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.gui.tab import Tab, TabFactory
from rocmpanel.jobs.runner import JobManager
from rocmpanel.shell import heap
from rocmpanel.shell.jobs_strip import JobsStrip
from rocmpanel.shell.tabs import TABS, TabEntry
from rocmpanel.shell.window_menus import WindowMenus

if TYPE_CHECKING:  # the log view is built after the first paint, the job modules at the first job
    from rocmpanel.gui.log_view import LogView
    from rocmpanel.jobs.runner import Job
    from rocmpanel.jobs.spec import JobSpec
    from rocmpanel.shell.first_run import FirstRunGuide

log = logging.getLogger(__name__)

DEMO_TITLE = QT_TRANSLATE_NOOP("MainWindow", "rocmpanel — DEMO: recorded GPUs, not this machine")
DEMO_BANNER = QT_TRANSLATE_NOOP(
    "MainWindow",
    "DEMO — recorded GPUs (Radeon RX 7900 XT and RX 6900 XT) with a replayed workload, "
    "not this machine. Settings and files live in a temporary folder removed at exit; "
    "nothing here changes this machine.",
)
DEFERRED_TABS_MS = 250  # the tabs not shown at start are built this long after first paint
CLOSE_WAIT_MS = 2000  # how long closing waits for background calls still running

TabSource = TabEntry | TabFactory  # a tab named by its module, or its class itself


def _job_env_for(spec: JobSpec, ctx: AppContext) -> dict[str, str | None]:
    """The job's environment under the active preset and GPU choice this window holds in
    memory (no sysfs read on the GUI thread once the GPU button has read the GPUs)."""
    # Imported at the first job, not at start-up (it reads the env catalogue and stores).
    from rocmpanel.gui.gpu_picker import known_gpus
    from rocmpanel.jobs import gpu_choice
    from rocmpanel.jobs.job_env import job_env_for

    held = ctx.gpu_choice.choice  # as the GPU button last read it (it follows each choice)
    if held is None:  # not read yet (a job right at start-up): read now
        gpus = gpu_choice.resolve(
            spec.gpus, known=known_gpus(ctx), saved=ctx.settings.general.job_gpus
        )
    elif spec.gpus is not None:  # the job's own GPUs, among those last read
        gpus = gpu_choice.choose(held.available, spec.gpus)
    else:
        gpus = held
    return job_env_for(spec, active=ctx.active_preset.ident, gpus=gpus)


def _preset_name(ident: str) -> str:
    """The name of the user's preset ``ident`` (disk: runs in the background); PanelError
    when it no longer exists."""
    from rocmpanel.jobs.presets import PresetStore

    store = PresetStore()
    try:
        return store.get(ident).name
    except PanelError:
        for problem in store.problems:  # there, but its file cannot be read: say why
            if problem.path.stem == ident:
                raise PanelError(
                    translate("MainWindow", "cannot be used: {why}").format(
                        why=problem.message.rstrip(".")
                    )
                ) from None
        raise PanelError(translate("MainWindow", "no longer exists")) from None


def settings_status_line(settings: Settings) -> str:
    """The status bar's short sentence about a settings file with problems (the whole text
    is in the dialog)."""
    if settings.damaged:
        return translate("MainWindow", "Settings file damaged: using defaults — see the message.")
    count = len(settings.problems)
    if count == 1:
        return translate("MainWindow", "Settings file has a problem: see the message.")
    return translate("MainWindow", "Settings file has {count} problems: see the message.").format(
        count=count
    )


def _class_name(source: TabSource) -> str:
    return source.cls if isinstance(source, TabEntry) else source.__name__


class _EarlyLog(logging.Handler):
    """Keeps what is logged before the log view exists (it is built after the first
    paint), for the view to show first."""

    KEPT = 1000

    def __init__(self) -> None:
        super().__init__(logging.INFO)  # as the log view's own handler
        self.records: collections.deque[logging.LogRecord] = collections.deque(maxlen=self.KEPT)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def take(self) -> list[logging.LogRecord]:
        """Stop keeping records; the ones kept so far."""
        logging.getLogger().removeHandler(self)
        self.acquire()  # a record being kept on another thread is kept whole
        try:
            return list(self.records)
        finally:
            self.release()


class _TabSlot(QWidget):
    """A page of the tab widget that holds its tab once built."""

    def __init__(self, source: TabSource) -> None:
        super().__init__()
        self.source = source
        self.title = source.title
        self.widget: QWidget | None = None
        self.tab: Tab | None = None  # the same object as ``widget``, as a Tab
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def build(self, ctx: AppContext) -> QWidget:
        """Import and build the tab; raises what the tab raised, or TypeError when the
        class does not keep the Tab protocol."""
        factory = self.source.load() if isinstance(self.source, TabEntry) else self.source
        tab = factory(ctx, self)
        if not isinstance(tab, QWidget) or not isinstance(tab, Tab):
            raise TypeError(f"{_class_name(self.source)} is not a QWidget with title and shutdown")
        self.widget, self.tab = tab, tab
        self._layout.addWidget(tab)
        return tab


class MainWindow(WindowMenus, QMainWindow):
    """The one window of rocmpanel.

    ``inventory``: the machine inventory the tabs share (default: detect this machine,
    started right after the first paint). ``demo``: the panel runs on the demo's recorded
    GPUs (``rocmpanel --demo``): the title bar, a banner and the status bar say so, and
    the views read ``ctx.demo``.
    """

    #: Emitted once, right after the window's first frame: what start-up defers until then
    #: (the application icon, the log's rotation) connects here.
    first_painted = Signal()

    def __init__(
        self,
        settings: Settings | None = None,
        tabs: Sequence[TabSource] = TABS,
        *,
        inventory: InventoryHolder | None = None,
        demo: bool = False,
    ) -> None:
        super().__init__()
        self.demo = demo
        self.setWindowTitle(translate("MainWindow", DEMO_TITLE) if demo else "rocmpanel")
        self.settings = settings if settings is not None else Settings.load()
        self.jobs = JobManager(float(self.settings.general.job_cancel_grace_s), self)
        self.jobs.env_provider = self._job_env_for
        if inventory is None:
            inventory = InventoryHolder(parent=self)
        self.ctx = AppContext(
            self.settings,
            self.jobs,
            self.notify,
            inventory=inventory,
            demo=demo,
            show_demo=None if demo else self.show_demo,
            install_packages=self.install_packages,
            active_preset=ActivePresetHolder(self.settings.general.active_preset, parent=self),
        )
        self.tab_failures: list[str] = []
        # False: closing writes nothing (the smoke test must leave the user's files alone).
        self.save_on_close = True
        self.settings_problems_box: QMessageBox | None = None

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 0)
        self.demo_banner: QLabel | None = None
        if demo:
            self.demo_banner = QLabel(translate("MainWindow", DEMO_BANNER))
            self.demo_banner.setObjectName("demoBanner")
            self.demo_banner.setWordWrap(True)
            self.demo_banner.setStyleSheet(
                "QLabel#demoBanner { background: #fff3c4; color: #3d2e00; "
                "border: 1px solid #d9b84a; padding: 4px 8px; font-weight: bold; }"
            )
            layout.addWidget(self.demo_banner)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self._central_layout = layout
        self.guide: FirstRunGuide | None = None
        layout.addWidget(self.tabs, 1)
        self.jobs_strip = JobsStrip(self.jobs)
        layout.addWidget(self.jobs_strip)
        self.setCentralWidget(central)
        self._tab_actions: dict[_TabSlot, QAction] = {}
        self._painted = False
        self._closed = False
        self._settled = False
        self._add_tab_slots(tabs)
        if self.tabs.count() == 0:
            self.empty_label = QLabel(
                translate(
                    "MainWindow",
                    "No tabs are available in this build. Help → About probes the workload "
                    "environment; the log is under View → Log.",
                )
            )
            self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.empty_label.setWordWrap(True)
            self.tabs.hide()
            layout.insertWidget(0, self.empty_label, 1)

        # The log dock is built after the first frame (unless it was open at close, so the
        # frame shows it); what is logged until then is kept for it.
        self._log_view: LogView | None = None
        self._log_dock: QDockWidget | None = None
        self._early_log: _EarlyLog | None = _EarlyLog()
        logging.getLogger().addHandler(self._early_log)
        if self.settings.window.log_open:
            self._build_log_dock()

        self.status_jobs = QLabel()
        if demo:
            self.statusBar().addPermanentWidget(
                QLabel(translate("MainWindow", "DEMO: recorded GPUs"))
            )
        # The preset every job runs under, from the settings read at start; a click opens
        # the Tuning tab, where it is chosen.
        self.status_preset = QToolButton()
        self.status_preset.setObjectName("statusPreset")
        self.status_preset.setAutoRaise(True)
        self.status_preset.setToolTip(
            translate("MainWindow", "The tuning preset jobs run under: click to choose one")
        )
        self.status_preset.clicked.connect(self.show_tuning)
        self.ctx.active_preset.changed.connect(self._on_active_preset_changed)
        self._on_active_preset_changed()
        self.statusBar().addPermanentWidget(self.status_preset)
        from rocmpanel.gui.gpu_picker import GpuPicker  # reads sysfs only when it refreshes

        self.status_gpus = GpuPicker(self.ctx, self)
        self.statusBar().addPermanentWidget(self.status_gpus)
        self.statusBar().addPermanentWidget(self.status_jobs)
        self.jobs.job_added.connect(self._on_jobs_changed)
        self.jobs.job_finished.connect(self._on_jobs_job_finished)
        self._add_menus()
        self._restore_state()
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        if self.tabs.count():
            self.ensure_tab(self.tabs.currentIndex())
        self.statusBar().showMessage(translate("MainWindow", "Ready"), 3000)
        if self.settings.problems:
            # One short sentence: the status bar cuts a long one at the window's edge. The
            # whole text is in the dialog (show_settings_problems) and in the log.
            for problem in self.settings.problems:
                log.warning("settings: %s", problem)
            self.notify(settings_status_line(self.settings))
        # Errors reported from now on show in the status bar; earlier ones show now.
        reports.set_sink(self.notify)

    # -- construction ----------------------------------------------------------------
    def _add_tab_slots(self, tabs: Sequence[TabSource]) -> None:
        """One page per tab; the tab itself is built when first needed (see ensure_tab)."""
        for source in tabs:
            # The title stays English where it names the tab (settings, tests); shown translated.
            self.tabs.addTab(_TabSlot(source), translate("Tabs", source.title))

    def _slots(self) -> list[_TabSlot]:
        pages = (self.tabs.widget(index) for index in range(self.tabs.count()))
        return [page for page in pages if isinstance(page, _TabSlot)]

    def ensure_tab(self, index: int) -> QWidget | None:
        """Build the tab at ``index`` if it is not built yet; None if it failed (then it
        is removed: a tab appears only when it works)."""
        slot = self.tabs.widget(index)
        if not isinstance(slot, _TabSlot):
            return None
        if slot.widget is not None:
            return slot.widget
        try:
            return slot.build(self.ctx)
        except Exception as exc:  # a broken tab must not take the window down
            # The status bar shows the message; the log gets the traceback.
            self.tab_failures.append(f"The {_class_name(slot.source)} tab could not load: {exc}")
            shown: BaseException = exc
            title = translate("Tabs", slot.title)
            if isinstance(exc, PanelError):  # its own message does not say the tab is gone
                shown = PanelError(
                    translate("MainWindow", "The {tab} tab could not load: {why}").format(
                        tab=title, why=exc.message
                    ),
                    exc.detail,
                )
            reports.report(
                shown, translate("MainWindow", "Loading the {tab} tab").format(tab=title)
            )
            action = self._tab_actions.pop(slot, None)
            if action is not None:
                action.setVisible(False)
            self.tabs.removeTab(index)
            slot.deleteLater()
            return None

    def build_all_tabs(self) -> None:
        """Build every tab now (the smoke test and tests use this)."""
        index = 0
        while index < self.tabs.count():
            if self.ensure_tab(index) is not None:
                index += 1

    @Slot(int)
    def _on_tabs_current_changed(self, index: int) -> None:
        if index >= 0:
            self.ensure_tab(index)

    @Slot()
    def _build_next_deferred(self) -> None:
        """After the first paint, build the other tabs one per event-loop turn."""
        if self._closed:
            return
        for index, slot in enumerate(self._slots()):
            if slot.widget is None:
                self.ensure_tab(index)
                QTimer.singleShot(0, self, self._build_next_deferred)
                return
        if not self._settled:  # start-up is done: what lives on leaves the collector's scans
            self._settled = True
            heap.settle()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            # Queued, so the first frame is finished (and measured) before anything starts.
            QTimer.singleShot(0, self, self._after_first_paint)

    @Slot()
    def _after_first_paint(self) -> None:
        """Detect the machine now, so every tab finds the inventory ready; then build the
        tabs not shown yet."""
        if self._closed:  # closed right after the first paint (the smoke test)
            return
        self.ctx.inventory.ensure()
        self.first_painted.emit()
        self.resolve_active_preset()
        self._build_log_dock()
        self._fill_menus()
        QTimer.singleShot(DEFERRED_TABS_MS, self, self._build_next_deferred)
        if self.settings.problems:
            self.show_settings_problems()
        # Not in the demo, nor where nothing can be saved (the smoke test): it asks to be
        # dismissed for good, which a setting keeps.
        if not (self.demo or self.settings.general.guide_dismissed or not self.settings.writable):
            self.show_guide(focus=False)

    def show_settings_problems(self) -> QMessageBox:
        """Say, once, what was wrong with the settings file (the panel runs on defaults
        where it was); not modal, so nothing waits for it."""
        if self.settings_problems_box is not None:
            return self.settings_problems_box
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(translate("MainWindow", "rocmpanel: settings file"))
        box.setText(
            translate("MainWindow", "Some of your settings could not be used ({path}).").format(
                path=self.settings.path
            )
        )
        box.setInformativeText("\n\n".join(self.settings.problems))
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        box.setModal(False)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        box.show()
        self.settings_problems_box = box
        return box

    # -- the log dock: built after the first paint, or when first asked for ------------
    @property
    def log_dock(self) -> QDockWidget:
        return self._build_log_dock()

    @property
    def log_view(self) -> LogView:
        self._build_log_dock()
        assert self._log_view is not None
        return self._log_view

    def _build_log_dock(self) -> QDockWidget:
        if self._log_dock is not None:
            return self._log_dock
        from rocmpanel.gui.log_view import LogView

        view = LogView()
        dock = QDockWidget(translate("MainWindow", "Log"), self)
        dock.setObjectName("logDock")
        dock.setWidget(view)
        # Built after restoreState: its saved place, size and visibility are restored now.
        if not self.restoreDockWidget(dock):
            self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            dock.hide()
        self._log_view, self._log_dock = view, dock
        if self._early_log is not None:
            early, self._early_log = self._early_log.take(), None
            view.append_lines([view.handler.format(record) for record in early])
        return dock

    def _restore_state(self) -> None:
        geometry = self.settings.window.geometry
        if not geometry or not self.restoreGeometry(QByteArray.fromBase64(geometry.encode())):
            self.resize(1180, 780)
        state = self.settings.window.state
        if state:
            self.restoreState(QByteArray.fromBase64(state.encode()))
        last = self.settings.window.last_tab
        titles = self.tab_titles()
        if last in titles:
            self.tabs.setCurrentIndex(titles.index(last))

    # -- public ------------------------------------------------------------------------
    def tab_titles(self) -> list[str]:
        """The tabs' titles in English (their names in settings and code; the tab bar shows
        them translated)."""
        titles = []
        for index in range(self.tabs.count()):
            page = self.tabs.widget(index)
            titles.append(page.title if isinstance(page, _TabSlot) else self.tabs.tabText(index))
        return titles

    def tab(self, title: str) -> QWidget | None:
        """The tab called ``title`` (English; built now if needed), or None."""
        titles = self.tab_titles()
        return self.ensure_tab(titles.index(title)) if title in titles else None

    @Slot(str)
    def notify(self, message: str) -> None:
        self.statusBar().showMessage(message, 10_000)

    @Slot()
    def show_demo(self) -> None:
        """Open the demo as a separate process (``python -m rocmpanel --demo``), so this
        window keeps running; the demo's window has its own temporary home."""

        from rocmpanel.base import subproc

        argv = panel_command("--demo")
        try:
            subproc.popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # detached: closing this window leaves it open
                close_fds=True,
            )
        except OSError as exc:
            reports.report(
                PanelError(
                    translate(
                        "MainWindow",
                        "The demo could not start: {error}. The panel's Python could not be "
                        "run again; reinstalling rocmpanel usually fixes this.",
                    ).format(error=exc),
                    " ".join(argv),
                ),
                translate("MainWindow", "Opening the demo"),
            )
            return
        log.info("demo started: %s", " ".join(argv))
        self.notify(translate("MainWindow", "Opening the demo in a second window…"))

    def install_packages(self, profile: str) -> None:
        """Install an install profile's packages (e.g. "llm") into the active workload
        environment: the PyTorch tab does it, as a job, in front."""
        for index, title in enumerate(self.tab_titles()):
            if title == "PyTorch":
                tab = self.ensure_tab(index)
                if tab is None:
                    break
                self.tabs.setCurrentIndex(index)
                install = getattr(tab, "install_packages", None)
                if callable(install):
                    install(profile)
                    return
                break
        self.notify(
            translate(
                "MainWindow", "Installing packages needs the PyTorch tab, which this build lacks."
            )
        )

    @Slot()
    def show_tuning(self) -> None:
        """Bring the Tuning tab to the front (the status bar's preset button)."""
        titles = self.tab_titles()
        if "Tuning" in titles:
            self.tabs.setCurrentIndex(titles.index("Tuning"))
            return
        self.notify(
            translate(
                "MainWindow",
                "Choosing a tuning preset needs the Tuning tab, which this build lacks.",
            )
        )

    @Slot()
    def _on_active_preset_changed(self) -> None:
        self.status_preset.setText(self.ctx.active_preset.label())

    def resolve_active_preset(self) -> None:
        """Show the active preset's name (the settings keep its id) once the store is read;
        a preset that no longer exists is dropped from this session with a message."""
        ident = self.ctx.active_preset.ident
        if not ident:
            return
        run_in_background(
            partial(_preset_name, ident),
            partial(self._on_preset_name, ident),
            owner=self,
            what="reading the active tuning preset",
        )

    def _on_preset_name(self, ident: str, name: str | None, error: BaseException | None) -> None:
        holder = self.ctx.active_preset
        if holder.ident != ident:  # changed meanwhile: the newer choice stands
            return
        if name is not None:
            holder.set(ident, name)
            return
        log.warning("active tuning preset %r: %s", ident, error)
        holder.clear()
        # _preset_name says which: gone, or a file that cannot be read (and why, where).
        why = (
            error.message
            if isinstance(error, PanelError)
            else translate("MainWindow", "could not be read")
        )
        self.notify(
            translate(
                "MainWindow",
                "The tuning preset “{preset}” chosen for jobs {why}: jobs run without a "
                "preset. Choose one in the Tuning tab.",
            ).format(preset=ident, why=why)
        )

    def _job_env_for(self, spec: JobSpec) -> dict[str, str | None]:
        return _job_env_for(spec, self.ctx)

    @Slot()
    def open_settings(self) -> None:
        from rocmpanel.shell.settings_dialog import SettingsDialog  # not needed at start-up

        SettingsDialog(self.settings, self).exec()

    @Slot()
    def export_health_report(self) -> None:
        """File → Export health report… (the report and its dialog: shell/report_dialog.py)."""
        from rocmpanel.shell.report_dialog import export_health_report  # not needed at start-up

        export_health_report(self, self.ctx)

    @Slot()
    def open_about(self) -> None:
        from rocmpanel.shell.about import AboutDialog  # not needed at start-up

        dialog = AboutDialog(self.ctx, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()

    # -- jobs --------------------------------------------------------------------------
    @Slot(object)
    def _on_jobs_changed(self, _job: Job | None = None) -> None:
        running = len(self.jobs.running())
        if running == 1:
            self.status_jobs.setText(translate("MainWindow", "1 job running"))
        else:
            self.status_jobs.setText(
                translate("MainWindow", "{count} jobs running").format(count=running)
            )

    @Slot(object)
    def _on_jobs_job_finished(self, job: Job) -> None:
        self._on_jobs_changed()
        if job.outcome is not None and not job.outcome.was_successful():
            self.notify(f"{job.name}: {job.outcome.message}")

    # -- closing -----------------------------------------------------------------------
    def _save_window_settings(self) -> None:
        """Keep the window's size, layout and last tab. A settings file that could not
        be read is not replaced for these (only a setting the user changes replaces it)."""
        self.settings.window.geometry = bytes(self.saveGeometry().toBase64().data()).decode()
        self.settings.window.state = bytes(self.saveState().toBase64().data()).decode()
        if self.tabs.count():
            self.settings.window.last_tab = self.tab_titles()[self.tabs.currentIndex()]
        self.settings.window.log_open = self._log_dock is not None and not self._log_dock.isHidden()
        try:
            self.settings.save(replace_damaged=False)
        except PanelError as exc:
            reports.report(exc, translate("MainWindow", "Saving the settings"))

    def closeEvent(self, event: QCloseEvent) -> None:
        self._closed = True
        if self.save_on_close:
            self._save_window_settings()
        for slot in self._slots():
            if slot.tab is None:
                continue
            try:
                slot.tab.shutdown()
            except Exception as exc:  # one tab failing to stop must not keep the others
                reports.report(
                    exc,
                    translate("MainWindow", "Closing the {tab} tab").format(
                        tab=translate("Tabs", slot.title)
                    ),
                )
        self.jobs.shutdown()
        # Calls still running would deliver to widgets about to be deleted: let them end.
        if not wait_for_background(CLOSE_WAIT_MS):
            log.warning("background calls still running at close; their results are dropped")
        if self._log_view is not None:
            self._log_view.detach()
        if self._early_log is not None:
            self._early_log.take()
            self._early_log = None
        reports.release_sink(self.notify)
        super().closeEvent(event)
