"""The Sampling box of the Chat tab: temperature, top-p, top-k, repetition penalty, length,
seed. Each spin box takes its range from the option's declaration in
:class:`rocmpanel.base.settings.ChatSettings`, the one place defaults and ranges live."""

from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QGroupBox, QSpinBox, QWidget

from rocmpanel.base.i18n import translate
from rocmpanel.base.settings import ChatSettings, Option, option_of
from rocmpanel.chat.protocol import Sampling

INT_LIMIT = 2**31 - 1  # what a QSpinBox holds


def _limits(opt: Option) -> tuple[float, float]:
    low = opt.minimum if opt.minimum is not None else -INT_LIMIT
    high = opt.maximum if opt.maximum is not None else INT_LIMIT
    return low, high


def _tip(opt: Option, tip: str) -> str:
    """The option's declared help (marked in the "Settings" context, as the Settings dialog
    shows it), else ``tip`` (already in the window's language)."""
    return translate("Settings", opt.help) if opt.help else tip


def int_spin(name: str, tip: str = "") -> QSpinBox:
    """A spin box for ChatSettings' integer option ``name``, within its declared range."""
    opt = option_of(ChatSettings, name)
    low, high = _limits(opt)
    spin = QSpinBox()
    spin.setRange(int(low), int(min(high, INT_LIMIT)))
    spin.setToolTip(_tip(opt, tip))
    return spin


def double_spin(name: str, step: float, tip: str = "") -> QDoubleSpinBox:
    """A spin box for ChatSettings' float option ``name``, within its declared range."""
    opt = option_of(ChatSettings, name)
    low, high = _limits(opt)
    spin = QDoubleSpinBox()
    spin.setRange(low, high)
    spin.setSingleStep(step)
    spin.setDecimals(2)
    spin.setToolTip(_tip(opt, tip))
    return spin


class SamplingBox(QGroupBox):
    """How the next token is picked; ``sampling()`` reads the values."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(translate("SamplingBox", "Sampling"), parent)
        form = QFormLayout(self)
        self.temperature_spin = double_spin(
            "temperature", 0.05, translate("SamplingBox", "0 = greedy (always the likeliest)")
        )
        form.addRow(translate("SamplingBox", "Te&mperature:"), self.temperature_spin)
        self.top_p_spin = double_spin(
            "top_p", 0.01, translate("SamplingBox", "Nucleus sampling threshold")
        )
        form.addRow(translate("SamplingBox", "Top-p:"), self.top_p_spin)
        self.top_k_spin = int_spin("top_k")
        form.addRow(translate("SamplingBox", "Top-&k:"), self.top_k_spin)
        self.repetition_spin = double_spin(
            "repetition_penalty", 0.01, translate("SamplingBox", "1.0 = no penalty")
        )
        form.addRow(translate("SamplingBox", "Repetition penalt&y:"), self.repetition_spin)
        self.max_new_spin = int_spin("max_new_tokens")
        form.addRow(translate("SamplingBox", "Max ne&w tokens:"), self.max_new_spin)
        self.seed_spin = int_spin("seed")
        self.seed_spin.setSpecialValueText(translate("SamplingBox", "random"))
        form.addRow(translate("SamplingBox", "Seed:"), self.seed_spin)

    def restore(self, chat: ChatSettings) -> None:
        self.temperature_spin.setValue(chat.temperature)
        self.top_p_spin.setValue(chat.top_p)
        self.top_k_spin.setValue(chat.top_k)
        self.repetition_spin.setValue(chat.repetition_penalty)
        self.max_new_spin.setValue(chat.max_new_tokens)
        self.seed_spin.setValue(chat.seed)

    def save(self, chat: ChatSettings) -> None:
        """Put the values into ``chat`` (ValueError when one does not fit its declaration)."""
        chat.temperature = self.temperature_spin.value()
        chat.top_p = self.top_p_spin.value()
        chat.top_k = self.top_k_spin.value()
        chat.repetition_penalty = self.repetition_spin.value()
        chat.max_new_tokens = self.max_new_spin.value()
        chat.seed = self.seed_spin.value()

    def sampling(self) -> Sampling:
        return Sampling(
            temperature=self.temperature_spin.value(),
            top_p=self.top_p_spin.value(),
            top_k=self.top_k_spin.value(),
            repetition_penalty=self.repetition_spin.value(),
            max_new_tokens=self.max_new_spin.value(),
            seed=self.seed_spin.value(),
        )
