"""The chat worker's load steps are shown in the window's language."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QTranslator

from rocmpanel.chat.views.load_steps import step_text

WORKERS = Path(__file__).resolve().parents[3] / "rocmpanel" / "workers"


class Brackets(QTranslator):
    """Answers every lookup of the load steps' context with the source in brackets."""

    def translate(  # type: ignore[override]
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        del disambiguation, n
        return f"[{source}]" if context == "load_steps" else ""


@pytest.fixture
def brackets(qapp: QCoreApplication) -> Iterator[None]:
    translator = Brackets()
    QCoreApplication.installTranslator(translator)
    yield
    QCoreApplication.removeTranslator(translator)


def worker_steps() -> list[str]:
    """Each step the chat worker reports with ``_wire.progress``, its f-string fields filled
    with "2" (what it may send, in shape)."""
    steps = []
    for path in sorted(WORKERS.glob("*chat*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "progress"
                and len(node.args) == 2
            ):
                continue
            text = node.args[1]
            if isinstance(text, ast.Constant) and isinstance(text.value, str):
                steps.append(text.value)
            elif isinstance(text, ast.JoinedStr):
                steps.append(
                    "".join(
                        str(part.value) if isinstance(part, ast.Constant) else "2"
                        for part in text.values
                    )
                )
    return steps


def test_the_worker_reports_load_steps() -> None:
    steps = worker_steps()
    assert "Reading the tokenizer" in steps and "Loading weights (2/2)" in steps


@pytest.mark.usefixtures("brackets")
@pytest.mark.parametrize("step", worker_steps())
def test_every_step_the_worker_sends_is_translated(step: str) -> None:
    shown = step_text(step)
    assert shown.startswith("[") and shown.endswith("]"), shown


@pytest.mark.usefixtures("brackets")
@pytest.mark.parametrize(
    ("step", "shown"),
    [
        ("Loading weights (3/10)", "[Loading weights (3/10)]"),
        ("Loading weights (nf4 on 2 GPUs)", "[Loading weights (nf4 on 2 GPUs)]"),
        ("Loading weights (bf16 on cpu)", "[Loading weights (bf16 on cpu)]"),
        ("Loaded", "[Loaded]"),
        ("Something a newer worker says", "Something a newer worker says"),
    ],
)
def test_steps_keep_their_figures(step: str, shown: str) -> None:
    assert step_text(step) == shown


def test_without_a_translation_the_step_is_as_sent(qapp: QCoreApplication) -> None:
    assert step_text("Loading weights (nf4 on 2 GPUs)") == "Loading weights (nf4 on 2 GPUs)"
