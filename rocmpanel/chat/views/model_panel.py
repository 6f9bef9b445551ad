"""The model side of the Chat tab: pick, check, estimate, load/unload, sampling, system prompt.

Picking a folder checks it (config, safetensors headers, tokenizer, template, custom code)
off the GUI thread: typing waits for a pause of ``CHECK_DELAY_MS``, and the result of an
older check is dropped when a newer one was asked for. The memory for the chosen precision
and context is estimated against the free VRAM of the card a load would use (the app's
inventory and the Monitor's live readings, never sysfs from here) or free RAM; the verdict
is shown before Load is pressed, and a load that cannot fit asks first. With several GPUs
chosen for jobs, a model that no one of them holds is said to be spread over them (the
worker decides the split), and once loaded the status names each GPU and its layers.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.units import format_count, format_memory
from rocmpanel.chat.free_memory import Budget, gpu_budget, ram_budget
from rocmpanel.chat.memory_estimate import (
    CPU_PRECISIONS,
    FitVerdict,
    GpuRoom,
    chosen_gpu_rooms,
    default_precision,
    estimate_device,
    estimate_for,
    judge_fit,
    rooms_for,
)
from rocmpanel.chat.model_check import ModelCheck, check_model
from rocmpanel.chat.protocol import LoadedModel, LoadRequest, Sampling
from rocmpanel.chat.views.check_summary import ColouredLabel, check_summary
from rocmpanel.chat.views.load_steps import step_text
from rocmpanel.chat.views.packages_box import PackagesBox
from rocmpanel.chat.views.sampling_box import SamplingBox, int_spin
from rocmpanel.chat.views.serve_panel import ServePanel
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.machine.gpu_model import GpuInfo

DEVICES = (
    (Device.AUTO, QT_TRANSLATE_NOOP("ModelPanel", "Auto (GPU when torch sees one)")),
    (Device.GPU, "GPU"),
    (Device.CPU, "CPU"),
)
CHECK_DELAY_MS = 300


class ModelPanel(QWidget):
    """Emits ``load_requested(LoadRequest, allow_hub)``, ``unload_requested()``, and
    ``check_finished()`` whenever a folder check has ended (tests wait for it)."""

    load_requested = Signal(object, bool)
    unload_requested = Signal()
    check_finished = Signal()

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.settings = ctx.settings
        self.check: ModelCheck | None = None
        self.verdict: FitVerdict | None = None
        self._check_number = 0  # the newest check asked for; older results are stale
        self._precision_chosen = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

        model_box = QGroupBox(translate("ModelPanel", "Model"))
        # The form for the choices; below it, in a plain column (which gives wrapped labels
        # the height their width needs, as a form's spanning rows do not), the messages,
        # the buttons and the progress.
        box_column = QVBoxLayout(model_box)
        form = QFormLayout()
        box_column.addLayout(form)
        folder_row = QHBoxLayout()
        self.folder_edit = QLineEdit()
        self.folder_edit.setPlaceholderText(translate("ModelPanel", "Hugging Face model folder"))
        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(CHECK_DELAY_MS)
        self._check_timer.timeout.connect(self.refresh_check)
        self.folder_edit.textEdited.connect(lambda _text: self._check_timer.start())
        self.folder_edit.editingFinished.connect(self._on_folder_edited)
        folder_row.addWidget(self.folder_edit, 1)
        self.browse_button = QPushButton(translate("ModelPanel", "Browse…"))
        self.browse_button.clicked.connect(self._browse)
        folder_row.addWidget(self.browse_button)
        folder_label = QLabel(translate("ModelPanel", "F&older:"))
        folder_label.setBuddy(self.folder_edit)
        form.addRow(folder_label, folder_row)
        self.recent_combo = QComboBox()
        self.recent_combo.setPlaceholderText(translate("ModelPanel", "Recent models"))
        self.recent_combo.activated.connect(self._on_recent_activated)
        form.addRow(translate("ModelPanel", "Re&cent:"), self.recent_combo)
        self.precision_combo = QComboBox()
        for precision in Precision:
            # The labels are declared (and marked) with the enum; str enums go in as text.
            label = translate("Precision", precision.label)
            self.precision_combo.addItem(label, precision.value)
        self.precision_combo.setToolTip(
            translate(
                "ModelPanel",
                "How the weights are held. On a GPU: NF4 (default), 8-bit, fp16, bf16, fp32. "
                "On the CPU: bf16 (default) and fp32, and NF4/8-bit through bitsandbytes' CPU "
                "kernels (slower per token, but a quarter/half of the memory); fp16 is slow "
                "there.",
            )
        )
        self.precision_combo.currentIndexChanged.connect(self.refresh_estimate)
        self.precision_combo.activated.connect(self._on_precision_chosen)
        form.addRow(translate("ModelPanel", "&Precision:"), self.precision_combo)
        self.device_combo = QComboBox()
        for device, label in DEVICES:
            self.device_combo.addItem(translate("ModelPanel", label), device.value)
        self.device_combo.currentIndexChanged.connect(self.refresh_estimate)
        form.addRow(translate("ModelPanel", "&Device:"), self.device_combo)
        self.context_spin = int_spin("context_length")
        self.context_spin.setSingleStep(512)
        self.context_spin.setSuffix(translate("ModelPanel", " tokens"))
        self.context_spin.valueChanged.connect(self._on_context_changed)
        self._context_range = (self.context_spin.minimum(), self.context_spin.maximum())
        self._preferred_context = self.settings.chat.context_length
        self._permissions_folder = ""
        form.addRow(translate("ModelPanel", "Conte&xt:"), self.context_spin)
        self.remote_code_check = QCheckBox(
            translate("ModelPanel", "Allow this model's own code (trust_remote_code)")
        )
        self.remote_code_check.setToolTip(
            translate(
                "ModelPanel",
                "Runs Python files from the model folder with your rights. LLaMA models never "
                "need it. Only for repositories you trust.",
            )
        )
        self.remote_code_check.toggled.connect(self.refresh_check)
        form.addRow(self.remote_code_check)
        self.hub_check = QCheckBox(translate("ModelPanel", "Allow Hugging Face hub access"))
        self.hub_check.setToolTip(
            translate(
                "ModelPanel",
                "Off: the worker runs with HF_HUB_OFFLINE=1 and never reaches the network. "
                "Both permissions apply to this folder only and reset when you pick another.",
            )
        )
        self.hub_check.toggled.connect(self.refresh_estimate)
        form.addRow(self.hub_check)
        self.check_label = QLabel(translate("ModelPanel", "Pick a model folder."))
        self.check_label.setWordWrap(True)
        box_column.addWidget(self.check_label)
        # What the workload Python lacks for this precision, with a one-click install.
        # Its label and button are rows of this form (a nested widget's wrapped label was
        # given too little height by the form layout); the box itself is never shown.
        self.packages_box = PackagesBox(ctx, self)
        self.packages_box.hide()
        self.packages_box.checked.connect(self._on_packages_checked)
        self._load_waiting = False  # Load was pressed: the packages are being checked
        box_column.addWidget(self.packages_box.label)
        box_column.addWidget(self.packages_box.install_button)
        buttons = QHBoxLayout()
        self.load_button = QPushButton(translate("ModelPanel", "&Load"))
        self.load_button.clicked.connect(self._request_load)
        self.unload_button = QPushButton(translate("ModelPanel", "&Unload"))
        self.unload_button.clicked.connect(self.unload_requested)
        self.unload_button.setEnabled(False)
        buttons.addWidget(self.load_button)
        buttons.addWidget(self.unload_button)
        box_column.addLayout(buttons)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.hide()
        box_column.addWidget(self.progress)
        self.status_label = QLabel(translate("ModelPanel", "No model loaded."))
        self.status_label.setWordWrap(True)
        box_column.addWidget(self.status_label)
        layout.addWidget(model_box)
        # Next to the loaded model: serving it over HTTP (the tab routes its events).
        self.serve_panel = ServePanel(ctx, self.packages_box)
        layout.addWidget(self.serve_panel)

        self.sampling_box = SamplingBox()
        layout.addWidget(self.sampling_box)

        system_box = QGroupBox(translate("ModelPanel", "System prompt"))
        system_layout = QVBoxLayout(system_box)
        self.system_edit = QPlainTextEdit()
        self.system_edit.setPlaceholderText(
            translate("ModelPanel", "Optional instructions for every reply")
        )
        self.system_edit.setTabChangesFocus(True)
        self.system_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 4 + 12)
        system_layout.addWidget(self.system_edit)
        layout.addWidget(system_box)
        layout.addStretch(1)
        ctx.inventory.changed.connect(self._on_inventory_changed)
        self._restore()
        ctx.inventory.ensure()

    # -- settings ----------------------------------------------------------------------
    def _restore(self) -> None:
        chat = self.settings.chat
        self.sampling_box.restore(chat)
        self.context_spin.setValue(self._preferred_context)
        self.system_edit.setPlainText(chat.system_prompt)
        self.device_combo.setCurrentIndex(max(0, self.device_combo.findData(chat.device.value)))
        if chat.precision is not None:
            self._precision_chosen = True
            self.set_precision(chat.precision)
        else:
            self._apply_default_precision()
        if chat.last_model:
            self.set_folder(chat.last_model)

    def save_settings(self, *, replace_damaged: bool = True) -> None:
        """Keep the chat choices; ``replace_damaged=False`` (the save at close, which the user
        did not ask for) never replaces a settings file that could not be read."""
        chat = self.settings.chat
        try:
            self.sampling_box.save(chat)
            chat.context_length = self._preferred_context
            chat.system_prompt = self.system_edit.toPlainText()
            chat.device = self.device()
            # None: the automatic choice (NF4 on a GPU, bf16 on the CPU), until one is picked.
            chat.precision = self.precision() if self._precision_chosen else None
            chat.last_model = self.folder_edit.text().strip()
            self.settings.save(replace_damaged=replace_damaged)
        except (ValueError, PanelError) as exc:
            report(
                exc, translate("ModelPanel", "Saving the chat settings"), label=self.status_label
            )

    def set_recent(self, models: list[tuple[str, Precision | None]]) -> None:
        self.recent_combo.clear()
        for path, precision in models:
            # Qt keeps a str enum as plain text: the value goes in, parsed back when picked.
            value = precision.value if precision is not None else ""
            self.recent_combo.addItem(Path(path).name or path, (path, value))
            self.recent_combo.setItemData(self.recent_combo.count() - 1, path, 3)  # tooltip
        self.recent_combo.setCurrentIndex(-1)

    # -- values ------------------------------------------------------------------------
    @property
    def has_amd_gpu(self) -> bool:
        """Whether the app's inventory found an AMD GPU (False until it is detected)."""
        inventory = self.ctx.inventory.current
        return inventory is not None and inventory.has_amd_gpu

    def precision(self) -> Precision:
        try:
            return Precision(str(self.precision_combo.currentData()))
        except ValueError:
            return Precision.NF4

    def set_precision(self, precision: Precision) -> None:
        self.precision_combo.setCurrentIndex(self.precision_combo.findData(precision.value))

    def device(self) -> Device:
        return Device.parse(self.device_combo.currentData())

    def estimate_device(self) -> Device:
        """Where the load will land (GPU or CPU), as far as the panel can tell without torch."""
        return estimate_device(self.device(), self.has_amd_gpu)

    def sampling(self) -> Sampling:
        return self.sampling_box.sampling()

    def system_prompt(self) -> str:
        return self.system_edit.toPlainText().strip()

    def load_request(self) -> LoadRequest:
        return LoadRequest(
            path=self.folder_edit.text().strip(),
            precision=self.precision(),
            device=self.device(),
            context_length=self.context_spin.value(),
            trust_remote_code=self.remote_code_check.isChecked(),
        )

    def _on_precision_chosen(self, _index: int) -> None:
        self._precision_chosen = True

    def _apply_default_precision(self) -> None:
        """NF4 when a load lands on an AMD GPU, else bf16, until the user picks one."""
        if not self._precision_chosen:
            self.set_precision(default_precision(self.device(), self.has_amd_gpu))

    def _on_inventory_changed(self, _inventory: object) -> None:
        self._apply_default_precision()
        self.refresh_estimate()

    # -- check and estimate ------------------------------------------------------------
    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self,
            translate("ModelPanel", "Model folder"),
            self.folder_edit.text() or str(Path.home()),
        )
        if folder:
            self.set_folder(folder)

    def _on_recent_activated(self, index: int) -> None:
        data = self.recent_combo.itemData(index)
        if isinstance(data, tuple):
            path, precision = data
            if precision in {p.value for p in Precision}:
                self._precision_chosen = True
                self.set_precision(Precision(precision))
            self.set_folder(path)

    def _on_context_changed(self, value: int) -> None:
        self._preferred_context = value
        self.refresh_estimate()

    def _on_folder_edited(self) -> None:
        if self._check_timer.isActive():  # typing ended: check now rather than later
            self.refresh_check()

    def set_folder(self, folder: str) -> None:
        """Show ``folder`` and check it (in the background; ``check_finished`` follows)."""
        self.folder_edit.setText(folder)
        self.refresh_check()

    def refresh_check(self) -> None:
        """Check the folder now, off the GUI thread; a check still running becomes stale."""
        self._check_timer.stop()
        folder = self.folder_edit.text().strip()
        if folder != self._permissions_folder:
            # Remote code and hub access are granted per model, never carried over.
            self._permissions_folder = folder
            for box in (self.remote_code_check, self.hub_check):
                box.blockSignals(True)
                box.setChecked(False)
                box.blockSignals(False)
        self._check_number += 1
        number = self._check_number
        self.check = None
        self.refresh_estimate()
        if not folder:
            self.check_label.setText(translate("ModelPanel", "Pick a model folder."))
            self.check_finished.emit()
            return
        self.check_label.setText(translate("ModelPanel", "Checking the folder…"))
        trust = self.remote_code_check.isChecked()
        run_in_background(
            lambda: check_model(folder, trust_remote_code=trust),
            lambda check, error: self._on_checked(number, check, error),
            owner=self,
            what=f"checking the model folder {folder}",
        )

    def _on_checked(
        self, number: int, check: ModelCheck | None, error: BaseException | None
    ) -> None:
        if number != self._check_number:
            return  # a newer check was asked for while this one ran
        if error is not None:
            doing = translate("ModelPanel", "Checking the model folder")
            report(error, doing, label=ColouredLabel(self.check_label))
        else:
            self.check = check
            self.refresh_estimate()
        self.check_finished.emit()

    def _budget(self, device: Device) -> Budget:
        if device is Device.CPU:
            return ram_budget()
        return gpu_budget(self.ctx.inventory.current, self.ctx.live_memory)

    def _gpu_rooms(self) -> list[GpuRoom]:
        """The GPUs a chat job gets (the choice the window last read, as jobs get it; before
        that reading, the saved choice among the inventory's GPUs), each with the VRAM the
        Monitor last read for it; empty before the inventory is known."""
        inventory = self.ctx.inventory.current
        if inventory is None:
            return []
        live = self.ctx.live_memory

        def memory_of(gpu: GpuInfo) -> tuple[int | None, int | None]:
            if not gpu.bdf:
                return None, gpu.vram_bytes
            budget = gpu_budget(inventory, live, gpu.bdf)
            return budget.free, budget.total

        choice = self.ctx.gpu_choice.choice
        if choice is not None:
            return rooms_for(choice.gpus, memory_of)
        return chosen_gpu_rooms(inventory.system.gpus, self.settings.general.job_gpus, memory_of)

    def refresh_estimate(self) -> None:
        self.packages_box.set_target(self.precision(), self.estimate_device())
        check = self.check
        self.verdict = None
        if check is None:
            self.load_button.setEnabled(False)
            return
        # The worker caps the context at what the model was trained for; show that here,
        # without forgetting the user's own choice for the next, larger model.
        low, high = self._context_range
        self.context_spin.blockSignals(True)
        self.context_spin.setMaximum(max(low, min(high, check.shape.max_positions or high)))
        self.context_spin.setValue(min(self._preferred_context, self.context_spin.maximum()))
        self.context_spin.blockSignals(False)
        device = self.estimate_device()
        precision = self.precision()
        estimate = estimate_for(check, precision, self.context_spin.value(), device=device)
        if estimate is not None:
            rooms = self._gpu_rooms() if device is Device.GPU else []
            if rooms:  # the job's GPU 0 (cuda:0) is the first chosen one
                first = rooms[0]
                self.verdict = judge_fit(
                    estimate, device, first.free, total=first.total, gpus=rooms
                )
            else:
                budget = self._budget(device)
                self.verdict = judge_fit(estimate, device, budget.free, total=budget.total)
        self.check_label.setText(
            check_summary(
                check,
                hub_access=self.hub_check.isChecked(),
                slow_on_cpu=device is Device.CPU and precision not in CPU_PRECISIONS,
                verdict=self.verdict,
            )
        )
        self.load_button.setEnabled(check.ok)

    def _request_load(self) -> None:
        """Check the workload Python's packages first (they may have been installed or
        removed since the last look); the load is asked for when nothing is missing."""
        if self.check is None or not self.check.ok or self._load_waiting:
            return
        self._load_waiting = True
        self.load_button.setEnabled(False)
        self.status_label.setText(
            translate("ModelPanel", "Checking the workload Python's packages…")
        )
        self.packages_box.refresh()

    def _on_packages_checked(self, ready: bool) -> None:
        if not self._load_waiting:
            return
        self._load_waiting = False
        self.load_button.setEnabled(self.check is not None and self.check.ok)
        if not ready:
            self.set_error(self.packages_box.problem())
            return
        self.status_label.setText(translate("ModelPanel", "No model loaded."))
        if self.check is not None and self.check.ok:
            self.load_requested.emit(self.load_request(), self.hub_check.isChecked())

    # -- the workload Python -----------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Shown (the tab opened): check the packages when the interpreter is new to us."""
        super().showEvent(event)
        self.packages_box.refresh_if_changed()

    def changeEvent(self, event: QEvent) -> None:
        """The window became active again (e.g. the Settings dialog closed): the interpreter
        setting may have changed."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isVisible():
            self.packages_box.refresh_if_changed()

    # -- state from the tab ------------------------------------------------------------
    def set_loading(self, loading: bool) -> None:
        self.progress.setVisible(loading)
        if loading:
            self.progress.setValue(0)
        self.load_button.setEnabled(not loading and self.check is not None and self.check.ok)
        self.browse_button.setEnabled(not loading)

    def set_progress(self, fraction: float | None, step: str) -> None:
        if fraction is None:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 100)
            self.progress.setValue(int(fraction * 100))
        if step:
            text = step_text(step)
            self.status_label.setText(text + "…" if fraction != 1.0 else text)

    def set_loaded(self, model: LoadedModel | None) -> None:
        self.set_loading(False)
        self.unload_button.setEnabled(model is not None)
        if model is None:
            self.status_label.setText(translate("ModelPanel", "No model loaded."))
            return
        kind = "VRAM" if model.memory_kind == "vram" else translate("ModelPanel", "process RSS")
        params = format_count(model.parameters) if model.parameters else "n/a"
        name = html.escape(Path(model.path).name, quote=False)
        device = html.escape(model.device_name, quote=False)
        spread = model.placement_text()
        where = f"<br>{html.escape(spread, quote=False)}." if spread else ""
        self.status_label.setText(
            translate(
                "ModelPanel",
                "Loaded <b>{name}</b>: {precision} on {device}, {params} parameters, "
                "context {context}, in {seconds} s; {memory} {kind}.{where}",
            ).format(
                name=name,
                precision=model.precision.value,
                device=device,
                params=params,
                context=model.context_length,
                seconds=model.load_s,
                memory=format_memory(model.memory_bytes),
                kind=kind,
                where=where,
            )
        )

    def set_error(self, message: str) -> None:
        """A failed load's message, in the status line."""
        ColouredLabel(self.status_label).setText(message)
