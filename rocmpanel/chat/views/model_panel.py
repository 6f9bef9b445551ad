"""The model side of the Chat tab: pick, check, estimate, load/unload, sampling, system prompt.

Picking a folder checks it at once (config, safetensors, tokenizer, template, custom code)
and estimates the memory for the chosen precision and context against free VRAM (sysfs) or
RAM; the verdict is shown before Load is pressed, and a load that cannot fit asks first.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.enums import Device
from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.chat.memory_estimate import (
    CPU_PRECISIONS,
    Fit,
    FitVerdict,
    Precision,
    estimate_for,
    judge_device,
    read_amd_vram,
)
from rocmpanel.chat.model_check import ModelCheck, check_model, format_bytes, format_count
from rocmpanel.chat.protocol import LoadedModel, LoadRequest, Sampling

FIT_COLOURS = {Fit.FITS: "#2d7a3a", Fit.TIGHT: "#a86a00", Fit.WONT_FIT: "#b00020"}
DEVICES = (("auto", "Auto (GPU when torch sees one)"), ("cuda", "GPU"), ("cpu", "CPU"))


class ModelPanel(QWidget):
    """Emits ``load_requested(LoadRequest, allow_hub)`` and ``unload_requested()``."""

    load_requested = Signal(object, bool)
    unload_requested = Signal()

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.check: ModelCheck | None = None
        self.verdict: FitVerdict | None = None
        self.has_amd_gpu = bool(read_amd_vram())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

        model_box = QGroupBox("Model")
        form = QFormLayout(model_box)
        folder_row = QHBoxLayout()
        self.folder_edit = QLineEdit()
        self.folder_edit.setPlaceholderText("Hugging Face model folder")
        self.folder_edit.editingFinished.connect(self.refresh_check)
        folder_row.addWidget(self.folder_edit, 1)
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self._browse)
        folder_row.addWidget(self.browse_button)
        folder_label = QLabel("F&older:")
        folder_label.setBuddy(self.folder_edit)
        form.addRow(folder_label, folder_row)
        self.recent_combo = QComboBox()
        self.recent_combo.setPlaceholderText("Recent models")
        self.recent_combo.activated.connect(self._on_recent_activated)
        form.addRow("Re&cent:", self.recent_combo)
        self.precision_combo = QComboBox()
        for precision in Precision:
            self.precision_combo.addItem(
                precision.label, precision.value
            )  # Qt keeps str enums as text
        self.precision_combo.setToolTip(
            "How the weights are held. On a GPU: NF4 (default), 8-bit, fp16, bf16, fp32. "
            "On the CPU: bf16 (default) and fp32, and NF4/8-bit through bitsandbytes' CPU "
            "kernels (slower per token, but a quarter/half of the memory); fp16 is slow there."
        )
        self.precision_combo.currentIndexChanged.connect(self.refresh_estimate)
        form.addRow("&Precision:", self.precision_combo)
        self.device_combo = QComboBox()
        for key, label in DEVICES:
            self.device_combo.addItem(label, key)
        self.device_combo.currentIndexChanged.connect(self.refresh_estimate)
        form.addRow("&Device:", self.device_combo)
        self.context_spin = QSpinBox()
        self.context_spin.setRange(256, 1_048_576)
        self.context_spin.setSingleStep(512)
        self.context_spin.setSuffix(" tokens")
        self.context_spin.valueChanged.connect(self._on_context_changed)
        self._preferred_context = 4096
        self._permissions_folder = ""
        form.addRow("Conte&xt:", self.context_spin)
        self.remote_code_check = QCheckBox("Allow this model's own code (trust_remote_code)")
        self.remote_code_check.setToolTip(
            "Runs Python files from the model folder with your rights. LLaMA models never "
            "need it. Only for repositories you trust."
        )
        self.remote_code_check.toggled.connect(self.refresh_check)
        form.addRow(self.remote_code_check)
        self.hub_check = QCheckBox("Allow Hugging Face hub access")
        self.hub_check.setToolTip(
            "Off: the worker runs with HF_HUB_OFFLINE=1 and never reaches the network. "
            "Both permissions apply to this folder only and reset when you pick another."
        )
        self.hub_check.toggled.connect(self.refresh_estimate)
        form.addRow(self.hub_check)
        self.check_label = QLabel("Pick a model folder.")
        self.check_label.setWordWrap(True)
        form.addRow(self.check_label)
        buttons = QHBoxLayout()
        self.load_button = QPushButton("&Load")
        self.load_button.clicked.connect(self._request_load)
        self.unload_button = QPushButton("&Unload")
        self.unload_button.clicked.connect(self.unload_requested)
        self.unload_button.setEnabled(False)
        buttons.addWidget(self.load_button)
        buttons.addWidget(self.unload_button)
        form.addRow(buttons)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.hide()
        form.addRow(self.progress)
        self.status_label = QLabel("No model loaded.")
        self.status_label.setWordWrap(True)
        form.addRow(self.status_label)
        layout.addWidget(model_box)

        sampling_box = QGroupBox("Sampling")
        sform = QFormLayout(sampling_box)
        self.temperature_spin = self._double(0.0, 5.0, 0.05, "0 = greedy (always the likeliest)")
        sform.addRow("Te&mperature:", self.temperature_spin)
        self.top_p_spin = self._double(0.0, 1.0, 0.01, "Nucleus sampling threshold")
        sform.addRow("Top-p:", self.top_p_spin)
        self.top_k_spin = QSpinBox()
        self.top_k_spin.setRange(0, 100_000)
        sform.addRow("Top-&k:", self.top_k_spin)
        self.repetition_spin = self._double(0.5, 3.0, 0.01, "1.0 = no penalty")
        sform.addRow("Repetition penalt&y:", self.repetition_spin)
        self.max_new_spin = QSpinBox()
        self.max_new_spin.setRange(1, 65_536)
        sform.addRow("Max ne&w tokens:", self.max_new_spin)
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(-1, 2**31 - 1)
        self.seed_spin.setSpecialValueText("random")
        sform.addRow("Seed:", self.seed_spin)
        layout.addWidget(sampling_box)

        system_box = QGroupBox("System prompt")
        system_layout = QVBoxLayout(system_box)
        self.system_edit = QPlainTextEdit()
        self.system_edit.setPlaceholderText("Optional instructions for every reply")
        self.system_edit.setTabChangesFocus(True)
        self.system_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 4 + 12)
        system_layout.addWidget(self.system_edit)
        layout.addWidget(system_box)
        layout.addStretch(1)
        self._restore()

    @staticmethod
    def _double(low: float, high: float, step: float, tip: str) -> QDoubleSpinBox:
        spin = QDoubleSpinBox()
        spin.setRange(low, high)
        spin.setSingleStep(step)
        spin.setDecimals(2)
        spin.setToolTip(tip)
        return spin

    # -- settings ----------------------------------------------------------------------
    def _restore(self) -> None:
        s = self.settings
        self.temperature_spin.setValue(float(s.chat.temperature))
        self.top_p_spin.setValue(float(s.chat.top_p))
        self.top_k_spin.setValue(int(s.chat.top_k))
        self.repetition_spin.setValue(float(s.chat.repetition_penalty))
        self.max_new_spin.setValue(int(s.chat.max_new_tokens))
        self.seed_spin.setValue(int(s.chat.seed))
        self._preferred_context = s.chat.context_length
        self.context_spin.setValue(self._preferred_context)
        self.system_edit.setPlainText(str(s.chat.system_prompt))
        device = "auto" if s.chat.device is Device.AUTO else s.chat.device.torch_name
        self.device_combo.setCurrentIndex(max(0, self.device_combo.findData(device)))
        default = Precision.NF4 if self.has_amd_gpu else Precision.BF16
        precision = s.chat.precision or default
        self.precision_combo.setCurrentIndex(self.precision_combo.findData(precision.value))
        last = s.chat.last_model
        if last:
            self.folder_edit.setText(last)
            self.refresh_check()

    def save_settings(self) -> None:
        s = self.settings
        try:
            s.chat.temperature = self.temperature_spin.value()
            s.chat.top_p = self.top_p_spin.value()
            s.chat.top_k = self.top_k_spin.value()
            s.chat.repetition_penalty = self.repetition_spin.value()
            s.chat.max_new_tokens = self.max_new_spin.value()
            s.chat.seed = self.seed_spin.value()
            s.chat.context_length = self._preferred_context
            s.chat.system_prompt = self.system_edit.toPlainText()
            s.chat.device = Device.parse(self.device_combo.currentData())
            s.chat.precision = self.precision()
            s.chat.last_model = self.folder_edit.text().strip()
            s.save()
        except (ValueError, PanelError) as exc:
            self.status_label.setText(f"Settings not saved: {exc}")

    def set_recent(self, models: list[tuple[str, str]]) -> None:
        self.recent_combo.clear()
        for path, precision in models:
            self.recent_combo.addItem(Path(path).name or path, (path, precision))
            self.recent_combo.setItemData(self.recent_combo.count() - 1, path, 3)  # tooltip
        self.recent_combo.setCurrentIndex(-1)

    # -- values ------------------------------------------------------------------------
    def precision(self) -> Precision:
        data = self.precision_combo.currentData()
        try:
            return Precision(str(data))
        except ValueError:
            return Precision.NF4

    def set_precision(self, precision: Precision) -> None:
        self.precision_combo.setCurrentIndex(self.precision_combo.findData(precision.value))

    def device(self) -> str:
        return str(self.device_combo.currentData())

    def estimate_device(self) -> str:
        """Where the load will land, as far as the panel can tell without torch."""
        device = self.device()
        if device == "auto":
            return "gpu" if self.has_amd_gpu else "cpu"
        return "gpu" if device == "cuda" else "cpu"

    def sampling(self) -> Sampling:
        return Sampling(
            temperature=self.temperature_spin.value(),
            top_p=self.top_p_spin.value(),
            top_k=self.top_k_spin.value(),
            repetition_penalty=self.repetition_spin.value(),
            max_new_tokens=self.max_new_spin.value(),
            seed=self.seed_spin.value(),
        )

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

    # -- check and estimate ------------------------------------------------------------
    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Model folder", self.folder_edit.text() or str(Path.home())
        )
        if folder:
            self.set_folder(folder)

    def _on_recent_activated(self, index: int) -> None:
        data = self.recent_combo.itemData(index)
        if isinstance(data, tuple):
            path, precision = data
            if precision in {p.value for p in Precision}:
                self.set_precision(Precision(precision))
            self.set_folder(path)

    def _on_context_changed(self, value: int) -> None:
        self._preferred_context = value
        self.refresh_estimate()

    def set_folder(self, folder: str) -> None:
        self.folder_edit.setText(folder)
        self.refresh_check()

    def refresh_check(self) -> None:
        folder = self.folder_edit.text().strip()
        if folder != self._permissions_folder:
            # Remote code and hub access are granted per model, never carried over.
            self._permissions_folder = folder
            for box in (self.remote_code_check, self.hub_check):
                box.blockSignals(True)
                box.setChecked(False)
                box.blockSignals(False)
        self.check = None
        if not folder:
            self.check_label.setText("Pick a model folder.")
            self.refresh_estimate()
            return
        try:
            self.check = check_model(folder, trust_remote_code=self.remote_code_check.isChecked())
        except PanelError as exc:
            self.check_label.setText(f'<span style="color:#b00020">{exc.message}</span>')
            self.refresh_estimate()
            return
        self.refresh_estimate()

    def refresh_estimate(self) -> None:
        check = self.check
        self.verdict = None
        if check is None:
            self.load_button.setEnabled(False)
            return
        lines = [
            f"<b>{check.architecture or 'unknown architecture'}</b>, "
            f"{format_count(check.parameters) if check.parameters else 'n/a'} parameters, "
            f"{format_bytes(check.weight_bytes)} on disk",
        ]
        lines += [f'<span style="color:#b00020">{p}</span>' for p in check.problems]
        lines += [f'<span style="color:#a86a00">{w}</span>' for w in check.warnings]
        if self.hub_check.isChecked():
            lines.append(
                '<span style="color:#a86a00">Hub access is on for this model: transformers '
                "may contact huggingface.co and download files it finds missing.</span>"
            )
        # The worker caps the context at what the model was trained for; show that here,
        # without forgetting the user's own choice for the next, larger model.
        self.context_spin.blockSignals(True)
        self.context_spin.setMaximum(max(256, check.shape.max_positions or 1_048_576))
        self.context_spin.setValue(min(self._preferred_context, self.context_spin.maximum()))
        self.context_spin.blockSignals(False)
        device = self.estimate_device()
        precision = self.precision()
        if device == "cpu" and precision not in CPU_PRECISIONS:
            lines.append(
                '<span style="color:#a86a00">fp16 on the CPU is slow; bf16 or fp32 work '
                "better there, NF4/int8 run through bitsandbytes' CPU kernels.</span>"
            )
        estimate = estimate_for(check, precision, self.context_spin.value(), device=device)
        if estimate is not None:
            self.verdict = judge_device(estimate, device)
            colour = FIT_COLOURS.get(self.verdict.fit, "#444444")
            lines.append(
                f'<span style="color:{colour}">{self.verdict.message}</span> '
                f"(weights {format_bytes(estimate.weights)}, KV cache "
                f"{format_bytes(estimate.kv_cache)}, overhead {format_bytes(estimate.overhead)})"
            )
        self.check_label.setText("<br>".join(lines))
        self.load_button.setEnabled(check.ok)

    def _request_load(self) -> None:
        if self.check is None or not self.check.ok:
            return
        self.load_requested.emit(self.load_request(), self.hub_check.isChecked())

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
            self.status_label.setText(step + "…" if fraction != 1.0 else step)

    def set_loaded(self, model: LoadedModel | None) -> None:
        self.set_loading(False)
        self.unload_button.setEnabled(model is not None)
        if model is None:
            self.status_label.setText("No model loaded.")
            return
        memory = format_bytes(model.memory_bytes)
        kind = "VRAM" if model.memory_kind == "vram" else "process RSS"
        params = format_count(model.parameters) if model.parameters else "n/a"
        self.status_label.setText(
            f"Loaded <b>{Path(model.path).name}</b>: {model.precision} on {model.device_name}, "
            f"{params} parameters, context {model.context_length}, in {model.load_s} s; "
            f"{memory} {kind}."
        )

    def set_status(self, text: str) -> None:
        self.status_label.setText(text)
