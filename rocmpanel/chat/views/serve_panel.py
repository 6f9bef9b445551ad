"""The Serve switch of the Chat tab: the loaded model over an OpenAI-compatible HTTP API.

The server runs inside the chat worker, next to the model the tab loaded (the model is never
in memory twice): switching Serve on reads (or makes) the API key off the GUI thread
(:mod:`rocmpanel.base.api_key`), then sends the worker a ``serve`` command with it (on
stdin: never on a command line, which every user can read in ``ps``); "Starting…" shows
until the worker answers ``serving``. Switching off sends ``serve_stop``. The GUI binds
127.0.0.1 only; another address needs ``rocmpanel serve --host`` (an explicit option).

The tab routes every serve result and every error of a serve command here, before its chat
session sees them (a failed serve is not a failed load: the model stays). A worker that
ends, an unload or a new load turn the switch off and say why.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.api_key import ApiKey, load_or_create, regenerate
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.chat import requirements
from rocmpanel.chat.requirements import Missing
from rocmpanel.chat.serve_protocol import (
    SERVE_STOP_OP,
    ServeQueue,
    ServeRequest,
    ServeStats,
    ServeStopped,
    Serving,
    read_serve_result,
)
from rocmpanel.chat.session import WorkerChannel
from rocmpanel.chat.views.packages_box import ERROR_STYLE, INSTALL_TEXT, WARN_STYLE, PackagesBox
from rocmpanel.chat.views.sampling_box import int_spin
from rocmpanel.chat.views.serve_status import ServeStatus
from rocmpanel.chat.views.serve_vllm import VllmBox, target_for
from rocmpanel.chat.views.serve_words import (
    DEMO_TIP,
    HOST_NOTE,
    NOT_READY_TIP,
    REFRESH_MS,
    STOPPED,
    STOPPED_WHY,
    SWITCH_STYLE,
    SWITCH_TEXT,
    SWITCH_TIP,
    error_text,
    missing_text,
    port_in_use_text,
    shown,
)
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.jobs.protocol import Result, WorkerError


class State(Enum):
    OFF = "off"
    GETTING_KEY = "getting_key"  # reading or making the key, off the GUI thread
    STARTING = "starting"  # serve sent, waiting for `serving`
    SERVING = "serving"
    RESTARTING = "restarting"  # serving again with a new key
    STOPPING = "stopping"  # serve_stop sent


class ServePanel(QGroupBox):
    """The Serve switch, the port, and the server's status (see the module)."""

    def __init__(
        self, ctx: AppContext, packages: PackagesBox, parent: QWidget | None = None
    ) -> None:
        super().__init__(translate("ServePanel", "Serve"), parent)
        self.ctx = ctx
        self.packages = packages
        self.state = State.OFF
        self.worker: WorkerChannel | None = None
        self.model_path: str | None = None
        self.stats = ServeStats()
        self.key: ApiKey | None = None  # the key in use, once read
        self.port_asked = 0  # the port of the last serve command
        self.clock: Callable[[], float] = time.time  # Served.at is the worker's time.time()
        self.load_key: Callable[[], ApiKey] = load_or_create  # run off the GUI thread
        self.make_new_key: Callable[[], ApiKey] = regenerate
        self._missing: tuple[Missing, ...] = ()  # fastapi/uvicorn the workload Python lacks
        self._missing_shown = False  # the message says what serving lacks
        column = QVBoxLayout(self)

        row = QHBoxLayout()
        self.switch = QPushButton(shown(SWITCH_TEXT))
        self.switch.setCheckable(True)
        self.switch.setAccessibleName(shown(SWITCH_TEXT))
        self.switch.setAccessibleDescription(shown(SWITCH_TIP))
        self.switch.setStyleSheet(SWITCH_STYLE)
        self.switch.clicked.connect(self._on_switch)
        row.addWidget(self.switch, 1)
        # Its letters are all taken by other mnemonics.
        port_label = QLabel(translate("ServePanel", "Port:"))
        self.port_spin = int_spin("serve_port")
        self.port_spin.setSpecialValueText(translate("ServePanel", "any free"))
        self.port_spin.setAccessibleName(translate("ServePanel", "Port"))
        self.port_spin.setValue(ctx.settings.chat.serve_port)
        port_label.setBuddy(self.port_spin)
        row.addWidget(port_label)
        row.addWidget(self.port_spin)
        column.addLayout(row)
        self.host_label = QLabel(shown(HOST_NOTE))
        self.host_label.setWordWrap(True)
        column.addWidget(self.host_label)
        self.message_label = QLabel(translate("ServePanel", "Not serving."))
        self.message_label.setWordWrap(True)
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        column.addWidget(self.message_label)
        self.install_button = QPushButton(translate("PackagesBox", INSTALL_TEXT))
        self.install_button.clicked.connect(self._install)
        self.install_button.hide()
        column.addWidget(self.install_button)
        self.status = ServeStatus()
        self.status.new_key_requested.connect(self.ask_new_key)
        self.status.hide()
        column.addWidget(self.status)
        self.vllm_box = VllmBox(ctx)
        column.addWidget(self.vllm_box)
        self.port_spin.valueChanged.connect(lambda _v: self._update_vllm())

        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh_figures)
        packages.checked.connect(self._on_packages_checked)
        if ctx.demo:
            self._show_message(shown(DEMO_TIP))
        self._update_switch()

    # -- what the tab tells ------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Serving, or on the way there (the switch is on)."""
        return self.state not in (State.OFF, State.STOPPING)

    def set_model(self, worker: WorkerChannel | None, model_path: str | None) -> None:
        """The worker and the model it has loaded (None: none, or not loaded yet)."""
        if worker is not self.worker or model_path != self.model_path:
            if self.state is not State.OFF and (worker is None or model_path is None):
                why = STOPPED_WHY["exit"] if worker is None else STOPPED_WHY["unload"]
                self.stop_shown(shown(why))
            self.worker, self.model_path = worker, model_path
            self._update_vllm()
        self._update_switch()

    def model_gone(self, reason: str) -> None:
        """The model is going (``reason``: unload, load or exit): the switch goes off now,
        with why (the worker stops its server itself and says so later)."""
        if self.state is not State.OFF:
            self.stop_shown(shown(STOPPED_WHY.get(reason, STOPPED)))
        if reason == "exit":
            self.worker = None
        self.model_path = None
        self._update_vllm()
        self._update_switch()

    def on_result(self, result: Result) -> bool:
        """Take a serve result (True), or leave any other result to the tab (False)."""
        event = read_serve_result(result)
        if event is None:
            return False
        self.stats.update(event)
        if isinstance(event, Serving):
            self._on_serving(event)
        elif (
            isinstance(event, ServeStopped)
            and event.reason != "restart"  # a serve replaced it; its serving (or error) follows
            and self.state in (State.STOPPING, State.STARTING, State.SERVING)
        ):
            # Not while restarting with a new key: the old server's stop is expected.
            self.stop_shown(shown(STOPPED_WHY.get(event.reason, STOPPED)))
        if self.state is State.SERVING or isinstance(event, ServeQueue):
            self.refresh_figures()
        return True

    def on_error(self, error: WorkerError) -> None:
        """A serve command failed: the switch goes off and the message says why; the worker
        and its model stay (the tab's chat session never sees this error)."""
        missing = error.data.get("missing")
        if error.kind == "port_in_use":
            message = port_in_use_text(self.port_asked or self.port_spin.value())
        elif error.kind == "missing_package" and isinstance(missing, list):
            self._missing = tuple(Missing(str(name), None, None) for name in missing)
            message = self._missing_text()
        else:
            message = error_text(error)
        self._go_off()
        self._show_message(message, error=True)
        self._missing_shown = error.kind == "missing_package" and isinstance(missing, list)
        self._update_switch()

    # -- the switch --------------------------------------------------------------------
    def _can_serve(self) -> bool:
        worker = self.worker
        return (
            not self.ctx.demo
            and worker is not None
            and worker.running
            and self.model_path is not None
            and not self._missing
        )

    def _update_switch(self) -> None:
        can = self._can_serve()
        # While serving, the switch stays usable to stop (whatever else changed).
        self.switch.setEnabled(can or self.state is not State.OFF)
        self.switch.setChecked(self.active)
        self.port_spin.setEnabled(self.state is State.OFF and not self.ctx.demo)
        if self.ctx.demo:
            tip = shown(DEMO_TIP)
        elif self._missing:
            tip = self._missing_text()
        elif not can and self.state is State.OFF:
            tip = shown(NOT_READY_TIP)
        else:
            tip = shown(SWITCH_TIP)
        self.switch.setToolTip(tip)
        self.install_button.setVisible(
            bool(self._missing) and self.ctx.install_packages is not None
        )

    def _on_switch(self, on: bool) -> None:
        if on:
            self.start()
        else:
            self.stop()

    def start(self) -> None:
        """Switch on: read the key off the GUI thread, then ask the worker to serve."""
        if self.active or not self._can_serve():
            self._update_switch()
            return
        self.state = State.GETTING_KEY
        self._show_message(translate("ServePanel", "Starting…"))
        self._save_port()
        run_in_background(self.load_key, self._on_key, owner=self, what="reading the serve API key")
        self._update_switch()

    def _on_key(self, key: ApiKey | None, error: BaseException | None) -> None:
        if self.state is not State.GETTING_KEY:
            return  # switched off (or the model went) meanwhile
        if key is None:
            self._go_off()
            self._report(
                error or PanelError(translate("ServePanel", "No API key was read.")),
                translate("ServePanel", "Reading the API key"),
            )
            self._update_switch()
            return
        self.key = key
        self._send_serve(State.STARTING)

    def _send_serve(self, state: State) -> None:
        worker, key = self.worker, self.key
        if key is None:
            return
        request = ServeRequest(api_key=key.value, port=self.port_spin.value())
        self.port_asked = request.port
        try:
            if worker is None:
                raise PanelError(translate("ServePanel", "The chat worker is not running."))
            worker.send(request.op, **request.fields())
        except PanelError as exc:
            self._go_off()
            self._report(exc, translate("ServePanel", "Starting the server"))
            self._update_switch()
            return
        self.state = state
        self.status.set_key(key)
        self._show_message(
            translate("ServePanel", "Restarting with the new key…")
            if state is State.RESTARTING
            else translate("ServePanel", "Starting…")
        )
        self._update_switch()

    def stop(self) -> None:
        """Switch off: ``serve_stop`` to the worker (nothing to send before the serve went)."""
        if self.state is State.GETTING_KEY:
            self._go_off()
            self._show_message(shown(STOPPED))
        elif self.state in (State.STARTING, State.SERVING, State.RESTARTING):
            self.state = State.STOPPING
            self.timer.stop()
            self._show_message(translate("ServePanel", "Stopping…"))
            if not self._send_stop():
                self.stop_shown(shown(STOPPED))
        self._update_switch()

    def _send_stop(self) -> bool:
        worker = self.worker
        if worker is None or not worker.running:
            return False
        try:
            worker.send(SERVE_STOP_OP)
        except PanelError as exc:
            report(exc, translate("ServePanel", "Stopping the server"))
            return False
        return True

    def stop_shown(self, message: str) -> None:
        """The server is gone: the switch goes off and ``message`` says why."""
        self._go_off()
        self._show_message(message)
        self._update_switch()

    def _go_off(self) -> None:
        self.state = State.OFF
        self.timer.stop()
        self.status.hide()

    def _on_serving(self, serving: Serving) -> None:
        if self.state in (State.OFF, State.STOPPING):
            # A serve that was queued behind the stop: the user wants it off.
            self._send_stop()
            return
        self.state = State.SERVING
        self.status.set_url(serving.url)
        self.status.show()
        name = serving.model_id or Path(self.model_path or "").name
        self._show_message(translate("ServePanel", "Serving {model}.").format(model=name))
        self.timer.start()
        self._update_switch()

    def refresh_figures(self) -> None:
        self.status.show_stats(self.stats, self.clock())

    # -- the key -----------------------------------------------------------------------
    def ask_new_key(self) -> None:
        """Make a new key after asking; a running server restarts with it."""
        if self.active:
            text = translate(
                "ServePanel",
                "Clients using the current key will get 401 until they are given the new one. "
                "The server restarts with the new key.",
            )
        else:
            text = translate(
                "ServePanel",
                "Clients using the current key will get 401 until they are given the new one.",
            )
        answer = QMessageBox.question(
            self,
            translate("ServePanel", "Make a new API key?"),
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer == QMessageBox.StandardButton.Yes:
            run_in_background(
                self.make_new_key, self._on_new_key, owner=self, what="making a new API key"
            )

    def _on_new_key(self, key: ApiKey | None, error: BaseException | None) -> None:
        if key is None:
            self._report(
                error or PanelError(translate("ServePanel", "No API key was made.")),
                translate("ServePanel", "Making a new API key"),
            )
            return
        self.key = key
        self.status.set_key(key)
        if self.state in (State.SERVING, State.STARTING, State.RESTARTING):
            # Also when a serve is on its way with the old key: the shown key must be the
            # one in use, so the server restarts with this one after it.
            self._send_serve(State.RESTARTING)

    # -- packages and messages ---------------------------------------------------------
    def _on_packages_checked(self, _ready: bool) -> None:
        installed = self.packages.installed
        if installed is None:
            return
        self._missing = tuple(requirements.missing_for_serve(installed.versions))
        if self.ctx.demo:
            self._missing = ()  # never served in the demo: its tooltip and line say why
        elif self._missing and self.state is State.OFF:
            self._show_message(self._missing_text(), warn=True)
            self._missing_shown = True
        elif not self._missing and self._missing_shown:
            self._show_message(translate("ServePanel", "Not serving."))
        self._update_switch()

    def _missing_text(self) -> str:
        return missing_text(self._missing, self.ctx.install_packages is not None)

    def _install(self) -> None:
        install = self.ctx.install_packages
        if install is not None:
            install(requirements.INSTALL_PROFILE)

    def _show_message(self, text: str, *, error: bool = False, warn: bool = False) -> None:
        self._missing_shown = False  # the caller that shows what is missing sets it again
        self.message_label.setStyleSheet(ERROR_STYLE if error else WARN_STYLE if warn else "")
        self.message_label.setText(text)

    def _report(self, error: BaseException, doing: str) -> None:
        """A failure the user reads here (the detail goes to the log)."""
        self._show_message("", error=True)
        report(error, doing, label=self.message_label)

    def _save_port(self) -> None:
        chat = self.ctx.settings.chat
        if chat.serve_port == self.port_spin.value() or self.ctx.demo:
            return
        try:
            chat.serve_port = self.port_spin.value()
            self.ctx.settings.save()
        except (ValueError, PanelError) as exc:
            report(exc, translate("ServePanel", "Saving the serve port"))

    def _update_vllm(self) -> None:
        path = self.model_path
        target = None if path is None else target_for(self.ctx, path, self.port_spin.value())
        self.vllm_box.set_target(target)

    def shutdown(self) -> None:
        self.timer.stop()
