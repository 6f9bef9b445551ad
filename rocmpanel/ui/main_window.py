"""The main window: tabs, jobs strip, log dock, status bar, menus; geometry restored."""

from __future__ import annotations

import importlib
import logging

from PySide6.QtCore import QByteArray, Qt, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.core.errors import PanelError
from rocmpanel.core.settings import Settings
from rocmpanel.jobs.runner import Job, JobManager
from rocmpanel.system.env_store_session import job_env_overrides
from rocmpanel.ui.about import AboutDialog
from rocmpanel.ui.context import AppContext
from rocmpanel.ui.jobs_strip import JobsStrip
from rocmpanel.ui.log_view import LogView
from rocmpanel.ui.settings_dialog import SettingsDialog
from rocmpanel.ui.tabs import TABS

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    """The one window of rocmpanel."""

    def __init__(self, settings: Settings | None = None, tabs=TABS) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.setWindowTitle("rocmpanel")
        self.settings = settings if settings is not None else Settings.load()
        self.jobs = JobManager(float(self.settings.get("job_cancel_grace_s")), self)
        self.jobs.env_provider = job_env_overrides
        self.ctx = AppContext(self.settings, self.jobs, self.notify)
        self.tab_failures: list[str] = []

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 0)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        layout.addWidget(self.tabs, 1)
        self.jobs_strip = JobsStrip(self.jobs)
        layout.addWidget(self.jobs_strip)
        self.setCentralWidget(central)
        self._build_tabs(tabs)
        if self.tabs.count() == 0:
            self.empty_label = QLabel(
                "No tabs are available in this build. Help → About probes the workload "
                "environment; the log is under View → Log."
            )
            self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.empty_label.setWordWrap(True)
            self.tabs.hide()
            layout.insertWidget(0, self.empty_label, 1)

        self.log_view = LogView()
        self.log_dock = QDockWidget("Log", self)
        self.log_dock.setObjectName("logDock")
        self.log_dock.setWidget(self.log_view)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.log_dock)
        self.log_dock.hide()

        self.status_jobs = QLabel()
        self.statusBar().addPermanentWidget(self.status_jobs)
        self.jobs.job_added.connect(self._on_jobs_changed)
        self.jobs.job_finished.connect(self._on_jobs_job_finished)
        self._build_menus()
        self._restore_state()
        self.statusBar().showMessage("Ready", 3000)
        for problem in [*self.settings.problems, *self.tab_failures]:
            self.notify(problem)

    # -- construction ----------------------------------------------------------------
    def _build_tabs(self, tabs) -> None:  # type: ignore[no-untyped-def]
        for entry in tabs:
            # An entry is (module, class name), or a tab class itself (tests use those).
            label = entry[1] if isinstance(entry, tuple) else entry.__name__
            try:
                if isinstance(entry, tuple):
                    cls = getattr(importlib.import_module(entry[0]), entry[1])
                else:
                    cls = entry
                widget = cls(self.ctx, self)
            except Exception as exc:  # a broken tab must not take the window down
                log.exception("tab %s failed to load", label)
                self.tab_failures.append(f"The {label} tab could not load: {exc}")
                continue
            self.tabs.addTab(widget, widget.title)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        settings_action = QAction("&Settings…", self)
        settings_action.setShortcut(QKeySequence.StandardKey.Preferences)
        settings_action.triggered.connect(self.open_settings)
        file_menu.addAction(settings_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

        view_menu = self.menuBar().addMenu("&View")
        toggle_log = self.log_dock.toggleViewAction()
        toggle_log.setText("&Log")
        toggle_log.setShortcut(QKeySequence("Ctrl+L"))
        view_menu.addAction(toggle_log)
        view_menu.addSeparator()
        for index in range(self.tabs.count()):
            action = QAction(self.tabs.tabText(index), self)
            action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
            action.triggered.connect(lambda _=False, i=index: self.tabs.setCurrentIndex(i))
            view_menu.addAction(action)

        help_menu = self.menuBar().addMenu("&Help")
        about = QAction("&About rocmpanel", self)
        about.setShortcut(QKeySequence.StandardKey.HelpContents)
        about.triggered.connect(self.open_about)
        help_menu.addAction(about)

    def _restore_state(self) -> None:
        geometry = str(self.settings.get("window_geometry"))
        if not geometry or not self.restoreGeometry(QByteArray.fromBase64(geometry.encode())):
            self.resize(1180, 780)
        state = str(self.settings.get("window_state"))
        if state:
            self.restoreState(QByteArray.fromBase64(state.encode()))
        last = str(self.settings.get("last_tab"))
        for index in range(self.tabs.count()):
            if self.tabs.tabText(index) == last:
                self.tabs.setCurrentIndex(index)

    # -- public ------------------------------------------------------------------------
    def tab_titles(self) -> list[str]:
        return [self.tabs.tabText(i) for i in range(self.tabs.count())]

    def tab(self, title: str) -> QWidget | None:
        for index in range(self.tabs.count()):
            if self.tabs.tabText(index) == title:
                return self.tabs.widget(index)
        return None

    @Slot(str)
    def notify(self, message: str) -> None:
        self.statusBar().showMessage(message, 10_000)

    @Slot()
    def open_settings(self) -> None:
        SettingsDialog(self.settings, self).exec()

    @Slot()
    def open_about(self) -> None:
        dialog = AboutDialog(self.ctx, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()

    # -- jobs --------------------------------------------------------------------------
    @Slot(object)
    def _on_jobs_changed(self, _job: Job | None = None) -> None:
        running = len(self.jobs.running())
        self.status_jobs.setText(f"{running} job{'s' if running != 1 else ''} running")

    @Slot(object)
    def _on_jobs_job_finished(self, job: Job) -> None:
        self._on_jobs_changed()
        if job.outcome is not None and not job.outcome.was_successful():
            self.notify(f"{job.name}: {job.outcome.message}")

    # -- closing -----------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self.settings.set("window_geometry", bytes(self.saveGeometry().toBase64()).decode())
        self.settings.set("window_state", bytes(self.saveState().toBase64()).decode())
        if self.tabs.count():
            self.settings.set("last_tab", self.tabs.tabText(self.tabs.currentIndex()))
        try:
            self.settings.save()
        except PanelError as exc:
            log.warning("settings not saved: %s", exc)
        for index in range(self.tabs.count()):
            shutdown = getattr(self.tabs.widget(index), "shutdown", None)
            if callable(shutdown):
                try:
                    shutdown()
                except Exception:
                    log.exception("tab shutdown failed")
        self.jobs.shutdown()
        self.log_view.detach()
        super().closeEvent(event)
