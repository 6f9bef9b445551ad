"""What the model panel says about a checked folder, as rich text: its facts, problems and
warnings, the permissions granted, and the memory verdict with its parts."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QLabel

from rocmpanel.base.i18n import translate
from rocmpanel.base.units import format_count, format_memory
from rocmpanel.chat.memory_estimate import Fit, FitVerdict
from rocmpanel.chat.model_check import ModelCheck

FIT_COLOURS = {
    Fit.FITS: "#2d7a3a",
    Fit.SPREAD: "#2d7a3a",
    Fit.TIGHT: "#a86a00",
    Fit.WONT_FIT: "#b00020",
}
ERROR_COLOUR = "#b00020"
WARNING_COLOUR = "#a86a00"


def coloured(text: str, colour: str) -> str:
    """Plain ``text`` (escaped, quotes kept as they are) in a colour."""
    return f'<span style="color:{colour}">{html.escape(text, quote=False)}</span>'


class ColouredLabel:
    """A rich-text label as a target for :func:`rocmpanel.gui.report.report`: the message
    shows escaped and in a colour."""

    def __init__(self, label: QLabel, colour: str = ERROR_COLOUR) -> None:
        self._label, self._colour = label, colour

    def setText(self, text: str, /) -> None:
        self._label.setText(coloured(text, self._colour))


def check_summary(
    check: ModelCheck,
    *,
    hub_access: bool,
    slow_on_cpu: bool,
    verdict: FitVerdict | None,
) -> str:
    """The check label's text for ``check`` (``verdict``: None when the size is unknown)."""
    architecture = check.architecture or translate("check_summary", "unknown architecture")
    name = html.escape(architecture, quote=False)
    params = format_count(check.parameters) if check.parameters else "n/a"
    lines = [
        translate("check_summary", "<b>{name}</b>, {params} parameters, {size} on disk").format(
            name=name, params=params, size=format_memory(check.weight_bytes)
        )
    ]
    lines += [coloured(problem, ERROR_COLOUR) for problem in check.problems]
    lines += [coloured(warning, WARNING_COLOUR) for warning in check.warnings]
    if hub_access:
        lines.append(
            coloured(
                translate(
                    "check_summary",
                    "Hub access is on for this model: transformers may contact huggingface.co "
                    "and download files it finds missing.",
                ),
                WARNING_COLOUR,
            )
        )
    if slow_on_cpu:
        lines.append(
            coloured(
                translate(
                    "check_summary",
                    "fp16 on the CPU is slow; bf16 or fp32 work better there, NF4/int8 run "
                    "through bitsandbytes' CPU kernels.",
                ),
                WARNING_COLOUR,
            )
        )
    if verdict is not None:
        estimate = verdict.estimate
        parts = translate(
            "check_summary", " (weights {weights}, KV cache {kv_cache}, overhead {overhead})"
        ).format(
            weights=format_memory(estimate.weights),
            kv_cache=format_memory(estimate.kv_cache),
            overhead=format_memory(estimate.overhead),
        )
        lines.append(coloured(verdict.message, FIT_COLOURS.get(verdict.fit, "#444444")) + parts)
    return "<br>".join(lines)
