"""The preset editor's torch settings: one typed widget per key of ``TORCH_SETTINGS``, each
"not set" until chosen (a preset carries only what it sets), each with a "?" that shows
what the tuning items say about it."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QToolButton,
    QWidget,
)

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate

NOT_SET = QT_TRANSLATE_NOOP("TorchForm", "(not set)")
#: What a number shows when its box is ticked: a sensible start, not the range's bottom.
DEFAULT_FRACTION = 0.9
DEFAULT_GC_THRESHOLD = 0.8
DEFAULT_MAX_SPLIT_MB = 512
#: torch's own values (torch.set_float32_matmul_precision, the SDPA backends): shown as
#: written, in every language.
PRECISIONS = ("highest", "high", "medium")
SDPA = ("flash", "mem_efficient", "math")
#: On/off combos: index 1 is on, 2 off (0 is "not set"); the value never reads the text.
ON_OFF = (QT_TRANSLATE_NOOP("TorchForm", "on"), QT_TRANSLATE_NOOP("TorchForm", "off"))
#: TunableOp's choices as the combo lists them after "not set" (label, the preset's value).
TUNABLEOP: tuple[tuple[str, dict[str, bool]], ...] = (
    (
        QT_TRANSLATE_NOOP("TorchForm", "enabled, tuning new shapes"),
        {"enabled": True, "tuning": True},
    ),
    (
        QT_TRANSLATE_NOOP("TorchForm", "enabled, known shapes only"),
        {"enabled": True, "tuning": False},
    ),
    (QT_TRANSLATE_NOOP("TorchForm", "disabled"), {"enabled": False}),
)


class Optional:
    """A number that is set only while its box is ticked."""

    def __init__(self, box: QCheckBox, spin: QSpinBox | QDoubleSpinBox) -> None:
        self.box, self.spin = box, spin
        spin.setEnabled(False)
        box.toggled.connect(spin.setEnabled)

    def value(self) -> Any:
        return self.spin.value() if self.box.isChecked() else None

    def set(self, value: Any) -> None:
        self.box.setChecked(value is not None)
        if value is not None:
            self.spin.setValue(value)


def _on_off(combo: QComboBox, value: Any) -> None:
    combo.setCurrentIndex(0 if value is None else (1 if value else 2))


def _tunableop_index(tunable: Any) -> int:
    if tunable is None:
        return 0
    if not tunable.get("enabled"):
        return 3
    return 1 if tunable.get("tuning", True) else 2


class TorchForm(QGroupBox):
    """``changed`` follows every edit; ``help_requested(key)`` a click on a "?"."""

    changed = Signal()
    help_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            translate("TorchForm", "Torch settings (applied by rocmpanel's workers)"), parent
        )
        self.help_buttons: dict[str, QToolButton] = {}
        form = QFormLayout(self)
        not_set = translate("TorchForm", NOT_SET)
        on_off = [translate("TorchForm", text) for text in ON_OFF]
        self.precision_combo = self._combo([not_set, *PRECISIONS])
        form.addRow(
            self._label(
                translate("TorchForm", "float32 matmul &precision:"),
                "float32_matmul_precision",
                self.precision_combo,
            ),
            self.precision_combo,
        )
        sdpa = QHBoxLayout()
        self.sdpa_limit = QCheckBox(translate("TorchForm", "only these:"), self)
        self.sdpa_boxes = {name: QCheckBox(name, self) for name in SDPA}
        for box in (self.sdpa_limit, *self.sdpa_boxes.values()):
            box.toggled.connect(self.changed)
            sdpa.addWidget(box)
        sdpa.addStretch(1)
        form.addRow(
            self._label(
                translate("TorchForm", "SDPA &backends:"), "sdpa_backends", self.sdpa_limit
            ),
            sdpa,
        )
        self.fraction = self._optional(QDoubleSpinBox(self), 0.05, 1.0, 0.05, DEFAULT_FRACTION)
        form.addRow(
            self._label(
                translate("TorchForm", "Memory frac&tion:"), "memory_fraction", self.fraction.box
            ),
            self._row(self.fraction),
        )
        self.benchmark_combo = self._combo([not_set, *on_off])
        form.addRow(
            self._label(
                translate("TorchForm", "cudnn/MIOpen benc&hmark:"),
                "cudnn_benchmark",
                self.benchmark_combo,
            ),
            self.benchmark_combo,
        )
        self.threads = self._optional(QSpinBox(self), 1, 1024, 1, os.cpu_count() or 1)
        form.addRow(
            self._label(translate("TorchForm", "CP&U threads:"), "cpu_threads", self.threads.box),
            self._row(self.threads),
        )
        self.expandable_combo = self._combo([not_set, *on_off])
        self.gc_threshold = self._optional(
            QDoubleSpinBox(self), 0.05, 0.95, 0.05, DEFAULT_GC_THRESHOLD
        )
        self.max_split = self._optional(QSpinBox(self), 20, 1 << 20, 64, DEFAULT_MAX_SPLIT_MB)
        self.gc_threshold.box.setText(translate("TorchForm", "GC threshold"))
        self.max_split.box.setText(translate("TorchForm", "max split MB"))
        alloc = QHBoxLayout()
        alloc.addWidget(QLabel(translate("TorchForm", "expandable segments"), self))
        for widget in (
            self.expandable_combo,
            self.gc_threshold.box,
            self.gc_threshold.spin,
            self.max_split.box,
            self.max_split.spin,
        ):
            alloc.addWidget(widget)
        alloc.addStretch(1)
        form.addRow(
            self._label(translate("TorchForm", "A&llocator:"), "alloc", self.expandable_combo),
            alloc,
        )
        self.tunableop_combo = self._combo(
            [not_set, *(translate("TorchForm", label) for label, _value in TUNABLEOP)]
        )
        form.addRow(
            self._label("Tunable&Op:", "tunableop", self.tunableop_combo), self.tunableop_combo
        )

    def _combo(self, texts: list[str]) -> QComboBox:
        combo = QComboBox(self)
        combo.addItems(texts)
        combo.currentIndexChanged.connect(self.changed)
        return combo

    def _label(self, text: str, key: str, buddy: QWidget) -> QWidget:
        """The row's label (its mnemonic focuses ``buddy``) and its "?"."""
        box = QWidget(self)
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        label = QLabel(text, box)
        label.setBuddy(buddy)
        row.addWidget(label)
        button = QToolButton(box)
        button.setText("?")
        button.setToolTip(
            translate("TorchForm", "What the tuning items say about {key}").format(key=key)
        )
        button.clicked.connect(lambda _checked=False: self.help_requested.emit(key))
        self.help_buttons[key] = button
        row.addWidget(button)
        return box

    def _optional(
        self, spin: QSpinBox | QDoubleSpinBox, low: float, high: float, step: float, start: float
    ) -> Optional:
        spin.setRange(low, high)  # type: ignore[arg-type]
        spin.setSingleStep(step)  # type: ignore[arg-type]
        spin.setValue(start)  # type: ignore[arg-type]
        box = QCheckBox(translate("TorchForm", "set"), self)
        spin.valueChanged.connect(self.changed)
        box.toggled.connect(self.changed)
        return Optional(box, spin)

    @staticmethod
    def _row(optional: Optional) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(optional.box)
        row.addWidget(optional.spin)
        row.addStretch(1)
        return row

    def values(self) -> dict[str, Any]:
        """The settings chosen, as a preset file writes their values."""
        values: dict[str, Any] = {}
        if self.precision_combo.currentIndex() > 0:
            values["float32_matmul_precision"] = PRECISIONS[self.precision_combo.currentIndex() - 1]
        if self.sdpa_limit.isChecked():
            values["sdpa_backends"] = [n for n, box in self.sdpa_boxes.items() if box.isChecked()]
        if self.fraction.value() is not None:
            values["memory_fraction"] = round(float(self.fraction.value()), 4)
        if self.benchmark_combo.currentIndex() > 0:
            values["cudnn_benchmark"] = self.benchmark_combo.currentIndex() == 1
        if self.threads.value() is not None:
            values["cpu_threads"] = int(self.threads.value())
        alloc: dict[str, Any] = {}
        if self.expandable_combo.currentIndex() > 0:
            alloc["expandable_segments"] = self.expandable_combo.currentIndex() == 1
        if self.gc_threshold.value() is not None:
            alloc["garbage_collection_threshold"] = round(float(self.gc_threshold.value()), 4)
        if self.max_split.value() is not None:
            alloc["max_split_size_mb"] = int(self.max_split.value())
        if alloc:
            values["alloc"] = alloc
        if self.tunableop_combo.currentIndex() > 0:
            values["tunableop"] = dict(TUNABLEOP[self.tunableop_combo.currentIndex() - 1][1])
        return values

    def fill(self, torch: dict[str, Any]) -> None:
        """Show ``torch`` (key -> value); a key absent is "not set"."""
        precision = torch.get("float32_matmul_precision")
        self.precision_combo.setCurrentIndex(
            PRECISIONS.index(precision) + 1 if precision in PRECISIONS else 0
        )
        sdpa = torch.get("sdpa_backends")
        self.sdpa_limit.setChecked(sdpa is not None)
        for name, box in self.sdpa_boxes.items():
            box.setChecked(sdpa is not None and name in sdpa)
        self.fraction.set(torch.get("memory_fraction"))
        _on_off(self.benchmark_combo, torch.get("cudnn_benchmark"))
        self.threads.set(torch.get("cpu_threads"))
        alloc = torch.get("alloc") or {}
        _on_off(self.expandable_combo, alloc.get("expandable_segments"))
        self.gc_threshold.set(alloc.get("garbage_collection_threshold"))
        self.max_split.set(alloc.get("max_split_size_mb"))
        self.tunableop_combo.setCurrentIndex(_tunableop_index(torch.get("tunableop")))
